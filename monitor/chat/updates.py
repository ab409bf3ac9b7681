"""Telegram's updates as the monitor reads them: a press of one of its buttons, a command, or
something it ignores (and why).

Everything in an update comes from a person's client and Telegram: read as untrusted input. The
shape is checked field by field (a wrong type is an update ignored, never an exception), the
callback data and command arguments are only text here: what they may do is decided elsewhere
(``monitor.chat.actions``, ``monitor.chat.commands``), by whom (``monitor.chat.people``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_ARGUMENTS = 500  # characters of a command's arguments read: a name, a duration, a reason


@dataclass(frozen=True)
class Person:
    """Who pressed or wrote: Telegram's numeric id (what ``[telegram] operators`` may name, with the
    username) and how to name them in the chat."""

    id: int
    username: str | None
    first_name: str

    @property
    def shown(self) -> str:
        """'@ivan', or 'Ivan (id 1234)' for someone without a username."""
        return f"@{self.username}" if self.username else f"{self.first_name or 'someone'} (id {self.id})"


@dataclass(frozen=True)
class Press:
    update_id: int
    query_id: str
    person: Person
    chat_id: str
    message_id: int
    thread_id: int | None
    data: str


@dataclass(frozen=True)
class Command:
    update_id: int
    person: Person
    chat_id: str
    thread_id: int | None  # the forum topic it was written in (an answer goes there)
    message_id: int
    name: str  # lower case, without "/" and "@bot"
    arguments: str
    addressed_to: str | None  # the bot named in "/cmd@bot", if any
    sent_at: int | None = None  # Unix time Telegram dated it: a command that waited hours is not obeyed


@dataclass(frozen=True)
class Ignored:
    update_id: int
    why: str


Update = Press | Command | Ignored


def parse(update: Any) -> Update:
    """One update from getUpdates. An update whose very id is missing raises ValueError: the offset
    could not move past it (the caller stops reading; Telegram sends it again)."""
    if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
        raise ValueError("an update without an update_id")
    update_id = update["update_id"]
    if isinstance(update.get("callback_query"), dict):
        return _press(update_id, update["callback_query"])
    if isinstance(update.get("message"), dict):
        return _command(update_id, update["message"])
    kinds = [key for key in update if key != "update_id"]
    return Ignored(update_id, f"not a button press or a message ({', '.join(kinds) or 'empty'})")


def _person(value: Any) -> Person | None:
    if not isinstance(value, dict) or not isinstance(value.get("id"), int) or value.get("is_bot") is True:
        return None
    username = value.get("username")
    return Person(
        value["id"],
        username if isinstance(username, str) and username else None,
        str(value.get("first_name") or "")[:64],
    )


def _chat_of(message: Any) -> tuple[str, int, int | None] | None:
    """(chat id, message id, topic) of a Message or InaccessibleMessage."""
    if not isinstance(message, dict) or not isinstance(message.get("message_id"), int):
        return None
    chat = message.get("chat")
    if not isinstance(chat, dict) or not isinstance(chat.get("id"), int):
        return None
    thread = message.get("message_thread_id") if message.get("is_topic_message") is True else None
    return str(chat["id"]), message["message_id"], thread if isinstance(thread, int) else None


def _press(update_id: int, query: dict) -> Update:
    person = _person(query.get("from"))
    where = _chat_of(query.get("message"))
    data, query_id = query.get("data"), query.get("id")
    if person is None or where is None or not isinstance(query_id, str):
        return Ignored(update_id, "a press without a person, a message or an id")
    if not isinstance(data, str) or not data:
        return Ignored(update_id, "a press without callback data (a game's, an inline message's)")
    chat_id, message_id, thread_id = where
    return Press(update_id, query_id, person, chat_id, message_id, thread_id, data[:64])


def _command(update_id: int, message: dict) -> Update:
    person = _person(message.get("from"))
    where = _chat_of(message)
    text = message.get("text")
    if person is None or where is None:
        return Ignored(update_id, "a message without a person (a channel's post, a bot's) or a chat")
    if not isinstance(text, str) or not text.startswith("/"):
        return Ignored(update_id, "a message that is not a command")
    head, _, arguments = text.partition(" ")
    name, _, bot = head[1:].partition("@")
    if not name:
        return Ignored(update_id, "a lone slash")
    chat_id, message_id, thread_id = where
    date = message.get("date")
    return Command(
        update_id,
        person,
        chat_id,
        thread_id,
        message_id,
        name.lower(),
        arguments.strip()[:MAX_ARGUMENTS],
        bot or None,
        date if isinstance(date, int) else None,
    )
