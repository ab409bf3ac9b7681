"""What the people in the chats do, for tests: write a message or a command, press an inline
button, and what a tampered client can do besides, send any callback data for a bot's message or
send old data again. Each action becomes the update the bot would receive (docs/sandbox.md,
"People in the chats").

- A message gets ``bot_command`` entities as Telegram marks them (telegram_commands). In a
  forum it may be in a topic (``message_thread_id``, ``is_topic_message``); a reply in a supergroup
  outside any topic belongs to the thread of the message it answers, so it carries that
  ``message_thread_id`` without ``is_topic_message`` (tdlib/telegram-bot-api#356, #447).
- In groups a bot in privacy mode (BotFather's default) receives only commands meant for it (a
  ``/cmd@its_name``, or a plain ``/cmd`` when no other bot wrote in the chat after it) and replies
  to its own messages (core.telegram.org/bots/features#privacy-mode). A bot removed from the chat,
  or blocked by the person, receives nothing. What is not delivered is said, not hidden.
- A press needs a callback button of a bot's message; a URL button opens its link and makes no
  callback query.

Errors of use (no such chat, message or button) raise ValueError with what to do instead; the
control API answers them as 400.
"""

from __future__ import annotations

from .telegram_callbacks import Answering, CallbackQuery, make_callback
from .telegram_commands import bot_commands, command_target
from .telegram_markup import MAX_CALLBACK_DATA_BYTES, buttons
from .telegram_messages import bot_message, person_message
from .telegram_model import Bot, Chat, Person, PersonMessage, SentMessage
from .telegram_send import blocked_description
from .telegram_updates import Update, enqueue

DEFAULT_PERSON = Person(1000001, "Sandbox", "sandbox_user")
PRIVACY = ("privacy mode: in groups the bot receives only commands meant for it and replies to "
           "its own messages")


def person(value: Person | dict | None, chat: Chat) -> Person:
    """The person acting in ``chat``: the one given, else the private chat's own person, else a
    default one. In a private chat only its person (whose id is the chat's) can act."""
    if value is None:
        chosen = chat.person() if chat.type == "private" else DEFAULT_PERSON
    elif isinstance(value, Person):
        chosen = value
    else:
        chosen = person_from_json(value)
    if chat.type == "private" and chosen.id != chat.id:
        raise ValueError(f"chat {chat.id} is a private chat: only its person (id {chat.id}) "
                         f"writes or presses there, not {chosen.id}")
    return chosen


def person_from_json(value: object) -> Person:
    if not isinstance(value, dict):
        raise ValueError('user must be an object like {"id": 42, "first_name": "Ivan", '
                         '"username": "ivan"}')
    unknown = set(value) - {"id", "first_name", "username", "last_name", "language_code", "is_bot"}
    if unknown:
        raise ValueError(f"unknown user field(s) {sorted(unknown)}")
    user_id = value.get("id")
    if isinstance(user_id, bool) or not isinstance(user_id, int) or user_id <= 0:
        raise ValueError("user.id must be a positive integer")
    if value.get("is_bot"):
        raise ValueError("user.is_bot: the sandbox's people are not bots")
    texts = {name: value.get(name) for name in ("first_name", "username", "last_name",
                                                "language_code")}
    if any(text is not None and not isinstance(text, str) for text in texts.values()):
        raise ValueError("user.first_name, username, last_name and language_code are strings")
    username = (texts["username"] or "").lstrip("@") or None
    return Person(user_id, texts["first_name"] or f"User {user_id}", username,
                  texts["last_name"], texts["language_code"])


