"""``notify``: the one call a run makes at its end: the run's events, and the reminders, round summary
and digest that are owed, become messages in the outbox, and the outbox goes to the chat.

It works on the engine's ``RunnerState`` (events, health, DLQ, breakers, mutes, round, heartbeat)
and on the notifier's own two documents, the outbox and the alert memory, passed in and handed back
as values: the caller stores them in its state and saves (see ``monitor.notify.documents``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from monitor.config import MaintenanceWindow
from monitor.engine.events import Event, SheetEvent
from monitor.engine.fleet import Fleet, configured_ids
from monitor.engine.incidents import Told
from monitor.engine.maintenance import in_force
from monitor.engine.runner_state import RunnerState
from monitor.notify.alerts import Buttons, alert_items, compose_alert, no_buttons, shown_sheets
from monitor.notify.buttons import Offer, Signer, incidents_of, joined_keyboards, keyboard
from monitor.notify.crashes import fold_crashes
from monitor.notify.destinations import DEFAULT, Destination, all_halts
from monitor.notify.digest import Overview, compose_relearned, compose_reminder, daily_digest, round_summary
from monitor.notify.documents import AlertMemory, Halt, Keyboard, Outbox
from monitor.notify.escalation import compose_escalation, due_escalations, mark_escalated
from monitor.notify.flood import is_flood
from monitor.notify.maintenance import window_changes
from monitor.notify.memory import (
    announced_only,
    count_round_changes,
    due_reminders,
    forget_healthy,
    known_names,
    mark_reminded,
    note_alerts,
)
from monitor.notify.messages import Message, fingerprint, messages_for
from monitor.notify.outbox import DEFAULT_SEND_BUDGET, DeliveryResult, deliver, enqueue
from monitor.notify.relearning import held_back, relearned, relearning_round
from monitor.notify.routing import Routing, routed
from monitor.notify.settings import AlertSettings
from monitor.notify.telegram import Sender, Sent


@dataclass(frozen=True)
class NotifyReport:
    outbox: Outbox  # as it is after this pass: the caller stores it
    memory: AlertMemory  # likewise
    enqueued: int = 0
    results: tuple[DeliveryResult, ...] = ()
    halted: Halt | None = None  # a chat Telegram refuses as a whole, after this pass (None: none)

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)



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
    signer: Signer | None = None,
    maintenance: Sequence[MaintenanceWindow] = (),
) -> NotifyReport:
    """Turn the state's pending events (and owed reminders, summary, digest) into messages in the
    outbox, remove those events from ``state.events``, checkpoint, then deliver oldest first.

    ``names`` maps spreadsheet ids to the config's names, for reminders and digests (events carry
    their own). ``checkpoint(outbox, memory)`` is the caller's save: called once the composed
    messages are in the outbox and their events removed (so a crash after it re-sends from the
    outbox, never re-composes a different message), then after each send. Events added to the state
    meanwhile (none in one thread) stay for the next pass. ``routing`` says which chat hears about
    which spreadsheet, and who owns it (default: one chat, no owners). ``signer`` (the bot token's):
    alert and reminder lines get buttons for their spreadsheets' incidents, and each message Telegram
    takes is recorded on the incidents it tells; None: no buttons (printed messages, no token).
    ``maintenance``: the config's maintenance windows (``Config.maintenance``; the chat's are the
    state's): what they cover is silenced, and their beginnings and ends are told.
    """
    pending = state.events.pending()
    memory, composed = compose_all(state, [event for _, event in pending], memory, settings, names, now,
                                   routing or Routing(), signer, maintenance)
    enqueued = 0
    for destination, messages in composed.items():
        outbox, added = enqueue(outbox, messages, now, destination)
        enqueued += added
    state.events.remove([key for key, _ in pending])
    if checkpoint:
        checkpoint(outbox, memory)
    outbox, results = deliver(
        outbox, sender, now, budget, (lambda sent: checkpoint(sent, memory)) if checkpoint else None,
        on_sent=lambda entry, sent: record_told(state, entry.keyboard, sent, now),
    )
    halts = all_halts(outbox)
    return NotifyReport(outbox=outbox, memory=memory, enqueued=enqueued, results=tuple(results),
                        halted=outbox.halted or next(iter(halts.values()), None))


def compose_all(
    state: RunnerState,
    events: Sequence[Event],
    memory: AlertMemory,
    settings: AlertSettings,
    names: Mapping[str, str] | None,
    now: datetime,
    routing: Routing | None = None,
    signer: Signer | None = None,
    maintenance: Sequence[MaintenanceWindow] = (),
) -> tuple[AlertMemory, dict[Destination, list[Message]]]:
    """This run's alert, reminders, the round summary and the digest, as owed, as ONE message per
    chat (split only when longer than ``max_length``): each chat's alert, reminder, summary and digest
    about its own spreadsheets (``routing``); and the alert memory as it is after composing them.

    What the team hears for each change is docs/operations.md's table "What the team hears": the
    run's events less the resolutions of what nobody was told and the crashes already told. Every
    count is the configured spreadsheets' fleet (``names``' ids; None: every one the state holds).
    A spreadsheet under maintenance (``maintenance``, the config's windows, and the state's) is
    silenced as a muted one is; a window's beginning and end are lines of the alert. A failing
    incident nobody acknowledged for ``settings.escalate_after`` is escalated once
    (``monitor.notify.escalation``): recorded on the incident, which the caller saves with the rest.
    """
    routing = routing or Routing()
    fleet = Fleet.of(state, configured_ids(names, state), now, maintenance)
    muted = frozenset(state.active_mutes(now)) | fleet.silenced
    known = known_names(memory, state.dlq, names)
    run_id = state.heartbeat.run_id if state.heartbeat else ""
    events, memory = fold_crashes(announced_only(events, memory), memory, now, run_id)
    events = [named_as_known(event, known) for event in events]
    # After a lost state, first verdicts wait for one list (monitor.notify.relearning); they are
    # noted as told below all the same.
    shown, _ = held_back(events, memory)
    memory, windows_told = window_changes(memory, in_force(maintenance, state.maintenance, now), fleet, known,
                                          routing, now, run_id, settings.max_items)
    work = _Composition(state, settings, routing, fleet, known, offered(state, signer, now), now)
    flooded = _alerts(work, shown, windows_told, muted)
    memory, changes = note_alerts(memory, events, now, muted)
    memory = forget_healthy(memory, state.health)
    if state.round is not None:
        memory = count_round_changes(memory, state.round.id, changes)
    escalated_here = _escalations(work)
    memory = _reminders(work, memory, escalated_here)
    memory = _summaries(work, memory, flooded)
    return memory, {destination: routed(destination, one_message(messages, settings.max_length))
                    for destination, messages in work.composed.items() if messages}


@dataclass
class _Composition:
    """What the steps composing one run's messages share, and the messages made so far per chat."""

    state: RunnerState
    settings: AlertSettings
    routing: Routing
    fleet: Fleet
    known: Mapping[str, str]
    buttons: Buttons
    now: datetime
    composed: dict[Destination, list[Message]] = field(default_factory=lambda: {DEFAULT: []})
    # Shown above in the same message: a summary's list leaves them out.
    named: set[str] = field(default_factory=set)

    def add(self, destination: Destination, messages: Sequence[Message]) -> None:
        self.composed.setdefault(destination, []).extend(messages)

    def overview(self, destination: Destination) -> Overview:
        return _overview(self.state, self.fleet, self.known, self.routing, destination, self.named)


