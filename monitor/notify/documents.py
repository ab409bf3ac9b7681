"""What the notifier keeps between runs: the outbox and the alert memory, as typed values.

Both are frozen values, like every stored document: a change makes a new one, which the caller
stores (``state.outbox = outbox``); that assignment is what tells the state layer to save it.
"""

from __future__ import annotations

from dataclasses import field

from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document
from monitor.engine.maintenance import Window

MAX_PENDING = 500  # ~a week of 5-minute runs with a message each; beyond it the oldest go
SENT_KEYS_KEPT = 500  # enough to recognise any message composed again after a crash
DROPPED_KEPT = 20


@document
class DeliveryFailure:
    """Why Telegram did not take a message (``monitor.notify.telegram.DeliveryError``, as stored)."""

    error: str  # the DeliveryError class's name
    permanent: bool
    scope: str  # "chat": no message can reach the chat; "message": only this one is refused
    status: int | None
    description: str
    at: UtcTime | None = None


@document
class Button:
    """One button under a message (``monitor.notify.buttons``)."""

    text: str
    data: str  # callback_data, at most 64 bytes: signed, never trusted back as it comes


Keyboard = tuple[tuple[Button, ...], ...]  # rows of buttons


@document
class PendingMessage:
    key: str  # stable for the same content: composing it again is recognised, not sent twice
    text: str  # Telegram HTML
    created_at: UtcTime
    attempts: int = 0
    last_error: DeliveryFailure | None = None
    chat_id: str | None = None  # a route's chat (monitor.notify.destinations); None: [telegram] chat_id
    thread_id: int | None = None  # the route's forum topic; with chat_id None, [telegram]'s
    keyboard: Keyboard = ()  # the buttons under it, for the incidents it tells


@document
class DroppedMessage:
    key: str
    created_at: UtcTime
    dropped_at: UtcTime
    error: DeliveryFailure


@document
class Halt:
    """No message can reach the chat (bad token, chat not found, bot removed, or every message
    refused alike: a broken api_base or proxy), since ``at``."""

    at: UtcTime
    status: int | None
    description: str
    chat_id: str | None = None


@document
class Outbox:
    """Messages waiting for Telegram, oldest first, and what delivery has learnt."""

    pending: tuple[PendingMessage, ...] = ()
    sent_keys: tuple[str, ...] = ()  # keys of the latest delivered messages (dedupe on enqueue)
    dropped: tuple[DroppedMessage, ...] = ()  # the latest messages Telegram refused for good
    halted: Halt | None = None  # the default chat's ([telegram] chat_id)
    halts: dict[str, Halt] = field(default_factory=dict)  # routed chats', by their configured chat id
    migrations: dict[str, str] = field(default_factory=dict)  # old chat id -> new (group -> supergroup)
    overflowed: int = 0  # messages dropped because the outbox was full
    delivered: int = 0  # messages Telegram accepted, since the state was created (never reset)
    # When Telegram last accepted one (a message printed for want of [telegram] is no delivery): what
    # the status page says of delivery, whoever renders it and whatever their environment holds.
    last_delivered_at: UtcTime | None = None
    # The key of the message whose request is out, saved before the request: found here by the next
    # process, that message may have reached the chat, and is sent again marked as possibly repeated.
    sending: str | None = None


@document
class Alerted:
    """People were told this spreadsheet is bad (alert or reminder) at ``at``."""

    at: UtcTime
    name: str


@document
class RoundChanges:
    id: str  # a round id
    changes: int = 0  # alert-worthy events during it (a summary "on_change" needs at least one)


@document
class CrashOutage:
    """Runs that died mid-round, one after another: the first was told, the others are counted
    until runs have finished for a while without one dying (``monitor.notify.crashes``)."""

    first_at: UtcTime  # when the first one was told
    last_at: UtcTime  # when the latest one was taken over
    runs: int = 1  # runs that died (each one's tasks were taken over by a later run)
    reclaimed: int = 0  # tasks taken over, all told
    poisoned: int = 0  # tasks given up as poison (each also told as dead-lettered)


@document
class Relearning:
    """The state was lost at ``since`` (monitor.notify.relearning): the first round that began after
    it (``round``, once known) tells what fails as one list, not each spreadsheet as a new problem."""

    since: UtcTime
    round: str | None = None


@document
class AlertMemory:
    """Who was alerted when, and what summaries and digests were already sent."""

    alerted: dict[str, Alerted] = field(default_factory=dict)  # still bad and told so, by spreadsheet
    warned: dict[str, Alerted] = field(default_factory=dict)  # still warning and told so
    crashes: CrashOutage | None = None  # runs dying mid-round, while that lasts
    last_digest_at: UtcTime | None = None  # None: a fresh install, which waits for the next digest time
    summarized_round: str | None = None
    round: RoundChanges | None = None
    relearning: Relearning | None = None  # set while the first round after a lost state goes on
    # Maintenance windows told as begun and not yet as over (monitor.notify.maintenance).
    maintenance: tuple[Window, ...] = ()


@document
class Asked:
    """Someone asked in the chat for a spreadsheet to be read now (``/check``, *Check again*): the
    answer, its verdict, goes to them once a read after ``at`` has judged it."""

    spreadsheet_id: str
    at: UtcTime
    by: str
    chat_id: str
    thread_id: int | None = None
    reply_to: int | None = None  # the message (command or alert) the answer replies to


ASKED_KEPT = 50  # checks waiting for their read; beyond it the oldest are answered "not read yet"


@document
class ChatPosition:
    """How far the chat's updates were read, and what people asked that is still owed an answer.

    ``offset`` is the next update id to ask for: saved in the same save as what the updates before it
    changed, so a process killed at any moment applies each press exactly once (Telegram hands an
    update over again until a getUpdates asks from past it). ``refused``: why Telegram refuses to
    hand updates over (a webhook set on the bot, another program polling it), since when."""

    offset: int | None = None
    polled_at: UtcTime | None = None
    refused: str | None = None
    refused_since: UtcTime | None = None
    asked: tuple[Asked, ...] = ()
