"""The durable outbox, and ``notify``: a run's events -> messages -> the outbox -> the chat.

The outbox is plain data kept in the state file under :data:`OUTBOX`::

    {"pending": [{"key", "text", "created_at", "attempts", "last_error"}, ...],  # oldest first
     "sent_keys": [...],      # keys of the latest delivered messages (dedupe on enqueue)
     "dropped": [...],        # the latest messages Telegram refused for good, with the reason
     "halted": {...} | None,  # why no message can reach the chat now (bad token, chat not found)
     "migrations": {old chat id: new chat id},  # groups that became supergroups
     "overflowed": int}       # messages dropped because the outbox was full

Delivery order and duplicates: messages go oldest first, and the first retryable failure stops the
pass, so a later message never overtakes an earlier one. Telegram has no idempotency key, so a
message Telegram accepted is sent again when we never learnt it was accepted: the process died
before the outbox recorded it, or the answer was lost (a read timeout; a run near its deadline
gives a request as little as 1 s). :func:`deliver` records each message and calls ``checkpoint``
(the caller's atomic state save) right after each send, and stops at the first retryable failure,
so either way a pass duplicates at most one message. A caller that passes no checkpoint and saves
only at the end widens the crash window to everything sent in the pass.

The alert memory lives beside it under :data:`ALERTS` (see ``monitor.alerts``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO

from monitor.core.logs import log_event
from monitor.core.timefmt import format_utc
from monitor.notify import alerts
from monitor.notify.alerts import AlertSettings, Message, Overview
from monitor.notify.telegram import DeliveryError, PermanentChatError, PrintingSender, Sender, TelegramSender
from monitor.state.runner_state import ALERTS, OUTBOX  # the state keys, also RunnerState's attribute names

MAX_PENDING = 500  # ~a week of 5-minute runs with a message each; beyond it the oldest go
SENT_KEYS_KEPT = 500  # enough to recognise any message composed again after a crash
DROPPED_KEPT = 20
# Sends per notify pass: one group-minute's worth (Telegram: 20/min to a group), so delivery adds
# at most ~20 s of pacing to a run; a backlog drains over the next runs, oldest first.
DEFAULT_SEND_BUDGET = 20


def new_outbox() -> dict:
    return {
        "pending": [],
        "sent_keys": [],
        "dropped": [],
        "halted": None,
        "migrations": {},
        "overflowed": 0,
    }


def is_outbox(value: object) -> bool:
    """True when ``value`` has the shape :func:`enqueue` and :func:`deliver` rely on (a document
    read back from disk may have been damaged or edited by hand)."""
    if not isinstance(value, dict):
        return False
    pending = value.get("pending", [])
    return (
        isinstance(pending, list)
        and all(
            isinstance(entry, dict)
            and all(isinstance(entry.get(name), str) for name in ("key", "text", "created_at"))
            and isinstance(entry.get("attempts"), int)
            for entry in pending
        )
        and isinstance(value.get("sent_keys", []), list)
        and isinstance(value.get("dropped", []), list)
        and isinstance(value.get("migrations", {}), dict)
        and isinstance(value.get("halted"), dict | None)
        and isinstance(value.get("overflowed", 0), int)
    )


def enqueue(outbox: dict, message: Message, now: datetime) -> bool:
    """Add a message unless one with the same key is pending or was delivered; True when added."""
    key = message.key
    if key in outbox["sent_keys"] or any(entry["key"] == key for entry in outbox["pending"]):
        return False
    outbox["pending"].append(
        {
            "key": key,
            "text": message.text,
            "created_at": format_utc(now),
            "attempts": 0,
            "last_error": None,
        }
    )
    excess = len(outbox["pending"]) - MAX_PENDING
    if excess > 0:
        del outbox["pending"][:excess]
        outbox["overflowed"] = outbox.get("overflowed", 0) + excess
        log_event("outbox_overflowed", logging.WARNING, dropped=excess, kept=MAX_PENDING)
    return True


def sender_for(
    telegram_config: object,
    outbox: dict,
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


def chat_id_for(outbox: dict, configured: str | int) -> str:
    """The chat to send to: the configured one, or where its remembered migrations lead.
    Migrations recorded for another chat (the config changed since) do not apply."""
    migrations = outbox.get("migrations") or {}
    chat = str(configured)
    for _ in range(len(migrations)):  # bounded: a cycle in stored data cannot loop forever
        if chat not in migrations:
            break
        chat = str(migrations[chat])
    return chat


@dataclass(frozen=True)
class DeliveryResult:
    key: str
    outcome: str  # sent | kept (try again next run) | dropped (refused for good)
    error: dict | None = None
    message_id: int | None = None


def deliver(
    outbox: dict,
    sender: Sender,
    now: datetime,
    budget: int | None = DEFAULT_SEND_BUDGET,
    checkpoint: Callable[[], None] | None = None,
) -> list[DeliveryResult]:
    """Send pending messages oldest first, at most ``budget`` attempts (None: no limit).

    Stops at the first retryable failure (the message stays, with attempts and last_error) and at a
    chat-wide refusal (``halted`` is set and logged once; the messages stay for when the config is
    fixed, and each later pass costs one request, not a storm). A message Telegram refuses by
    itself is dropped and remembered in ``dropped``. ``checkpoint`` runs after every recorded send.
    """
    results: list[DeliveryResult] = []
    pending = outbox["pending"]
    attempted = 0
    while pending and (budget is None or attempted < budget):
        entry = pending[0]
        attempted += 1
        chat_before = getattr(sender, "chat_id", None)
        try:
            sent = sender.send(entry["text"])
        except PermanentChatError as error:
            _keep(entry, error, now)
            _halt(outbox, error, chat_before, now)
            results.append(DeliveryResult(entry["key"], "kept", error.to_dict()))
            break
        except DeliveryError as error:
            if not error.permanent:
                _keep(entry, error, now)
                log_event(
                    "telegram_delivery_deferred",
                    logging.WARNING,
                    key=entry["key"],
                    attempts=entry["attempts"],
                    error=error.description,
                    pending=len(pending),
                )
                results.append(DeliveryResult(entry["key"], "kept", error.to_dict()))
                break
            pending.pop(0)
            outbox["dropped"] = (
                outbox["dropped"]
                + [
                    {
                        "key": entry["key"],
                        "created_at": entry["created_at"],
                        "dropped_at": format_utc(now),
                        "error": error.to_dict(),
                    }
                ]
            )[-DROPPED_KEPT:]
            log_event(
                "telegram_message_refused", logging.ERROR, key=entry["key"], error=error.description
            )
            results.append(DeliveryResult(entry["key"], "dropped", error.to_dict()))
            if checkpoint:
                checkpoint()
            continue
        pending.pop(0)
        outbox["sent_keys"] = (outbox["sent_keys"] + [entry["key"]])[-SENT_KEYS_KEPT:]
        if outbox.get("halted"):
            log_event("telegram_delivery_resumed", halted_since=outbox["halted"].get("at"))
            outbox["halted"] = None
        if chat_before is not None and sent.chat_id != str(chat_before):
            outbox["migrations"][str(chat_before)] = sent.chat_id
            log_event(
                "telegram_chat_migrated",
                logging.WARNING,
                from_chat_id=str(chat_before),
                to_chat_id=sent.chat_id,
                hint="update chat_id in the config",
            )
        log_event(
            "telegram_sent",
            key=entry["key"],
            message_id=sent.message_id,
            chat_id=sent.chat_id,
            waited_runs=entry["attempts"],
        )
        results.append(DeliveryResult(entry["key"], "sent", None, sent.message_id))
        if checkpoint:
            checkpoint()  # the only window for a duplicate is between send() and this line
    return results


def _keep(entry: dict, error: DeliveryError, now: datetime) -> None:
    entry["attempts"] += 1
    entry["last_error"] = {**error.to_dict(), "at": format_utc(now)}


def _halt(outbox: dict, error: PermanentChatError, chat_id: object, now: datetime) -> None:
    previous = outbox.get("halted") or {}
    if previous.get("description") == error.description:
        return  # already said once; the next pass tries one message again, quietly
    outbox["halted"] = {
        "at": format_utc(now),
        "status": error.status,
        "description": error.description,
        "chat_id": None if chat_id is None else str(chat_id),
    }
    log_event(
        "telegram_delivery_halted",
        logging.ERROR,
        status=error.status,
        error=error.description,
        hint="check the bot token, the chat id and that the bot is still in the chat",
    )


# ---- notify: the one call the runner/CLI makes at the end of a run -------------------------------


@dataclass
class NotifyReport:
    enqueued: int = 0
    results: list[DeliveryResult] = field(default_factory=list)
    halted: dict | None = None  # set while Telegram refuses the chat as a whole
    newly_halted: bool = False  # it started refusing in this pass: the caller may emit an event

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)


def outbox_of(state: object) -> dict:
    """The state's outbox document, created (and attached to ``state``) when missing."""
    return _document(state, OUTBOX, new_outbox)


