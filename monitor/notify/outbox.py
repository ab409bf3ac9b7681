"""The durable outbox: messages wait in it until Telegram took them, oldest first.

The outbox is a value (``monitor.notify.documents.Outbox``); every function here returns the outbox
as it is after, and the caller stores it in the state it saves.

Delivery order and duplicates: messages go oldest first, each to its destination (a route's chat and
topic, or the default chat: ``monitor.notify.destinations``), and a chat's first retryable failure
stops that chat for the pass, so a later message never overtakes an earlier one in a chat. Telegram
has no idempotency key, so a message Telegram accepted is sent again when we never learnt it was
accepted: the process died before the outbox recorded it, or the answer was lost (a read timeout; a
run near its deadline gives a request as little as 1 s). :func:`deliver` records each message and
calls ``checkpoint`` (the caller's atomic state save) right after each send, and stops at the first
retryable failure, so either way a pass duplicates at most one message. A caller that passes no
checkpoint and saves only at the end widens the crash window to everything sent in the pass.

That one possible repeat is marked: the message's key is saved as ``Outbox.sending`` before its
request goes out, and cleared once Telegram answered. A message found still marked was perhaps
delivered, and goes again under :data:`RESENT_NOTE`, so people can tell a repeat from news. (The Bot
API offers no way to ask whether it arrived: a bot cannot read the chat's history, and editing or
deleting a message needs the ``message_id`` that came with the lost answer.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import IO, NamedTuple

from monitor.core.logs import log_event
from monitor.core.timefmt import format_utc
from monitor.notify.destinations import (
    DEFAULT,
    Destination,
    Router,
    as_router,
    destination_of,
    halt_of,
    with_halt,
)
from monitor.notify.documents import (
    DROPPED_KEPT,
    MAX_PENDING,
    SENT_KEYS_KEPT,
    DeliveryFailure,
    DroppedMessage,
    Halt,
    Outbox,
    PendingMessage,
)
from monitor.notify.held import gather_held, held_note
from monitor.notify.messages import Message
from monitor.notify.settings import TELEGRAM_MAX_LENGTH
from monitor.notify.telegram import (
    ChatPacing,
    DeliveryError,
    PermanentChatError,
    PrintingSender,
    Sender,
    Sent,
    TelegramSender,
)

# Put above a message sent again after its first request may have reached the chat.
RESENT_NOTE = (
    "↻ <i>Sent again: the previous attempt stopped before Telegram answered. If the same message "
    "is just above, this one repeats it.</i>"
)

# Sends per notify pass: one group-minute's worth (Telegram: 20/min to a group), so delivery adds
# at most ~20 s of pacing to a run; a backlog drains over the next runs, oldest first.
DEFAULT_SEND_BUDGET = 20
# Messages in a row Telegram refuses with one same status and description before delivery to that
# chat halts: one message refused is the message's fault; three distinct messages refused word for
# word alike is a channel that refuses everything (a wrong api_base, a proxy answering 400). Two
# would halt on a pair of too-long messages composed together; more costs more requests each pass.
HALT_AFTER_ALIKE = 3


class Enqueued(NamedTuple):
    outbox: Outbox
    added: int  # messages not already pending or delivered


def enqueue(outbox: Outbox, messages: Iterable[Message], now: datetime,
            destination: Destination = DEFAULT) -> Enqueued:
    """Add each message, for ``destination``, unless one with the same key is pending or was
    delivered. Beyond ``MAX_PENDING`` the oldest pending messages go (counted in ``overflowed``,
    logged)."""
    known = set(outbox.sent_keys) | {entry.key for entry in outbox.pending}
    fresh = []
    for message in messages:
        if message.key not in known:
            known.add(message.key)
            fresh.append(PendingMessage(message.key, message.text, now, keyboard=message.keyboard,
                                        chat_id=destination.chat_id,
                                        thread_id=destination.thread_id))
    if not fresh:
        return Enqueued(outbox, 0)
    pending = (*outbox.pending, *fresh)
    excess = max(0, len(pending) - MAX_PENDING)
    if excess:
        log_event("outbox_overflowed", logging.WARNING, dropped=excess, kept=MAX_PENDING)
    return Enqueued(
        replace(outbox, pending=pending[excess:], overflowed=outbox.overflowed + excess), len(fresh)
    )


# ---- which chat --------------------------------------------------------------------------------------


def sender_for(
    telegram_config: object,
    outbox: Outbox,
    stream: IO[str],
    *,
    clock: object | None = None,
    client: object | None = None,
    wrap: Callable[[Sender], Sender] | None = None,
) -> Sender | Router:
    """The composition root's sender: when ``Config.telegram`` is enabled (chat and token known), a
    router to Telegram, each chat followed where remembered migrations lead, one pacing per chat
    whatever its topics; otherwise a printer on ``stream``. ``wrap`` (the run's deadline) is put
    around each sender."""
    if not getattr(telegram_config, "enabled", False):
        return PrintingSender(stream)
    token = telegram_config.bot_token.get_secret_value()
    pacings: dict[str, ChatPacing] = {}

    def make(destination: Destination) -> Sender:
        chat, thread = destination
        if chat is None:
            chat, thread = telegram_config.chat_id, telegram_config.message_thread_id
        chat = chat_id_for(outbox, chat)
        sender = TelegramSender(token, chat, telegram_config.api_base, thread_id=thread, client=client,
                                clock=clock, pacing=pacings.setdefault(chat, ChatPacing()))
        return wrap(sender) if wrap else sender

    return Router(make)


def chat_id_for(outbox: Outbox, configured: str | int) -> str:
    """The chat to send to: the configured one, or where its remembered migrations lead.
    Migrations recorded for another chat (the config changed since) do not apply."""
    migrations = outbox.migrations
    chat = str(configured)
    for _ in range(len(migrations)):  # bounded: a cycle in stored data cannot loop forever
        if chat not in migrations:
            break
        chat = str(migrations[chat])
    return chat


# ---- delivery ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryResult:
    key: str
    outcome: str  # sent | kept (try again next run) | dropped (refused for good)
    error: DeliveryFailure | None = None
    message_id: int | None = None


class Delivery(NamedTuple):
    outbox: Outbox
    results: list[DeliveryResult]


class _Pass:
    """What one delivery pass has learnt so far, per chat."""

    def __init__(self) -> None:
        self.stopped: set[str] = set()  # chats not tried again in this pass
        # chat -> messages refused for themselves with one same answer, not dropped yet: a refusal
        # is the message's own only once another message to that chat fares otherwise
        self.held: dict[str, list[tuple[PendingMessage, DeliveryError]]] = {}
        self.results: list[DeliveryResult] = []
        self.attempts = 0


def deliver(
    outbox: Outbox,
    sender: Sender | Router,
    now: datetime,
    budget: int | None = DEFAULT_SEND_BUDGET,
    checkpoint: Callable[[Outbox], None] | None = None,
    on_sent: Callable[[PendingMessage, Sent], None] | None = None,
) -> Delivery:
    """Send pending messages oldest first, at most ``budget`` attempts (None: no limit), each to its
    destination (``sender`` a :class:`Router`; a plain sender takes them all).

    Per chat: stops at the first retryable failure (the message stays, with attempts and
    last_error) and at a chat-wide refusal (the chat's halt is set and logged once; the messages
    stay for when the config is fixed, and each later pass costs one request, not a storm). A
    message Telegram refuses by itself is dropped and remembered in ``dropped``, once another
    message to the chat fares otherwise; when ``HALT_AFTER_ALIKE`` messages in a row are refused
    with the same status and description, the channel is broken, not the messages (a wrong
    api_base, a proxy answering 400): the chat halts and they are all kept. ``checkpoint(outbox)``
    runs after every attempt with the outbox as it is then: the only window for a duplicate is
    between a send and that call; it also runs before each send, with the message marked as being
    sent. ``on_sent(entry, sent)`` runs once Telegram took a message, before that checkpoint (the
    caller records what the message's id is for in the same save). Returns the final outbox and a
    result per message decided.
    """
    router, progress = as_router(sender), _Pass()
    outbox = gather_held(outbox)
    for entry in outbox.pending:
        if budget is not None and progress.attempts >= budget:
            break
        destination = destination_of(entry)
        if destination.chat_key in progress.stopped:
            continue
        resend = outbox.sending == entry.key  # a process before this one sent it and never learnt more
        outbox = replace(outbox, sending=entry.key)
        if checkpoint:
            checkpoint(outbox)  # saved before the request: see the module docstring
        outbox = _attempt(outbox, entry, router.sender(destination), now, progress, resend, on_sent)
        if checkpoint:
            checkpoint(outbox)
    for held in progress.held.values():  # undecided: tried again next pass
        progress.results += [_result(entry, "kept", error, now) for entry, error in held]
    return Delivery(outbox, progress.results)


def _attempt(outbox: Outbox, entry: PendingMessage, sender: Sender, now: datetime, progress: _Pass,
             resend: bool = False, on_sent: Callable[[PendingMessage, Sent], None] | None = None) -> Outbox:
    """Try ``entry`` once (``resend``: marked as perhaps repeated); the outbox as it is after, what
    became of it in ``progress``."""
    chat = destination_of(entry).chat_key
    chat_before = getattr(sender, "chat_id", None)
    progress.attempts += 1
    try:
        sent = sender.send(with_notes(entry.text, resend, halt_of(outbox, chat)), entry.keyboard)
    except DeliveryError as error:
        # Telegram answered (a status): it did not take the message. No answer: it may have.
        outbox = replace(outbox, sending=outbox.sending if error.status is None else None)
        return _failed(outbox, entry, error, chat, chat_before, now, progress)
    log_event("telegram_sent", key=entry.key, message_id=sent.message_id, chat_id=sent.chat_id,
              waited_runs=entry.attempts, resent=resend)
    outbox = replace(outbox, sending=None)
    outbox = _drop_held(outbox, progress, chat, now)  # another message went: their refusals were their own
    progress.results.append(DeliveryResult(entry.key, "sent", None, sent.message_id))
    if on_sent is not None:
        on_sent(entry, sent)
    return _sent(outbox, entry, sent, chat, chat_before, now)


def with_notes(text: str, resend: bool, halt: Halt | None) -> str:
    """``text`` under the notes that apply: :data:`RESENT_NOTE` when its first request may have
    reached the chat, the held note while its chat is halted (if this goes, it came late). Composed
    messages leave room for both (``settings.NOTES_ROOM``); one written by an older release that
    leaves none keeps what fits, the repeat's note first."""
    notes = ([RESENT_NOTE] if resend else []) + ([held_note(halt)] if halt is not None else [])
    while notes:
        marked = "\n\n".join([*notes, text])
        if len(marked) <= TELEGRAM_MAX_LENGTH:
            return marked
        notes.pop()
    return text


def _failed(outbox: Outbox, entry: PendingMessage, error: DeliveryError, chat: str, chat_before: object,
            now: datetime, progress: _Pass) -> Outbox:
    """Telegram did not take ``entry``: the chat halted, the message held as refused, or kept."""
    if isinstance(error, PermanentChatError):
        progress.stopped.add(chat)
        progress.results.append(_result(entry, "kept", error, now))
        return _halted(_kept(outbox, entry, error, now), chat, error, chat_before, now)
    if error.permanent:
        return _refused(outbox, entry, error, now, progress, chat_before)
    progress.stopped.add(chat)
    log_event("telegram_delivery_deferred", logging.WARNING, key=entry.key, attempts=entry.attempts + 1,
              error=error.description, pending=len(outbox.pending))
    progress.results.append(_result(entry, "kept", error, now))
    return _kept(outbox, entry, error, now)


def _refused(outbox: Outbox, entry: PendingMessage, error: DeliveryError, now: datetime,
             progress: _Pass, chat_id: object = None) -> Outbox:
    """Telegram refused ``entry`` for itself: held until the chat's next message tells whether the
    refusal is the message's or the channel's."""
    chat = destination_of(entry).chat_key
    held = progress.held.get(chat, [])
    if held and not _alike(held[-1][1], error):
        outbox = _drop_held(outbox, progress, chat, now)  # refused differently: each for itself
        held = []
    outbox = _kept(outbox, entry, error, now)
    held.append((entry, error))
    progress.held[chat] = held
    if len(held) < HALT_AFTER_ALIKE:
        return outbox
    del progress.held[chat]
    progress.stopped.add(chat)
    progress.results += [_result(kept, "kept", refusal, now) for kept, refusal in held]
    return _halted(outbox, chat, error, chat_id, now, alike=len(held))


def _alike(first: DeliveryError, second: DeliveryError) -> bool:
    return (first.status, first.description) == (second.status, second.description)


def _drop_held(outbox: Outbox, progress: _Pass, chat: str, now: datetime) -> Outbox:
    for entry, error in progress.held.pop(chat, []):
        outbox = _dropped(outbox, entry, error, now)
        progress.results.append(_result(entry, "dropped", error, now))
    return outbox


def failure_of(error: DeliveryError, now: datetime | None = None) -> DeliveryFailure:
    """A delivery error as the outbox stores it (never a traceback, never the request's URL)."""
    return DeliveryFailure(
        type(error).__name__, error.permanent, error.scope, error.status, error.description, now
    )


def _result(entry: PendingMessage, outcome: str, error: DeliveryError, now: datetime) -> DeliveryResult:
    return DeliveryResult(entry.key, outcome, failure_of(error, now))


def _without(outbox: Outbox, key: str) -> tuple[PendingMessage, ...]:
    return tuple(entry for entry in outbox.pending if entry.key != key)


def _kept(outbox: Outbox, entry: PendingMessage, error: DeliveryError, now: datetime) -> Outbox:
    """The message stays in its place, one attempt more and why; the next pass tries it again."""
    kept = replace(entry, attempts=entry.attempts + 1, last_error=failure_of(error, now))
    return replace(outbox, pending=tuple(kept if e.key == entry.key else e for e in outbox.pending))


def _dropped(outbox: Outbox, entry: PendingMessage, error: DeliveryError, now: datetime) -> Outbox:
    log_event("telegram_message_refused", logging.ERROR, key=entry.key, error=error.description)
    dropped = DroppedMessage(entry.key, entry.created_at, now, failure_of(error))
    return replace(outbox, pending=_without(outbox, entry.key),
                   dropped=(*outbox.dropped, dropped)[-DROPPED_KEPT:])


def _sent(outbox: Outbox, entry: PendingMessage, sent: Sent, chat: str, chat_before: object,
          now: datetime) -> Outbox:
    sent_keys = (*outbox.sent_keys, entry.key)[-SENT_KEYS_KEPT:]
    # Telegram's answer always carries the message's id (Bot API: Message.message_id); a printer's has none.
    delivered_at = now if sent.message_id is not None else outbox.last_delivered_at
    outbox = replace(outbox, pending=_without(outbox, entry.key), sent_keys=sent_keys,
                     delivered=outbox.delivered + 1, last_delivered_at=delivered_at)
    halt = halt_of(outbox, chat)
    if halt is not None:
        log_event("telegram_delivery_resumed", halted_since=format_utc(halt.at), chat_id=halt.chat_id)
        outbox = with_halt(outbox, chat, None)
    if chat_before is not None and sent.chat_id != str(chat_before):
        log_event(
            "telegram_chat_migrated",
            logging.WARNING,
            from_chat_id=str(chat_before),
            to_chat_id=sent.chat_id,
            hint="update chat_id in the config",
        )
        outbox = replace(outbox, migrations={**outbox.migrations, str(chat_before): sent.chat_id})
    return outbox


def _halted(outbox: Outbox, chat: str, error: DeliveryError, chat_id: object, now: datetime, *,
            alike: int = 0) -> Outbox:
    """The chat's halt recorded (logged once per description). ``alike``: how many messages in a
    row were refused with this one answer (0: Telegram refused the chat itself)."""
    before = halt_of(outbox, chat)
    if before is not None and before.description == error.description:
        return outbox  # already said once; the next pass tries again, quietly
    if alike:
        hint = (f"{alike} messages in a row were refused with this same answer: the channel is broken, "
                f"not the messages; check api_base and any proxy in between")
    else:
        hint = "check the bot token, the chat id and that the bot is still in the chat"
    log_event("telegram_delivery_halted", logging.ERROR, status=error.status, error=error.description,
              chat_id=None if chat_id is None else str(chat_id), hint=hint)
    halt = Halt(now, error.status, error.description, None if chat_id is None else str(chat_id))
    return with_halt(outbox, chat, halt)
