"""Per-spreadsheet health: the last verdict, since when, and which changes are worth an alert.

``health`` is the last real verdict (ok, warn, fail, error) or ``unknown`` before the first check.
Being skipped (breaker open, muted) is shown beside it, never instead of it, so that a spreadsheet
going error -> skipped -> error does not look like a recovery followed by a new failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from monitor.core.timefmt import format_utc, parse_utc

OK, WARN, FAIL, ERROR, UNKNOWN, SKIPPED = "ok", "warn", "fail", "error", "unknown", "skipped"
BAD = frozenset({FAIL, ERROR})
VERDICTS = (OK, WARN, FAIL, ERROR)


@dataclass
class SheetHealth:
    health: str = UNKNOWN
    since: str | None = None  # when ``health`` last changed
    last_checked_at: str | None = None
    skipped: str | None = None  # why the latest round skipped it, if it did
    findings: list[dict] = field(default_factory=list)  # compact results of the last check
    down_since: str | None = None  # first moment of the current bad episode (fail or error)

    @classmethod
    def from_dict(cls, data: dict) -> SheetHealth:
        return cls(**data)

    def to_dict(self) -> dict:
        return dict(vars(self))  # shallow: serialised at once, and asdict's deep copy costs per checkpoint

    @property
    def shown(self) -> str:
        return SKIPPED if self.skipped else self.health


@dataclass(frozen=True)
class Change:
    previous: str
    current: str
    down_for_seconds: float | None = None  # set when a bad episode ends


def record_verdict(record: SheetHealth, verdict: str, now: datetime, findings: list[dict]) -> Change | None:
    """Store a check's verdict; return the change when the health moved (None when it stayed)."""
    if verdict not in VERDICTS:
        raise ValueError(f"not a verdict: {verdict!r}")
    at = format_utc(now)
    record.last_checked_at = at
    record.skipped = None
    record.findings = findings
    previous = record.health
    if verdict == previous:
        return None
    record.health, record.since = verdict, at
    down_for = None
    if verdict in BAD and previous not in BAD:
        record.down_since = at
    elif verdict not in BAD and previous in BAD:
        if record.down_since:
            down_for = (now - parse_utc(record.down_since)).total_seconds()
        record.down_since = None
    return Change(previous, verdict, down_for)


def is_alerting(change: Change) -> bool:
    """Changes people hear about: into fail/error, out of them, and ok <-> warn after the first check."""
    if change.previous == UNKNOWN:
        return change.current in BAD
    return True
