"""``notify``: the one call a run makes at its end: the run's events, and the reminders, round summary
and digest that are owed, become messages in the outbox, and the outbox goes to the chat.

It works on the engine's ``RunnerState`` (events, health, DLQ, breakers, mutes, round, heartbeat)
and on the notifier's own two documents, the outbox and the alert memory, passed in and handed back
as values: the caller stores them in its state and saves (see ``monitor.notify.documents``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from monitor.engine.events import DeliveryHalted, Event
from monitor.engine.state import RunnerState
from monitor.notify.alerts import compose_alert
from monitor.notify.destinations import DEFAULT, Destination, all_halts
from monitor.notify.digest import Overview, compose_reminder, daily_digest, round_summary
from monitor.notify.documents import AlertMemory, Halt, Outbox
from monitor.notify.memory import (
    count_reads,
    count_round_changes,
    due_reminders,
    forget_healthy,
    known_names,
    mark_reminded,
    note_alerts,
    reads_known,
)
from monitor.notify.messages import Message
from monitor.notify.outbox import DEFAULT_SEND_BUDGET, DeliveryResult, deliver, enqueue
from monitor.notify.routing import Routing, routed
from monitor.notify.settings import AlertSettings
from monitor.notify.telegram import Sender


@dataclass(frozen=True)
class NotifyReport:
    outbox: Outbox  # as it is after this pass: the caller stores it
    memory: AlertMemory  # likewise
    enqueued: int = 0
    results: tuple[DeliveryResult, ...] = ()
    halted: Halt | None = None  # set while Telegram refuses the chat as a whole
    newly_halted: bool = False  # it started refusing in this pass: the caller may emit an event

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    def halted_event(self, now: datetime, run_id: str) -> DeliveryHalted | None:
        """The event a caller keeps when delivery newly halted, so that the first message after the
        chat works again says why the others came late (None otherwise)."""
        if not self.newly_halted or self.halted is None:
            return None
        halt = self.halted
        return DeliveryHalted(
            at=now, run_id=run_id, since=halt.at, status=halt.status, description=halt.description
        )


def notify(
    state: RunnerState,
    outbox: Outbox,
    memory: AlertMemory,
    settings: AlertSettings,
    sender: Sender,
    now: datetime,
    *,
    names: Mapping[str, str] | None = None,
    checkpoint: Callable[[Outbox, AlertMemory], None] | None = None,
    budget: int | None = DEFAULT_SEND_BUDGET,
    routing: Routing | None = None,
) -> NotifyReport:
    """Turn the state's pending events (and owed reminders, summary, digest) into messages in the
    outbox, remove those events from ``state.events``, checkpoint, then deliver oldest first.

    ``names`` maps spreadsheet ids to the config's names, for reminders and digests (events carry
    their own). ``checkpoint(outbox, memory)`` is the caller's save: called once the composed
    messages are in the outbox and their events removed (so a crash after it re-sends from the
    outbox, never re-composes a different message), then after each send. Events added to the state
    meanwhile (none in one thread) stay for the next pass. ``routing`` says which chat hears about
    which spreadsheet, and who owns it (default: one chat, no owners).
    """
    pending = state.events.pending()
    memory, composed = compose_all(state, [event for _, event in pending], memory, settings, names, now,
                                   routing or Routing())
    enqueued = 0
    for destination, messages in composed.items():
        outbox, added = enqueue(outbox, messages, now, destination)
        enqueued += added
    state.events.remove([key for key, _ in pending])
    if checkpoint:
        checkpoint(outbox, memory)
    halts_before = all_halts(outbox)
    outbox, results = deliver(
        outbox, sender, now, budget, (lambda sent: checkpoint(sent, memory)) if checkpoint else None
    )
    new_halts = [halt for chat, halt in all_halts(outbox).items() if halts_before.get(chat) != halt]
    return NotifyReport(
        outbox=outbox,
        memory=memory,
        enqueued=enqueued,
        results=tuple(results),
        halted=new_halts[0] if new_halts else outbox.halted,
        newly_halted=bool(new_halts),
    )


def compose_all(
    state: RunnerState,
    events: Sequence[Event],
    memory: AlertMemory,
    settings: AlertSettings,
    names: Mapping[str, str] | None,
    now: datetime,
    routing: Routing | None = None,
) -> tuple[AlertMemory, dict[Destination, list[Message]]]:
    """This run's alert, then reminders, the round summary and the digest, as owed, by destination
    (an alert and a reminder per chat that has something to say; the summary and the digest in the
    default chat); and the alert memory as it is after composing them."""
    routing = routing or Routing()
    muted = frozenset(state.active_mutes(now))
    known = known_names(memory, state.dlq, names)
    composed: dict[Destination, list[Message]] = {DEFAULT: []}
    for destination, part in routing.split_events(events).items():
        health = {sid: record for sid, record in state.health.items() if routing.of(sid) == destination}
        composed[destination] = compose_alert(part, health, settings, muted, routing.owners)
    memory, changes = note_alerts(memory, events, now, muted)
    memory = forget_healthy(memory, state.health)
    if state.round is not None:
        memory = count_round_changes(memory, state.round.id, changes)

    due = due_reminders(state.health, memory, now, settings.reminder_every, muted)
    for destination, part in routing.split(due, lambda sid: sid).items():
        reminder = compose_reminder(part, state.health, known, now, settings)
        composed.setdefault(destination, []).extend(reminder)
    memory = mark_reminded(memory, due, known, now)

    memory = count_reads(memory, state.heartbeat)
    overview = Overview(
        health=state.health,
        names=known,
        dlq_size=len(state.dlq),
        open_breakers=len(state.open_breakers()),
        muted=muted,
        reads=reads_known(memory),
    )
    memory, summary = round_summary(memory, state.round, overview, now, settings)
    memory, digest = daily_digest(memory, overview, now, settings)
    composed[DEFAULT] += summary + digest
    return memory, {destination: routed(destination, messages)
                    for destination, messages in composed.items() if messages}
