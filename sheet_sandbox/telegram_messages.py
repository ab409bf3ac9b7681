"""Message objects as the Bot API shows them (core.telegram.org/bots/api#message): a bot's own
message (the answer to sendMessage and the edits, and the ``message`` of a callback query), a
person's message (in a ``message`` update), and the InaccessibleMessage a callback query carries
when the bot's message is too old to be shown (``date`` 0, #inaccessiblemessage)."""

from __future__ import annotations

from .telegram_model import Bot, Chat, PersonMessage, SentMessage


def bot_message(bot: Bot, chat: Chat, message: SentMessage) -> dict:
    result: dict = {"message_id": message.message_id}
    if chat.type == "channel":
        result["sender_chat"] = chat.public()
    else:
        result["from"] = bot.user()
    result["chat"] = chat.public()
    result["date"] = message.date
    if message.edit_date is not None:
        result["edit_date"] = message.edit_date
    if message.message_thread_id is not None:
        result["message_thread_id"] = message.message_thread_id
        result["is_topic_message"] = True
    result["text"] = message.plain_text
    if message.entities:
        result["entities"] = list(message.entities)
    if message.preview_disabled:
        result["link_preview_options"] = {"is_disabled": True}
    if message.reply_markup is not None:
        result["reply_markup"] = message.reply_markup
    return result


def person_message(chat: Chat, message: PersonMessage, reply_to: dict | None = None) -> dict:
    """``reply_to`` is the replied message as the Bot API nests it (without its own reply)."""
    result: dict = {
        "message_id": message.message_id,
        "from": message.person.user(),
        "chat": chat.public(),
        "date": message.date,
    }
    if message.message_thread_id is not None:
        result["message_thread_id"] = message.message_thread_id
    if message.is_topic_message:
        result["is_topic_message"] = True
    if reply_to is not None:
        result["reply_to_message"] = reply_to
    result["text"] = message.text
    if message.entities:
        result["entities"] = list(message.entities)
    return result


def inaccessible_message(chat: Chat, message_id: int) -> dict:
    return {"chat": chat.public(), "message_id": message_id, "date": 0}
