"""Events: what the run and the watchdog tell the notifier. Produced on changes of state only.

An event is plain data, stored in the state file until the notifier has turned it into a message, so
a crash between producing and delivering loses nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

from monitor.core.timefmt import format_utc

HEALTH_CHANGED = "health_changed"  # a spreadsheet went to fail/warn/error or came back
DEAD_LETTERED = "dead_lettered"  # a spreadsheet could not be read and went to the DLQ
RECOVERED = "recovered"  # a dead-lettered sheet was read again; with details.api: Google, after API_DEGRADED
BREAKER_OPENED = "breaker_opened"
BREAKER_CLOSED = "breaker_closed"
API_DEGRADED = "api_degraded"  # many spreadsheets failing in a row: Google, not them
FALLING_BEHIND = "falling_behind"  # a round still unfinished after behind_after_intervals round intervals
CRASH_RECOVERED = "crash_recovered"  # the previous run died holding tasks
STATE_RESTORED = "state_restored"  # the state file was unreadable; the last good copy was used
# A range in the config does not exist in the spreadsheet. Not emitted yet: a 400 on a bad range is
# dead-lettered (DEAD_LETTERED, details.error.range names it); alerts can already render this kind.
CONFIG_PROBLEM = "config_problem"
DELIVERY_HALTED = "delivery_halted"  # Telegram refused the chat (token revoked, bot gone); told when it works

KINDS = frozenset({
    HEALTH_CHANGED, DEAD_LETTERED, RECOVERED, BREAKER_OPENED, BREAKER_CLOSED, API_DEGRADED,
    FALLING_BEHIND, CRASH_RECOVERED, STATE_RESTORED, CONFIG_PROBLEM, DELIVERY_HALTED,
})


@dataclass(frozen=True)
class Event:
    kind: str
    at: str  # UTC ISO-8601
    run_id: str
    spreadsheet_id: str | None = None
    name: str | None = None  # the spreadsheet's name from the config, for people
    details: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown event kind {self.kind!r}")

    @classmethod
    def make(cls, kind: str, now: datetime, run_id: str, **fields) -> Event:
        return cls(kind=kind, at=format_utc(now), run_id=run_id, **fields)

    def to_dict(self) -> dict:
        return asdict(self)
