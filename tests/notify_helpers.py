"""Events, health records and a stored state for the notifier's tests.

Everything is built from the real types: events from ``monitor.engine.events``, health records through
``monitor.engine.health.record_verdict`` (as the run records them), and what "the next run reads
back" goes through the state's own encoding (``monitor.state.schema``), so a document the notifier
returns that could not be stored fails here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from monitor.engine.events import Event, HealthChanged
from monitor.engine.fleet import Fleet
from monitor.engine.health import BAD, FAIL, OK, Finding, Health, SheetHealth, record_verdict
from monitor.engine.runner_state import RunnerState
from monitor.notify.digest import Overview
from monitor.notify.documents import AlertMemory, Outbox
from monitor.notify.notifier import NotifyReport, notify
from monitor.state import schema

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
NASTY = 'Stock <Moscow> & "Co"'
FINDING = Finding("stock", "threshold", "fail", "below 10", ("A1",))


def formula_errors(cells: tuple[str, ...] = ("Stock!F7",), message: str = "2 cells show #REF!") -> Finding:
    return Finding("no errors", "formula_errors", "fail", message, cells)


def health_changed(
    sid: str, previous: Health, current: Health, name: str | None = None, at: datetime = NOW, **fields
) -> HealthChanged:
    return HealthChanged(
        at=at,
        run_id="run-1",
        spreadsheet_id=sid,
        name=name or sid,
        previous=previous,
        current=current,
        **fields,
    )


def went_bad(sid: str, name: str | None = None, at: datetime = NOW, cells=("Stock!F7",)) -> HealthChanged:
    return health_changed(sid, OK, FAIL, name, at, findings=(formula_errors(tuple(cells)),))


def came_back(
    sid: str, down: float | None = 7500, name: str | None = None, at: datetime = NOW
) -> HealthChanged:
    return health_changed(sid, FAIL, OK, name, at, down_for_seconds=down)


def bad_since(down_since: datetime, health: Health = FAIL) -> SheetHealth:
    """A spreadsheet bad since ``down_since``, with one finding, as the run records it."""
    record, _ = record_verdict(None, health, down_since, (FINDING,))
    return record


def set_health(state: RunnerState, sid: str, health: Health, now: datetime) -> None:
    """Record a check's verdict in the state, as the run does."""
    findings = (formula_errors(),) if health in BAD else ()
    state.health[sid], _ = record_verdict(state.health.get(sid), health, now, findings)


def overview_of(health: dict[str, SheetHealth], names: dict[str, str] | None = None, *, now: datetime = NOW,
                **documents) -> Overview:
    """What a reminder, summary or digest is given, as the notifier gathers it, every spreadsheet of
    ``health`` configured; ``documents``: the state's others (mutes, dlq)."""
    state = RunnerState(health=health, **documents)
    return Overview(Fleet.of(state, health, now), state.health, names or {}, state.dlq)


def stored(document):
    """``document`` (an Outbox or an AlertMemory) as the next run reads it back from the state file."""
    return _round_trip(schema.OUTBOX if isinstance(document, Outbox) else schema.ALERTS, document)


@dataclass
class Site:
    """One installation across runs: the engine's state and the notifier's two documents, stored
    back after each pass the way the run's caller stores them."""

    state: RunnerState = field(default_factory=RunnerState)
    outbox: Outbox = field(default_factory=Outbox)
    memory: AlertMemory = field(default_factory=AlertMemory)

    def add(self, *events: Event) -> None:
        for event in events:
            self.state.events.add(event)

    def notify(self, settings, sender, now: datetime, **options) -> NotifyReport:
        report = notify(self.state, self.outbox, self.memory, settings, sender, now, **options)
        self.outbox, self.memory = report.outbox, report.memory
        return report

    def next_run(self) -> Site:
        """What the next run starts from: every document through its stored form."""
        state = RunnerState(
            health={sid: _round_trip(schema.HEALTH, record) for sid, record in self.state.health.items()},
            mutes={sid: _round_trip(schema.MUTE, mute) for sid, mute in self.state.mutes.items()},
            events={int(key): _round_trip(schema.EVENT, event) for key, event in self.state.events.pending()},
            heartbeat=self.state.heartbeat and _round_trip(schema.HEARTBEAT, self.state.heartbeat),
            round=self.state.round,
        )
        return Site(state, stored(self.outbox), stored(self.memory))


def _round_trip(kind: schema.Kind, document):
    return kind.decode(kind.encode(document))
