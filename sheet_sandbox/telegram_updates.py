"""Updates waiting for a bot, kept as the Bot API server keeps them (its TQueue, ``tddb/td/db/
TQueue.cpp``, fed by ``Client::add_update``; docs/sandbox.md, "Updates"):

- ids count up by one from a random start (``2000001`` .. ``2**30``), never reused;
- an update is kept for a while and then dropped: a message for a day (#getting-updates: "will
  not be kept longer than 24 hours"), a callback query for 150 seconds (``add_update``'s timeout);
- ``getUpdates`` with an offset forgets every update below it ("confirmed"); a negative offset
  forgets all but the last ``-offset``; an offset more than 10 past the next id, or far below it,
  is ignored and the queue is read from its head;
- ``allowed_updates`` decides which kinds are queued at all, when they happen: a kind left out is
  never stored ("doesn't affect updates created before the call").

Times are the fake's clock, passed in. Every update made is also kept in a log for the control
API, with its state: pending, delivered (returned at least once), confirmed, expired, dropped, or
not_allowed (never queued, so it has no id).
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .telegram_fake import Fake

if TYPE_CHECKING:
    from .telegram_model import Bot

# Client.h's UpdateType order; chat_member and the reaction kinds are off unless asked for.
UPDATE_TYPES = (
    "message", "edited_message", "channel_post", "edited_channel_post", "inline_query",
    "chosen_inline_result", "callback_query", "shipping_query", "pre_checkout_query", "poll",
    "poll_answer", "my_chat_member", "chat_member", "chat_join_request", "chat_boost",
    "removed_chat_boost", "message_reaction", "message_reaction_count", "business_connection",
    "business_message", "edited_business_message", "deleted_business_messages",
)
DEFAULT_ALLOWED = frozenset(UPDATE_TYPES) - {"chat_member", "message_reaction",
                                             "message_reaction_count"}
KEEP_SECONDS = {"message": 86400, "callback_query": 150}
_SANE_PAST = 2 * 1_000_000  # TQueue: an offset below tail - 2 * MAX_QUEUE_EVENTS is ignored
_SANE_FUTURE = 10


def allowed_updates(raw: str | None) -> frozenset[str] | None:
    """The kinds ``allowed_updates`` asks for, or None to keep the previous setting: absent,
    empty, malformed or not a list of strings (the Bot API's ``get_allowed_update_types``). Names
    are case-insensitive; unknown ones are ignored; a list naming none gives the default."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return None
    chosen = frozenset(name.lower() for name in value) & frozenset(UPDATE_TYPES)
    return chosen or DEFAULT_ALLOWED


def ordered(kinds: frozenset[str]) -> list[str]:
    return [kind for kind in UPDATE_TYPES if kind in kinds]


@dataclass
class Update:
    bot_id: int
    kind: str
    payload: dict  # the object under ``kind``, fixed when the update was made (as the server does)
    created: float
    update_id: int | None = None
    state: str = "pending"
    deliveries: int = 0

    @property
    def expires_at(self) -> int:
        return int(self.created) + KEEP_SECONDS.get(self.kind, 86400)

    def api_json(self) -> dict:
        return {"update_id": self.update_id, self.kind: self.payload}

    def as_json(self) -> dict:
        return {
            "update_id": self.update_id,
            "bot_id": self.bot_id,
            "kind": self.kind,
            "created": self.created,
            "state": self.state,
            "deliveries": self.deliveries,
            "update": self.api_json(),
        }


class UpdateQueue:
    """One bot's queued updates, oldest first."""

    def __init__(self, first_id: int) -> None:
        self.tail = first_id  # the id the next update gets
        self.events: deque[Update] = deque()
        self.used = False  # the server has no queue before the first update

    def push(self, update: Update) -> None:
        update.update_id = self.tail
        self.tail += 1
        self.used = True
        self.events.append(update)

    def head(self) -> int:
        return self.events[0].update_id if self.events else self.tail

    def take(self, offset: int, limit: int, now: float) -> list[Update]:
        """getUpdates' read: forget what ``offset`` confirms and what expired, then the first
        ``limit`` updates from there."""
        if offset < 0:
            self.clear(keep=-offset)
        if not self.used:
            return []
        start = offset if offset > 0 else self.head()
        if not self.tail - _SANE_PAST <= start <= self.tail + _SANE_FUTURE:
            start = self.head()
        self._drop(lambda update: update.update_id < start, "confirmed")
        self.expire(now)
        return list(self.events)[:limit]

    def expire(self, now: float) -> None:
        self._drop(lambda update: update.expires_at < int(now), "expired")

    def clear(self, keep: int = 0) -> None:
        """Drop all but the last ``keep`` updates (a negative offset, drop_pending_updates)."""
        while len(self.events) > keep:
            self.events.popleft().state = "dropped"

    def pending(self, now: float) -> int:
        self.expire(now)
        return len(self.events)

    def _drop(self, gone, state: str) -> None:
        kept = deque()
        for update in self.events:
            if gone(update):
                update.state = state
            else:
                kept.append(update)
        self.events = kept


@dataclass
class Poll:
    """A getUpdates request waiting for updates; ``conflict`` is set when another request ends it."""

    offset: int
    limit: int
    conflict: str | None = None
    answer_at: float = 0.0


@dataclass(frozen=True)
class Webhook:
    url: str
    max_connections: int
    secret_token: str = ""
    ip_address: str = ""


@dataclass
class Mailbox:
    """One bot's side of receiving: its queue, the kinds it allowed, its waiting long poll and the
    throttling state around it (telegram_polling), and its webhook (telegram_webhook)."""

    queue: UpdateQueue
    allowed: frozenset[str] = DEFAULT_ALLOWED
    waiting: Poll | None = None
    held: int = 0  # getUpdates requests held now: the waiting one, and ended ones not yet answered
    previous_offset: int = -1
    previous_start: float = -math.inf
    next_conflict_at: float = 0.0
    webhook: Webhook | None = None
    next_set_webhook_at: float = 0.0


class Receiving(Fake, Protocol):
    """The fake as the methods that queue and read updates see it."""

    mailboxes: dict[int, Mailbox]  # bot id -> its updates, polling and webhook
    update_log: list[Update]


def mailbox(fake: Receiving, bot: Bot) -> Mailbox:
    box = fake.mailboxes.get(bot.id)
    if box is None:
        box = fake.mailboxes[bot.id] = Mailbox(UpdateQueue(fake.random.randint(2_000_001, 2**30)))
    return box


def enqueue(fake: Receiving, bot: Bot, kind: str, payload: dict) -> Update:
    """Make an update for ``bot`` and queue it if its allowed_updates let it through; a waiting
    long poll is woken. Called under the fake's lock."""
    box = mailbox(fake, bot)
    update = Update(bot.id, kind, payload, fake.clock.time())
    if kind in box.allowed:
        box.queue.push(update)
        fake.changed.notify_all()
    else:
        update.state = "not_allowed"
    fake.update_log.append(update)
    return update
