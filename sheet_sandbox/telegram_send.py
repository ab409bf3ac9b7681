"""The fake Bot API's ``sendMessage``: Telegram's checks, in the order the real Bot API applies
them (its HTTP front, then TDLib locally, then Telegram's servers):

    parameters -> empty text -> parse_mode -> HTML entities -> reply_markup -> chat_id -> chat
    (not found / migrated) -> topic -> empty after parsing -> length -> buttons (Telegram's
    servers) -> blocked -> forced 429 -> flood control -> accepted and recorded

so one request gets the error Telegram would give first. Called by ``FakeTelegram`` under its
lock, after the token and the method were checked.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from .http import Response
from .telegram_errors import TelegramError, bad_request, ok, too_many_requests
from .telegram_html import HTMLParseError, parse_html
from .telegram_limits import Window
from .telegram_markup import check_on_server, parse_reply_markup
from .telegram_messages import bot_message
from .telegram_model import Bot, Chat, SentMessage

if TYPE_CHECKING:
    from .telegram_fake import Fake

MAX_MESSAGE_LENGTH = 4096  # Unicode code points after entity parsing (TDLib: utf8_length > max)
_TRIMMED = " \t\r\n\x0b\x0c"


def send_message(fake: Fake, bot: Bot, params: dict[str, str]) -> Response:
    """Accept and record the message ``params`` describe, or raise the TelegramError Telegram
    would answer first."""
    raw_text, parse_mode, plain, entities = read_text(fake, params)
    markup = parse_reply_markup(params.get("reply_markup"))
    chat = resolve_chat(fake.chats, params.get("chat_id", ""))
    thread_id = _thread(chat, params.get("message_thread_id"))
    plain, entities = visible_text(fake, plain, entities)
    check_on_server(markup.inline)
    preview_disabled = link_preview_disabled(params)
    if chat.blocked:
        raise TelegramError(403, blocked_description(chat))
    now = fake.clock.time()
    _flood_check(fake, chat, now)

    fake.flood.record(chat.id, chat.is_group, now)
    message = SentMessage(
        message_id=chat.take_message_id(),
        chat_id=chat.id,
        message_thread_id=thread_id,
        text=raw_text,
        parse_mode=parse_mode,
        date=int(now),
        plain_text=plain,
        entities=tuple(entities),
        bot_id=bot.id,
        reply_markup=markup.inline,
        preview_disabled=preview_disabled,
    )
    fake.record_sent(message)
    return ok(bot_message(bot, chat, message))


def read_text(fake: Fake, params: dict[str, str]) -> tuple[str, str | None, str, list[dict]]:
    """The Bot API's reading of ``text`` and ``parse_mode`` (sendMessage and editMessageText):
    the text as sent, the parse mode, the visible text and its entities; or the 400 for an empty
    text, an unknown parse mode or malformed HTML."""
    raw_text = params.get("text", "")
    if not raw_text:
        raise bad_request("message text is empty")
    parse_mode = params.get("parse_mode") or None
    plain, entities = _parse(raw_text, parse_mode, fake.strict_ampersand)
    return raw_text, parse_mode, plain, entities


def visible_text(fake: Fake, plain: str, entities: list[dict]) -> tuple[str, list[dict]]:
    """TDLib's checks once the chat is known: whitespace trimmed, nothing left is an empty text,
    more than the limit too long."""
    plain, entities = _trim(plain, entities)
    if not plain:
        raise bad_request("message text is empty")
    if len(plain) > fake.max_length:
        raise bad_request("message is too long")
    return plain, entities


def _parse(text: str, parse_mode: str | None, strict_ampersand: bool) -> tuple[str, list[dict]]:
    mode = (parse_mode or "").lower()
    if mode in ("", "none"):
        return text, []
    if mode in ("markdown", "markdownv2"):
        return text, []  # accepted but not interpreted: the monitor sends HTML only
    if mode != "html":
        raise bad_request("unsupported parse_mode")
    try:
        parsed = parse_html(text, strict_ampersand=strict_ampersand)
    except HTMLParseError as error:
        raise bad_request(f"can't parse entities: {error}") from None
    return parsed.text, parsed.entities


def resolve_chat(chats: dict[int, Chat], chat_id: str) -> Chat:
    chat_id = chat_id.strip()
    if not chat_id:
        raise bad_request("chat_id is empty")
    chat = None
    if chat_id.startswith("@"):
        wanted = chat_id[1:].lower()
        chat = next((c for c in chats.values() if (c.username or "").lower() == wanted), None)
    elif re.fullmatch(r"-?\d{1,20}", chat_id):
        chat = chats.get(int(chat_id))
    if chat is None:
        raise bad_request("chat not found")
    if chat.migrate_to is not None:
        raise TelegramError(
            400,
            "Bad Request: group chat was upgraded to a supergroup chat",
            {"migrate_to_chat_id": chat.migrate_to},
        )
    return chat


def _thread(chat: Chat, raw: str | None) -> int | None:
    if raw is None or raw == "" or raw == "0":
        return None
    try:
        thread_id = int(raw)
    except ValueError:
        raise bad_request("invalid message thread identifier specified") from None
    if chat.topics is not None and thread_id not in chat.topics:
        raise bad_request("message thread not found")
    return thread_id


def _flood_check(fake: Fake, chat: Chat, now: float) -> None:
    for key in (chat.id, None):
        forced = fake.forced.get(key)
        if forced:
            forced[0] -= 1
            if forced[0] <= 0:
                del fake.forced[key]
            raise too_many_requests(forced[1])
    retry_after = fake.flood.admit(
        chat.id,
        chat.is_group,
        now,
        per_chat=Window(chat.per_second, 1.0) if chat.per_second is not None else None,
        per_group=Window(chat.per_minute, 60.0) if chat.per_minute is not None else None,
    )
    if retry_after is not None:
        raise too_many_requests(retry_after)


def _trim(text: str, entities: list[dict]) -> tuple[str, list[dict]]:
    """Telegram strips leading and trailing whitespace; entity offsets move with the text."""
    stripped = text.strip(_TRIMMED)
    if stripped == text:
        return text, entities
    shift = len(text) - len(text.lstrip(_TRIMMED))  # ASCII whitespace: one UTF-16 unit each
    limit = len(stripped.encode("utf-16-le")) // 2
    moved = []
    for entity in entities:
        start = max(entity["offset"] - shift, 0)
        end = min(entity["offset"] + entity["length"] - shift, limit)
        if end > start:
            moved.append({**entity, "offset": start, "length": end - start})
    return stripped, moved


def link_preview_disabled(params: dict[str, str]) -> bool:
    if params.get("disable_web_page_preview", "").lower() in ("true", "1"):
        return True
    raw = params.get("link_preview_options")
    if not raw:
        return False
    try:
        options = json.loads(raw)
    except json.JSONDecodeError:
        options = None
    if not isinstance(options, dict):
        raise bad_request("can't parse link preview options JSON object")
    return options.get("is_disabled") is True


def blocked_description(chat: Chat) -> str:
    if chat.type == "private":
        return "Forbidden: bot was blocked by the user"
    if chat.type == "channel":
        return "Forbidden: bot is not a member of the channel chat"
    return f"Forbidden: bot was kicked from the {chat.type} chat"
