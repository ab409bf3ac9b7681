"""The durable outbox: messages wait in it until Telegram took them, oldest first.

The outbox is a value (``monitor.notify.documents.Outbox``); every function here returns the outbox
as it is after, and the caller stores it in the state it saves.

Delivery order and duplicates: messages go oldest first, and the first retryable failure stops the
pass, so a later message never overtakes an earlier one. Telegram has no idempotency key, so a
message Telegram accepted is sent again when we never learnt it was accepted: the process died
before the outbox recorded it, or the answer was lost (a read timeout; a run near its deadline
gives a request as little as 1 s). :func:`deliver` records each message and calls ``checkpoint``
(the caller's atomic state save) right after each send, and stops at the first retryable failure,
so either way a pass duplicates at most one message. A caller that passes no checkpoint and saves
only at the end widens the crash window to everything sent in the pass.

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
from monitor.notify.messages import Message
from monitor.notify.settings import TELEGRAM_MAX_LENGTH
from monitor.notify.telegram import (
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


class Enqueued(NamedTuple):
    outbox: Outbox
    added: int  # messages not already pending or delivered


def enqueue(outbox: Outbox, messages: Iterable[Message], now: datetime) -> Enqueued:
    """Add each message unless one with the same key is pending or was delivered. Beyond
    ``MAX_PENDING`` the oldest pending messages go (counted in ``overflowed``, logged)."""
    known = set(outbox.sent_keys) | {entry.key for entry in outbox.pending}
    fresh = []
    for message in messages:
        if message.key not in known:
            known.add(message.key)
            fresh.append(PendingMessage(message.key, message.text, now))
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
) -> Sender:
    """The composition root's sender: Telegram when ``Config.telegram`` is enabled (chat and token
    known), sent to where remembered migrations lead; otherwise a printer on ``stream``."""
    if not getattr(telegram_config, "enabled", False):
        return PrintingSender(stream)
    return TelegramSender(
        telegram_config.bot_token.get_secret_value(),
        chat_id_for(outbox, telegram_config.chat_id),
        telegram_config.api_base,
        thread_id=telegram_config.message_thread_id,
        client=client,
        clock=clock,
    )


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


def deliver(
    outbox: Outbox,
    sender: Sender,
    now: datetime,
    budget: int | None = DEFAULT_SEND_BUDGET,
    checkpoint: Callable[[Outbox], None] | None = None,
) -> Delivery:
    """Send pending messages oldest first, at most ``budget`` attempts (None: no limit).

    Stops at the first retryable failure (the message stays, with attempts and last_error) and at a
    chat-wide refusal (``halted`` is set and logged once; the messages stay for when the config is
    fixed, and each later pass costs one request, not a storm). A message Telegram refuses by
    itself is dropped and remembered in ``dropped``. ``checkpoint(outbox)`` runs after every
    attempt with the outbox as it is then: the only window for a duplicate is between a send and
    that call; it also runs before each send, with the message marked as being sent. Returns the
    final outbox and a result per attempt.
    """
    results: list[DeliveryResult] = []
    while outbox.pending and (budget is None or len(results) < budget):
        head = outbox.pending[0].key
        resend = outbox.sending == head  # a process before this one sent it and never learnt more
        outbox = replace(outbox, sending=head)
        if checkpoint:
            checkpoint(outbox)  # saved before the request: see the module docstring
        outbox, result = attempt(outbox, sender, now, resend=resend)
        results.append(result)
        if checkpoint:
            checkpoint(outbox)
        if result.outcome == "kept":
            break
    return Delivery(outbox, results)


def attempt(
    outbox: Outbox, sender: Sender, now: datetime, *, resend: bool = False
) -> tuple[Outbox, DeliveryResult]:
    """Try the oldest pending message once (``resend``: marked as perhaps repeated): the outbox as
    it is after, and what became of it."""
    entry = outbox.pending[0]
    chat_before = getattr(sender, "chat_id", None)
    try:
        sent = sender.send(resent_text(entry.text) if resend else entry.text)
    except DeliveryError as error:
        # Telegram answered (a status): it did not take the message. No answer: it may have.
        outbox = replace(outbox, sending=outbox.sending if error.status is None else None)
        return _failed(outbox, entry, error, chat_before, now)
    log_event(
        "telegram_sent",
        key=entry.key,
        message_id=sent.message_id,
        chat_id=sent.chat_id,
        waited_runs=entry.attempts,
        resent=resend,
    )
    outbox = replace(outbox, sending=None)
    return _sent(outbox, sent, chat_before), DeliveryResult(entry.key, "sent", None, sent.message_id)


def resent_text(text: str) -> str:
    """``text`` under :data:`RESENT_NOTE`, or as it is when the note would make it too long."""
    marked = f"{RESENT_NOTE}\n\n{text}"
    return marked if len(marked) <= TELEGRAM_MAX_LENGTH else text


def _failed(
    outbox: Outbox, entry: PendingMessage, error: DeliveryError, chat_before: object, now: datetime
) -> tuple[Outbox, DeliveryResult]:
    if isinstance(error, PermanentChatError):
        return _halted(_kept(outbox, error, now), error, chat_before, now), _result(entry, "kept", error, now)
    if error.permanent:
        return _dropped(outbox, error, now), _result(entry, "dropped", error, now)
    log_event(
        "telegram_delivery_deferred",
        logging.WARNING,
        key=entry.key,
        attempts=entry.attempts + 1,
        error=error.description,
        pending=len(outbox.pending),
    )
    return _kept(outbox, error, now), _result(entry, "kept", error, now)


def failure_of(error: DeliveryError, now: datetime | None = None) -> DeliveryFailure:
    """A delivery error as the outbox stores it (never a traceback, never the request's URL)."""
    return DeliveryFailure(
        type(error).__name__, error.permanent, error.scope, error.status, error.description, now
    )


def _result(entry: PendingMessage, outcome: str, error: DeliveryError, now: datetime) -> DeliveryResult:
    return DeliveryResult(entry.key, outcome, failure_of(error, now))


def _kept(outbox: Outbox, error: DeliveryError, now: datetime) -> Outbox:
    """The head stays, one attempt more and why; the next pass tries it first."""
    head = outbox.pending[0]
    head = replace(head, attempts=head.attempts + 1, last_error=failure_of(error, now))
    return replace(outbox, pending=(head, *outbox.pending[1:]))


def _dropped(outbox: Outbox, error: DeliveryError, now: datetime) -> Outbox:
    head = outbox.pending[0]
    log_event("telegram_message_refused", logging.ERROR, key=head.key, error=error.description)
    dropped = DroppedMessage(head.key, head.created_at, now, failure_of(error))
    return replace(outbox, pending=outbox.pending[1:], dropped=(*outbox.dropped, dropped)[-DROPPED_KEPT:])


def _sent(outbox: Outbox, sent: Sent, chat_before: object) -> Outbox:
    head = outbox.pending[0]
    sent_keys = (*outbox.sent_keys, head.key)[-SENT_KEYS_KEPT:]
    outbox = replace(outbox, pending=outbox.pending[1:], sent_keys=sent_keys)
    if outbox.halted is not None:
        log_event("telegram_delivery_resumed", halted_since=format_utc(outbox.halted.at))
        outbox = replace(outbox, halted=None)
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


def _halted(outbox: Outbox, error: PermanentChatError, chat_id: object, now: datetime) -> Outbox:
    if outbox.halted is not None and outbox.halted.description == error.description:
        return outbox  # already said once; the next pass tries one message again, quietly
    log_event(
        "telegram_delivery_halted",
        logging.ERROR,
        status=error.status,
        error=error.description,
        hint="check the bot token, the chat id and that the bot is still in the chat",
    )
    halt = Halt(now, error.status, error.description, None if chat_id is None else str(chat_id))
    return replace(outbox, halted=halt)
