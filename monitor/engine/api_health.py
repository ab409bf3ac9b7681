"""The whole-API breaker: many different spreadsheets failing in a row means Google, not them.

Within a run, :class:`ApiHealth` counts consecutive failures (transient or uncertain) across
*different* spreadsheets (a sheet failing its own retries counts once). At ``threshold`` of them the
run stops early, saves, and tells people once, instead of hundreds of per-sheet alerts. What outlives
the run is the small :class:`ApiState` value: a run that loads it degraded treats its first read as
a probe: a failure stops it again at once (no new alert), an answer clears it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document

DEFAULT_DEGRADED_AFTER = 8  # spreadsheets failing in a row: more than bad luck on a few sheets


@document
class ApiState:
    degraded: bool = False
    degraded_since: UtcTime | None = None


@dataclass(frozen=True, slots=True)
class Degraded:
    at: datetime
    failed_spreadsheets: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Recovered:
    at: datetime
    degraded_since: datetime | None


@dataclass
class ApiHealth:
    """One run's view of Google's health, starting from the stored :class:`ApiState`."""

    state: ApiState = field(default_factory=ApiState)
    threshold: int = DEFAULT_DEGRADED_AFTER
    _streak: dict[str, None] = field(default_factory=dict, repr=False)  # insertion-ordered set

    @property
    def probe_required(self) -> bool:
        """True when the next read is a single probe (the API was degraded when last seen)."""
        return self.state.degraded

    def record_answer(self, now: datetime) -> Recovered | None:
        """Google answered (a success, or a 400/403/404, which is an answer too): the streak ends."""
        self._streak.clear()
        if not self.state.degraded:
            return None
        recovered = Recovered(now, self.state.degraded_since)
        self.state = ApiState()
        return recovered

    def record_failure(self, spreadsheet_id: str, now: datetime) -> tuple[bool, Degraded | None]:
        """A transient or uncertain failure (never quota: a 429 says nothing about Google's health).

        Returns (stop the run?, the Degraded transition when this failure started an outage).
        """
        self._streak[spreadsheet_id] = None
        if self.state.degraded:
            return True, None
        if len(self._streak) < self.threshold:
            return False, None
        self.state = ApiState(degraded=True, degraded_since=now)
        return True, Degraded(now, tuple(self._streak))