def alert_state_of(state: object) -> dict:
    return _document(state, ALERTS, dict)


def _document(state: object, key: str, make: Callable[[], dict]) -> dict:
    value = getattr(state, key, None)
    if not isinstance(value, dict):
        value = make()
        setattr(state, key, value)
    elif key == OUTBOX:
        for name, default in new_outbox().items():
            value.setdefault(name, default)
    return value


def notify(
    state: object,
    settings: AlertSettings,
    sender: Sender,
    now: datetime,
    *,
    names: Mapping[str, str] | None = None,
    checkpoint: Callable[[], None] | None = None,
    budget: int | None = DEFAULT_SEND_BUDGET,
) -> NotifyReport:
    """Turn the state's pending events (and owed reminders, summary, digest) into messages in the
    outbox, empty ``state.events``, checkpoint, then deliver oldest first.

    ``state`` is a RunnerState (events, sheets, dlq, breakers, mutes, round, plus the ``outbox`` and
    ``alerts`` documents). ``names`` maps spreadsheet ids to the config's names, for reminders and
    digests (events carry their own). Checkpoint before sending makes the composed messages durable
    first: a crash after it re-sends from the outbox, never re-composes a different message.
    """
    outbox, memory = outbox_of(state), alert_state_of(state)
    events = list(state.events)
    messages = _compose_all(state, events, settings, memory, names or {}, now)
    report = NotifyReport()
    report.enqueued = sum(1 for message in messages if enqueue(outbox, message, now))
    del state.events[: len(events)]  # events added meanwhile (none in one thread) would stay
    if checkpoint:
        checkpoint()
    halted_before = outbox.get("halted")
    report.results = deliver(outbox, sender, now, budget, checkpoint)
    report.halted = outbox.get("halted")
    report.newly_halted = bool(report.halted) and report.halted != halted_before
    return report


