"""The fake Bot API's ``editMessageText`` and ``editMessageReplyMarkup`` (#updating-messages),
with Telegram's checks in the order the real Bot API meets them (telegram-bot-api's
``process_edit_message_*_query`` and ``check_message``, then TDLib, then Telegram's servers;
docs/sandbox.md, "Editing messages"):

    text empty / parse_mode / HTML (editMessageText) -> reply_markup JSON -> which message
    (``message identifier is not specified``) -> chat_id / chat (not found, migrated, bot removed
    from a group) -> ``message to edit not found`` -> ``message can't be edited`` (not this bot's)
    -> empty after parsing / too long -> ``inline keyboard expected`` -> buttons (servers) ->
    blocked by the person -> ``message is not modified`` -> edited and recorded

An edit replaces the whole message: editMessageText without ``reply_markup`` removes the buttons,
as Telegram does, and editMessageReplyMarkup without it removes them too. The answer is the
edited Message, ``edit_date`` set. Inline messages are not modelled (every ``inline_message_id`` is
wrong), nor are edits' own flood limits.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .http import Response
from .telegram_errors import TelegramError, bad_request, ok
from .telegram_markup import Markup, check_on_server, parse_reply_markup
from .telegram_messages import bot_message
from .telegram_model import Bot, Chat, Edit, SentMessage
from .telegram_params import integer_arg
from .telegram_send import (
    blocked_description,
    link_preview_disabled,
    read_text,
    resolve_chat,
    visible_text,
)

if TYPE_CHECKING:
    from .telegram_fake import Fake

NOT_MODIFIED = ("message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message")


def edit_message_text(fake: Fake, bot: Bot, params: dict[str, str]) -> Response:
    raw_text, parse_mode, plain, entities = read_text(fake, params)
    markup = parse_reply_markup(params.get("reply_markup"))
    chat, message = _editable(fake, bot, params)
    plain, entities = visible_text(fake, plain, entities)
    _check_markup(markup, chat)
    edited = replace(message, text=raw_text, parse_mode=parse_mode, plain_text=plain,
                     entities=tuple(entities), reply_markup=markup.inline,
                     preview_disabled=link_preview_disabled(params))
    return _apply(fake, bot, chat, message, edited, "editMessageText")


def edit_message_reply_markup(fake: Fake, bot: Bot, params: dict[str, str]) -> Response:
    markup = parse_reply_markup(params.get("reply_markup"))
    chat, message = _editable(fake, bot, params)
    _check_markup(markup, chat)
    edited = replace(message, reply_markup=markup.inline)
    return _apply(fake, bot, chat, message, edited, "editMessageReplyMarkup")


def _editable(fake: Fake, bot: Bot, params: dict[str, str]) -> tuple[Chat, SentMessage]:
    chat_id = params.get("chat_id", "")
    message_id = integer_arg(params, "message_id", 0, 0)
    if not chat_id.strip() and message_id == 0:
        if not params.get("inline_message_id"):
            raise bad_request("message identifier is not specified")
        raise bad_request("wrong inline message identifier specified")
    chat = resolve_chat(fake.chats, chat_id)
    if chat.blocked and chat.type != "private":  # the Bot API checks a group's access first
        raise TelegramError(403, blocked_description(chat))
    message = fake.find_message(chat.id, message_id) if message_id > 0 else None
    if message is None:
        raise bad_request("message to edit not found")
    if not isinstance(message, SentMessage) or message.bot_id != bot.id:
        raise bad_request("message can't be edited")
    return chat, message


def _check_markup(markup: Markup, chat: Chat) -> None:
    if markup.other:
        raise bad_request("inline keyboard expected")
    check_on_server(markup.inline)
    if chat.blocked:
        raise TelegramError(403, blocked_description(chat))


def _apply(fake: Fake, bot: Bot, chat: Chat, before: SentMessage, after: SentMessage,
           method: str) -> Response:
    def content(message: SentMessage) -> tuple:
        return message.plain_text, message.entities, message.reply_markup

    if content(after) == content(before):
        raise bad_request(NOT_MODIFIED)
    now = int(fake.clock.time())
    after = replace(after, edit_date=now)
    fake.record_edit(Edit(method, chat.id, before.message_id, bot.id, now, before, after))
    return ok(bot_message(bot, chat, after))
