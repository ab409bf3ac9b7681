"""Where a message goes: the default chat or a route's chat and forum topic, and a sender for each.

A message in the outbox carries its destination (``PendingMessage.chat_id``, ``thread_id``); None
is the default chat, ``[telegram] chat_id`` and ``message_thread_id``, so a message composed before
routes existed, or for no route, follows the config's default even when it changes. Delivery asks a
:class:`Router` for the sender of each message's destination; a plain sender (the printer, the
watchdog's) takes every message whatever its destination.

Halts are per chat: a chat that refuses every message holds back only its own messages. The
default chat's halt is ``Outbox.halted``, a routed chat's is ``Outbox.halts[chat id]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from monitor.notify.documents import Halt, Keyboard, Outbox, PendingMessage
from monitor.notify.telegram import Sender, Sent

DEFAULT_CHAT = ""  # the halt key of the default chat


class Destination(NamedTuple):
    chat_id: str | None = None  # None: [telegram] chat_id (and its message_thread_id)
    thread_id: int | None = None

    @property
    def chat_key(self) -> str:
        return self.chat_id or DEFAULT_CHAT


DEFAULT = Destination()


def destination_of(entry: PendingMessage) -> Destination:
    return Destination(entry.chat_id, entry.thread_id)


def halt_of(outbox: Outbox, chat_key: str) -> Halt | None:
    return outbox.halted if chat_key == DEFAULT_CHAT else outbox.halts.get(chat_key)


def with_halt(outbox: Outbox, chat_key: str, halt: Halt | None) -> Outbox:
    """The outbox with ``chat_key``'s halt set (None: lifted)."""
    if chat_key == DEFAULT_CHAT:
        return replace(outbox, halted=halt)
    halts = {key: value for key, value in outbox.halts.items() if key != chat_key}
    if halt is not None:
        halts[chat_key] = halt
    return replace(outbox, halts=halts)


def all_halts(outbox: Outbox) -> dict[str, Halt]:
    """Every halted chat: the default chat under ``DEFAULT_CHAT``, the routed ones by their id."""
    halts = dict(outbox.halts)
    if outbox.halted is not None:
        halts[DEFAULT_CHAT] = outbox.halted
    return halts


class Router:
    """The sender of each destination, built by ``make`` on first use and kept for the pass (a
    sender paces its own chat)."""

    def __init__(self, make: Callable[[Destination], Sender]) -> None:
        self._make = make
        self._senders: dict[Destination, Sender] = {}

    def sender(self, destination: Destination) -> Sender:
        if destination not in self._senders:
            self._senders[destination] = self._make(destination)
        return self._senders[destination]

    def send(self, text: str, keyboard: Keyboard = ()) -> Sent:
        """Send to the default chat: a router is a sender too."""
        return self.sender(DEFAULT).send(text, keyboard)

    def close(self) -> None:
        for sender in self._senders.values():
            close = getattr(sender, "close", None)
            if close:
                close()


def as_router(sender: Sender | Router) -> Router:
    """A router; a plain sender becomes one that sends everything through it."""
    return sender if isinstance(sender, Router) else Router(lambda _destination: sender)