def write(fake: Answering, chat_id: int, text: str, *, user: Person | dict | None = None,
          bot: int | str | None = None, message_thread_id: int | None = None,
          reply_to_message_id: int | None = None) -> dict:
    """A person writes ``text`` in the chat; the bot receives it as a ``message`` update unless
    privacy mode, a block or its allowed_updates keep it away (the answer says which)."""
    chat = open_chat(fake, chat_id)
    receiver = fake.find_bot(bot)
    writer = person(user, chat)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty string")
    replied = None
    if reply_to_message_id is not None:
        replied = fake.find_message(chat.id, reply_to_message_id)
        if replied is None:
            raise ValueError(f"no message {reply_to_message_id} in chat {chat.id} to reply to")
    thread, in_topic = _thread(chat, message_thread_id, replied)
    entities = bot_commands(text)
    message = PersonMessage(chat.take_message_id(), chat.id, thread, in_topic, writer, text,
                            tuple(entities), int(fake.clock.time()), reply_to_message_id)
    fake.person_messages[(chat.id, message.message_id)] = message
    payload = person_message(chat, message, _nested(fake, chat, replied))
    reason = _not_received(fake, receiver, chat, message, replied)
    update = None if reason else enqueue(fake, receiver, "message", payload)
    return _delivery(update, reason, message=payload)


def press(fake: Answering, chat_id: int, message_id: int, *, callback_data: str | None = None,
          text: str | None = None, position: tuple[int, int] | None = None,
          user: Person | dict | None = None, inaccessible: bool = False) -> dict:
    """A person presses a callback button of a bot's message, named by exactly one of its
    ``callback_data``, its ``text`` or its ``position`` (row, column; from 0)."""
    chat, message, owner = _bot_message(fake, chat_id, message_id)
    chosen = [name for name, given in (("callback_data", callback_data), ("text", text),
                                       ("position", position)) if given is not None]
    if len(chosen) != 1:
        raise ValueError("say which button with exactly one of callback_data, text or position")
    button = _button(message, callback_data, text, position)
    if "url" in button:
        raise ValueError(f"button {button['text']!r} is a URL button: pressing it opens "
                         f"{button['url']} and makes no callback query")
    query, update = make_callback(fake, owner, chat, message, person(user, chat),
                                  button["callback_data"], "pressed", inaccessible)
    return _delivery(update, None, callback_query=query)


def forge(fake: Answering, chat_id: int, message_id: int, data: str, *,
          user: Person | dict | None = None) -> dict:
    """A tampered client sends ``data`` for a bot's message, whatever its buttons say."""
    chat, message, owner = _bot_message(fake, chat_id, message_id)
    if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= MAX_CALLBACK_DATA_BYTES:
        raise ValueError(f"data must be 1-{MAX_CALLBACK_DATA_BYTES} bytes, as Telegram carries it")
    query, update = make_callback(fake, owner, chat, message, person(user, chat), data, "forged")
    return _delivery(update, None, callback_query=query)


def replay(fake: Answering, callback_query_id: str, *, chat_id: int | None = None,
           message_id: int | None = None, user: Person | dict | None = None) -> dict:
    """An old callback query's data sent again: a new query (new id) on the same message, or on
    another one of the bot's, by the same person or another."""
    original = fake.callbacks.get(str(callback_query_id))
    if original is None:
        raise ValueError(f"no callback query {callback_query_id!r} to replay; GET "
                         "/_sandbox/callback_queries lists them")
    chat, message, owner = _bot_message(fake, original.chat_id if chat_id is None else chat_id,
                                        original.message_id if message_id is None else message_id)
    actor = original.person if user is None and chat.id == original.chat_id else user
    query, update = make_callback(fake, owner, chat, message, person(actor, chat), original.data,
                                  "replayed")
    return _delivery(update, None, callback_query=query)


def open_chat(fake: Answering, chat_id: int) -> Chat:
    chat = fake.chats.get(chat_id)
    if chat is None:
        raise ValueError(f"no chat {chat_id} in the sandbox; add it with POST /_sandbox/chats")
    if chat.migrate_to is not None:
        raise ValueError(f"chat {chat_id} was upgraded to the supergroup {chat.migrate_to}; "
                         "people write there now")
    if chat.type == "channel":
        raise ValueError(f"chat {chat_id} is a channel: people writing in channels is not modelled")
    return chat


