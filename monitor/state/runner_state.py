"""What the runner keeps between runs, and how it maps onto the key-value state file.

The store knows nothing of these keys; this module is the one place that does. Each key holds one
JSON document, as Apps Script's PropertiesService did. Readers other than the runner (the CLI, the
watchdog) use the same names through ``load_state``; only a run holding the run lock saves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from monitor.core.timefmt import parse_utc
from monitor.engine.dlq import DeadLetters
from monitor.engine.health import SheetHealth
from monitor.engine.tasks import Round

ROUND = "round"  # the current round and its tasks
SHEETS = "sheets"  # spreadsheet id -> SheetHealth
BREAKERS = "breakers"  # spreadsheet id -> breaker state (only spreadsheets that ever failed)
DLQ = "dlq"  # spreadsheet id -> dead letter
EVENTS = "events"  # events not yet handed to people, oldest first
HEARTBEAT = "heartbeat"  # the latest run's start, finish, outcome and stats (the watchdog reads it)
RUNS = "runs"  # outcomes of the latest runs, newest last
API = "api"  # whole-API health between runs: degraded since when, probe owed
QUOTA = "quota"  # recent send times per credential, so a new run does not burst past a window
MUTES = "mutes"  # spreadsheet id -> {"until", "reason"}
FLAGS = "flags"  # one-shot alert memory, e.g. which round was already reported as behind
OUTBOX = "outbox"  # messages waiting for Telegram, and delivery memory (monitor.outbox)
ALERTS = "alerts"  # who was alerted when, last digest (monitor.alerts)

KEYS = (ROUND, SHEETS, BREAKERS, DLQ, EVENTS, HEARTBEAT, RUNS, API, QUOTA, MUTES, FLAGS, OUTBOX, ALERTS)

EVENTS_LIMIT = 1000  # undelivered events kept; beyond it the oldest go (the notifier summarises anyway)
RUNS_LIMIT = 20


@dataclass
class RunnerState:
    round: Round | None = None
    sheets: dict[str, SheetHealth] = field(default_factory=dict)
    breakers: dict[str, dict] = field(default_factory=dict)
    dlq: DeadLetters = field(default_factory=DeadLetters)
    events: list[dict] = field(default_factory=list)
    heartbeat: dict = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)
    api: dict = field(default_factory=dict)
    quota: dict = field(default_factory=dict)
    mutes: dict[str, dict] = field(default_factory=dict)
    flags: dict = field(default_factory=dict)
    outbox: dict = field(default_factory=dict)
    alerts: dict = field(default_factory=dict)

    def health(self, spreadsheet_id: str) -> SheetHealth:
        record = self.sheets.get(spreadsheet_id)
        if record is None:
            record = self.sheets[spreadsheet_id] = SheetHealth()
        return record

    def active_mutes(self, now: datetime) -> dict[str, dict]:
        """Mutes in force at ``now``; a mute without an end, or one that has ended, silences nothing."""
        return {sid: mute for sid, mute in self.mutes.items() if _in_force(mute, now)}

    def add_event(self, event: dict) -> None:
        self.events.append(event)
        del self.events[:-EVENTS_LIMIT]

    def add_run(self, summary: dict) -> None:
        self.runs.append(summary)
        del self.runs[:-RUNS_LIMIT]


def _in_force(mute: dict, now: datetime) -> bool:
    return bool(mute.get("until")) and parse_utc(mute["until"]) > now


def _get(properties: dict[str, str], key: str, default):
    text = properties.get(key)
    return default if text is None else json.loads(text)


def load_state(properties: dict[str, str]) -> RunnerState:
    """Build the runner's state from the store's properties (absent keys are a fresh start)."""
    round_data = _get(properties, ROUND, None)
    return RunnerState(
        round=Round.from_dict(round_data) if round_data else None,
        sheets={key: SheetHealth.from_dict(value) for key, value in _get(properties, SHEETS, {}).items()},
        breakers=_get(properties, BREAKERS, {}),
        dlq=DeadLetters.from_dict(_get(properties, DLQ, {})),
        events=_get(properties, EVENTS, []),
        heartbeat=_get(properties, HEARTBEAT, {}),
        runs=_get(properties, RUNS, []),
        api=_get(properties, API, {}),
        quota=_get(properties, QUOTA, {}),
        mutes=_get(properties, MUTES, {}),
        flags=_get(properties, FLAGS, {}),
        outbox=_get(properties, OUTBOX, {}),
        alerts=_get(properties, ALERTS, {}),
    )


def dump_state(state: RunnerState) -> dict[str, str]:
    """The properties that represent ``state``; written together in one atomic store write."""
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    values = {
        ROUND: state.round.to_dict() if state.round else None,
        SHEETS: {key: record.to_dict() for key, record in state.sheets.items()},
        BREAKERS: state.breakers,
        DLQ: state.dlq.to_dict(),
        EVENTS: state.events,
        HEARTBEAT: state.heartbeat,
        RUNS: state.runs,
        API: state.api,
        QUOTA: state.quota,
        MUTES: state.mutes,
        FLAGS: state.flags,
        OUTBOX: state.outbox,
        ALERTS: state.alerts,
    }
    return {key: json.dumps(value, **compact) for key, value in values.items()}