def _compose_all(
    state: object,
    events: list[dict],
    settings: AlertSettings,
    memory: dict,
    names: Mapping[str, str],
    now: datetime,
) -> list[Message]:
    """This run's alert, then reminders, the round summary and the digest, as owed; updates the
    alert memory as it goes."""
    muted = frozenset(state.active_mutes(now))
    known_names = _names(memory, state, names)
    messages = alerts.compose(events, state.sheets, now, settings, muted)
    changes = alerts.note_alerts(memory, events, now, muted)
    alerts.forget_healthy(memory, state.sheets)
    rnd = getattr(state, "round", None)
    if rnd is not None:
        tracked = memory.get("round") or {}
        if tracked.get("id") != rnd.id:
            tracked = memory["round"] = {"id": rnd.id, "changes": 0}
        tracked["changes"] += changes

    due = alerts.due_reminders(state.sheets, memory, now, settings.reminder_every, muted)
    messages += alerts.compose_reminder(due, state.sheets, known_names, now, settings)
    alerts.mark_reminded(memory, due, known_names, now)

    _count_reads(memory, getattr(state, "heartbeat", None) or {})
    overview = Overview(
        sheets=state.sheets,
        names=known_names,
        dlq_size=len(state.dlq),
        muted=muted,
        open_breakers=sum(1 for b in state.breakers.values() if b.get("state") != "closed"),
        reads=memory.get("reads_since_digest"),
    )
    if rnd is not None and alerts.summary_due(settings.summary, rnd.is_complete(), rnd.id, memory):
        messages += alerts.compose_summary(rnd.id, overview, now, settings)
        memory["summarized_round"] = rnd.id
    if "last_digest_at" not in memory:
        memory["last_digest_at"] = format_utc(now)  # a fresh install waits for the next digest time
    elif alerts.digest_due(now, memory["last_digest_at"], settings.digest_at, settings.timezone):
        messages += alerts.compose_digest(overview, now, settings)
        memory["last_digest_at"] = format_utc(now)
        memory["reads_since_digest"] = 0
    return messages


def _count_reads(memory: dict, heartbeat: dict) -> None:
    """Add the latest finished run's Google reads to the digest's tally, once per run."""
    run_id, stats = heartbeat.get("run_id"), heartbeat.get("stats") or {}
    if not run_id or not heartbeat.get("finished_at") or memory.get("counted_run") == run_id:
        return
    reads = sum((stats.get("reads_by_credential") or {}).values())
    memory["reads_since_digest"] = memory.get("reads_since_digest", 0) + reads
    memory["counted_run"] = run_id


def _names(memory: dict, state: object, names: Mapping[str, str] | None) -> dict[str, str]:
    known = {
        sid: entry.get("name")
        for sid, entry in memory.get("alerted", {}).items()
        if entry.get("name")
    }
    dlq = getattr(state, "dlq", None)
    for sid, entry in (getattr(dlq, "entries", None) or {}).items():
        known[sid] = entry.name
    known.update(names or {})
    return known