def _bot_message(fake: Answering, chat_id: int, message_id: int) -> tuple[Chat, SentMessage, Bot]:
    chat = open_chat(fake, chat_id)
    message = fake.find_message(chat.id, message_id)
    if not isinstance(message, SentMessage):
        what = "no message" if message is None else "a person's message, not a bot's,"
        raise ValueError(f"{what} {message_id} in chat {chat.id}: only a bot's messages have "
                         "inline buttons")
    if chat.blocked:
        raise ValueError(f"chat {chat.id} is blocked ({blocked_description(chat)}): the bot "
                         "receives nothing from it")
    return chat, message, fake.bot_by_id(message.bot_id)


def _button(message: SentMessage, data: str | None, text: str | None,
            position: tuple[int, int] | None) -> dict:
    found = buttons(message.reply_markup)
    if not found:
        raise ValueError(f"message {message.message_id} in chat {message.chat_id} has no inline "
                         "keyboard (now)")
    for row, column, button in found:
        if ((data is not None and button.get("callback_data") == data)
                or (text is not None and button["text"] == text)
                or (position is not None and tuple(position) == (row, column))):
            return button
    listed = "; ".join(f"[{row}, {column}] {button['text']!r} "
                       + (f"data {button['callback_data']!r}" if "callback_data" in button
                          else f"url {button['url']}")
                       for row, column, button in found)
    raise ValueError(f"message {message.message_id} has no such button; its buttons: {listed}")


def _thread(chat: Chat, thread: int | None,
            replied: SentMessage | PersonMessage | None) -> tuple[int | None, bool]:
    if thread is not None:
        if chat.topics is None:
            raise ValueError(f"chat {chat.id} has no topics (it is not a forum)")
        if thread not in chat.topics:
            raise ValueError(f"chat {chat.id} has no topic {thread}; its topics: "
                             f"{sorted(chat.topics)}")
        return thread, True
    if replied is None or chat.type != "supergroup":
        return None, False
    if replied.message_thread_id is not None:  # a reply in a topic stays in it
        in_topic = chat.topics is not None and replied.message_thread_id in chat.topics
        return replied.message_thread_id, in_topic
    return replied.message_id, False


def _nested(fake: Answering, chat: Chat, replied) -> dict | None:
    if isinstance(replied, SentMessage):
        return bot_message(fake.bot_by_id(replied.bot_id), chat, replied)
    if isinstance(replied, PersonMessage):
        return person_message(chat, replied)
    return None


def _not_received(fake: Answering, bot: Bot, chat: Chat, message: PersonMessage,
                  replied) -> str | None:
    if chat.blocked:
        return f"{blocked_description(chat)}: the bot receives nothing from this chat"
    if chat.type == "private" or not bot.privacy:
        return None
    if isinstance(replied, SentMessage) and replied.bot_id == bot.id:
        return None
    last = next((sent.bot_id for sent in reversed(fake.sent) if sent.chat_id == chat.id), None)
    for entity in message.entities:
        _, target = command_target(message.text, entity)
        if target is not None and target.lower() == bot.username.lower():
            return None
        if target is None and last in (None, bot.id):
            return None
    return PRIVACY


def _delivery(update: Update | None, reason: str | None, *, message: dict | None = None,
              callback_query: CallbackQuery | None = None) -> dict:
    if update is not None and update.state == "not_allowed":
        reason = f"the bot's allowed_updates leave out {update.kind}"
    result: dict = {
        "delivered": reason is None,
        "reason": reason,
        "update_id": update.update_id if update is not None else None,
        "update": update.api_json() if update is not None and update.update_id else None,
    }
    if message is not None:
        result["message"] = message
    if callback_query is not None:
        result["callback_query_id"] = callback_query.id
    return result