def _alerts(work: _Composition, shown: Sequence[Event], windows_told: Mapping[Destination, list[Event]],
            muted: frozenset[str]) -> set[Destination]:
    """Each chat's alert about its own spreadsheets, maintenance windows' lines included; returns the
    chats whose alert took the short form (it counted everything: no summary after it)."""
    parts = work.routing.split_events(shown)
    for destination, told in windows_told.items():
        parts[destination] = [*parts.get(destination, []), *told]
    flooded: set[Destination] = set()
    for destination, part in parts.items():
        work.composed[destination] = compose_alert(part, work.routing.part(work.fleet, destination),
                                                   work.settings, muted, work.routing.owners, work.buttons,
                                                   acknowledged_troubles(work.state))
        work.named |= shown_sheets(part, muted, work.settings.max_items)
        if is_flood(alert_items(part, muted), work.settings):
            flooded.add(destination)
    return flooded


def _escalations(work: _Composition) -> set[str]:
    """Failing incidents nobody acknowledged, told once more where their escalation goes (recorded on
    the incidents); returns those escalated in the spreadsheet's own chat, whose reminder then waits:
    the escalation says all it would."""
    state, routing = work.state, work.routing
    escalated = due_escalations(state.incidents, work.fleet, work.settings.escalate_after, work.now)
    for destination, part in routing.escalations(escalated).items():
        work.add(destination, compose_escalation(part, state.incidents, work.fleet, routing.owners, work.now,
                                                 work.settings, work.buttons))
    mark_escalated(state, escalated, work.now)
    return {sid for sid in escalated if routing.escalation_of(sid) == routing.of(sid)}


