"""Callback queries: what a press on an inline button (or a client sending any data it likes)
makes, and ``answerCallbackQuery``, which stops the client's progress bar (docs/sandbox.md,
"Buttons and callback queries").

- A callback query has an ``id`` (an int64 as a string), ``from``, ``message`` (the bot's message
  as it is now, buttons included; an InaccessibleMessage, ``date`` 0, once it is older than 48
  hours), ``chat_instance`` (one value per chat) and ``data`` (#callbackquery). The reference warns
  that the message "can contain no callback buttons with this data": the control API forges such
  queries and replays old data.
- ``answerCallbackQuery`` takes ``callback_query_id``, ``text`` (0-200 characters), ``show_alert``,
  ``url`` and ``cache_time``. An unknown id, one answered already, one of another bot or one older
  than the answer window is 400 "query is too old and response timeout expired or query ID is
  invalid" (Telegram's QUERY_ID_INVALID, as the Bot API words it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from .http import Response
from .telegram_errors import bad_request, ok
from .telegram_messages import bot_message, inaccessible_message
from .telegram_model import Bot, Chat, Person, SentMessage
from .telegram_params import integer_arg, to_bool, to_integer
from .telegram_updates import Receiving, Update, enqueue

# Telegram documents no window; public reports see answers 17 and 20 s late refused and guess
# 5-10 s (docs/sandbox.md): the fake takes the low end, never kinder. FakeTelegram can change it.
ANSWER_WINDOW_SECONDS = 10.0
INACCESSIBLE_AFTER_SECONDS = 48 * 3600
MAX_ANSWER_TEXT = 200
QUERY_ID_INVALID = "query is too old and response timeout expired or query ID is invalid"


@dataclass
class CallbackQuery:
    id: str
    bot_id: int
    person: Person
    chat_id: int
    message_id: int
    data: str
    created: float
    how: str  # pressed | forged | replayed
    update_id: int | None = None
    answer: dict | None = None

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "bot_id": self.bot_id,
            "from": self.person.user(),
            "chat_id": self.chat_id,
            "message_id": self.message_id,
            "data": self.data,
            "created": self.created,
            "how": self.how,
            "update_id": self.update_id,
            "answer": self.answer,
        }


class Answering(Receiving, Protocol):
    """The fake as the methods that make and answer callback queries see it."""

    callbacks: dict[str, CallbackQuery]  # by query id


def make_callback(fake: Answering, bot: Bot, chat: Chat, message: SentMessage, person: Person,
                  data: str, how: str, inaccessible: bool = False) -> tuple[CallbackQuery, Update]:
    """A callback query for ``bot`` from ``person`` on ``message``, queued as an update."""
    now = fake.clock.time()
    query_id = str(fake.random.randrange(10**17, 2**63))
    too_old = now - message.date > INACCESSIBLE_AFTER_SECONDS
    shown = (inaccessible_message(chat, message.message_id) if inaccessible or too_old
             else bot_message(bot, chat, message))
    payload = {
        "id": query_id,
        "from": person.user(),
        "message": shown,
        "chat_instance": chat_instance(bot, chat),
        "data": data,
    }
    update = enqueue(fake, bot, "callback_query", payload)
    query = CallbackQuery(query_id, bot.id, person, chat.id, message.message_id, data, now, how,
                          update.update_id)
    fake.callbacks[query_id] = query
    return query, update


def chat_instance(bot: Bot, chat: Chat) -> str:
    """A stable int64 per chat (and bot), as a string: "uniquely corresponding to the chat"."""
    digest = hashlib.blake2b(f"{bot.id}:{chat.id}".encode(), digest_size=8).digest()
    return str(int.from_bytes(digest, "big", signed=True))


def answer_callback_query(fake: Answering, bot: Bot, params: dict[str, str]) -> Response:
    # The Bot API reads the id as an int64: garbage reads 0, which no query has.
    query = fake.callbacks.get(str(to_integer(params.get("callback_query_id", ""))))
    now = fake.clock.time()
    if (query is None or query.bot_id != bot.id or query.answer is not None
            or now > query.created + fake.callback_answer_seconds):
        raise bad_request(QUERY_ID_INVALID)
    text = params.get("text", "")
    if len(text) > MAX_ANSWER_TEXT:
        raise bad_request("MESSAGE_TOO_LONG")
    query.answer = {
        "text": text,
        "show_alert": to_bool(params.get("show_alert")),
        "url": params.get("url") or None,
        "cache_time": integer_arg(params, "cache_time", 0, 0),
        "date": int(now),
    }
    return ok(True)