def _reminders(work: _Composition, memory: AlertMemory, escalated_here: set[str]) -> AlertMemory:
    """Reminders of what still fails, in each spreadsheet's chat. An acknowledged incident has someone
    on it: no reminders (the digest still lists it)."""
    state, settings = work.state, work.settings
    unacknowledged = [sid for sid in work.fleet.failing if not _acknowledged_now(state, sid)]
    due = due_reminders(unacknowledged, state.health, memory, work.now, settings.reminder_every)
    reminded = [sid for sid in due if sid not in escalated_here]
    for destination, part in work.routing.split(reminded, lambda sid: sid).items():
        work.add(destination, compose_reminder(part, work.overview(destination), work.now, settings,
                                               work.buttons))
        work.named.update(part[:settings.max_items])  # as the reminder lists them
    told = [*due, *(sid for sid in escalated_here if sid not in due)]
    return mark_reminded(memory, told, work.known, work.now)


def _summaries(work: _Composition, memory: AlertMemory, flooded: set[Destination]) -> AlertMemory:
    """The round summary and the daily digest in each chat, as owed; after a lost state, the one list
    of what fails instead of the summary."""
    state, settings, now = work.state, work.settings, work.now
    memory = relearning_round(memory, state.round)
    summarized = memory
    lost_at = memory.relearning.since if relearned(memory, state.round) else None
    for destination in work.routing.chats():
        # The memory a summary or digest leaves does not depend on what it lists: the same for each.
        overview = work.overview(destination)
        memory, summary = round_summary(summarized, state.round, overview, now, settings)
        memory, digest = daily_digest(memory, overview, now, settings)
        if lost_at is not None:
            summary = compose_relearned(overview, lost_at, now, settings)  # the list says all a summary would
        elif destination in flooded:
            summary = []
        work.add(destination, summary + digest)
    return replace(memory, relearning=None) if lost_at is not None else memory


def offered(state: RunnerState, signer: Signer | None, now: datetime) -> Buttons:
    """The rows under a message naming some spreadsheets: for each with an open incident, what can be
    done about it now (no buttons without a signer)."""
    if signer is None:
        return no_buttons

    def rows(spreadsheet_ids: list[str]) -> Keyboard:
        offers = [Offer(incident, state.is_muted(sid, now)) for sid in spreadsheet_ids
                  if (incident := state.incidents.get(sid)) is not None and incident.is_open]
        return keyboard(offers, signer)

    return rows


def _acknowledged_now(state: RunnerState, spreadsheet_id: str) -> bool:
    incident = state.incidents.get(spreadsheet_id)
    return incident is not None and incident.is_open and incident.acknowledged


def acknowledged_troubles(state: RunnerState) -> dict[str, str]:
    """Who acknowledged each spreadsheet's latest incident, for the line saying it is over."""
    return {sid: incident.acked_by for sid, incident in state.incidents.items() if incident.acked_by}


def record_told(state: RunnerState, rows: Keyboard, sent: Sent, now: datetime) -> None:
    """Telegram took a message with buttons: the incidents they name keep its id, so a press on it
    is known for theirs (``monitor.notify.buttons``) and its buttons can be changed."""
    if not rows or sent.message_id is None:
        return
    places = {incident_id: place for place, incident_id in enumerate(incidents_of(rows))}
    for sid, incident in list(state.incidents.items()):
        if incident.id in places:
            told = Told(sent.chat_id, sent.message_id, now, places[incident.id])
            state.incidents[sid] = incident.with_told(told)


def named_as_known(event: Event, known: Mapping[str, str]) -> Event:
    """``event`` with the spreadsheet's name when the engine had none to give it (one that left the
    config is named as people were last told)."""
    if isinstance(event, SheetEvent) and not event.name:
        return replace(event, name=known.get(event.spreadsheet_id, event.spreadsheet_id))
    return event


def _overview(state: RunnerState, fleet: Fleet, known: Mapping[str, str], routing: Routing,
              destination: Destination, named: set[str]) -> Overview:
    """What a reminder, summary or digest in ``destination``'s chat reports: its own spreadsheets."""
    part = routing.part(fleet, destination)
    return Overview(fleet=part, health=state.health, names=known, dlq=state.dlq,
                    named=frozenset(sid for sid in named if sid in part))


def one_message(messages: Sequence[Message], max_length: int) -> list[Message]:
    """The run's messages joined into one (one message per run: a summary a second after the alert
    read as a repeat), split again only when longer than ``max_length``. Its key is made of theirs,
    so the same parts composed again are recognised."""
    if len(messages) <= 1:
        return list(messages)
    key = "run:" + fingerprint([message.key for message in messages])
    rows = joined_keyboards(message.keyboard for message in messages)
    return messages_for(key, "\n\n".join(message.text for message in messages), max_length, rows)
