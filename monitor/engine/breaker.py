"""Circuit breakers as plain data and pure transitions (SPEC 7).

Per spreadsheet: :class:`BreakerState` is a frozen value stored in the state file
(``to_dict``/``from_dict``); :func:`allow`, :func:`record_success` and :func:`record_failure` take
``now`` and return the new state plus events, never touching a clock or the store. The breaker does
not know what it protects: events carry no spreadsheet id, the runner adds it.

Only failures whose ``Decision.counts_for_breaker`` is true (transient, uncertain) may be fed to
:func:`record_failure`; it refuses quota, permanent and loading errors when told the class, so a
mistake in the runner fails loudly instead of tripping breakers on 429s.

Whole API: :class:`ApiHealth` notices many different spreadsheets failing in a row within a run,
and its persisted ``degraded`` flag makes the next run start with a single probe.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from monitor.core.errors import ErrorClass
from monitor.core.timefmt import format_utc, parse_utc

BREAKER_ERROR_CLASSES = frozenset({ErrorClass.TRANSIENT, ErrorClass.UNCERTAIN})

DEFAULT_FAILURE_THRESHOLD = 3
DEFAULT_COOLDOWN_SECONDS = 15 * 60.0
DEFAULT_MAX_COOLDOWN_SECONDS = 4 * 3600.0  # 15m doubling: 30m, 1h, 2h, then every 4h (like reminders)


class BreakerStatus(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


CLOSED, OPEN, HALF_OPEN = BreakerStatus.CLOSED, BreakerStatus.OPEN, BreakerStatus.HALF_OPEN


@dataclass(frozen=True)
class BreakerState:
    """One spreadsheet's breaker.

    ``opened_at`` is the latest (re)opening, which the cooldown counts from; ``first_opened_at`` is
    when this outage began (for "down for 2h"). In half-open, ``probe_started_at`` is when the one
    probe was let through; if that probe never reports (the run was killed), another is allowed
    once a cooldown has passed, so a crash cannot wedge the breaker half-open forever.
    """

    state: BreakerStatus = BreakerStatus.CLOSED
    consecutive_failures: int = 0
    opened_at: datetime | None = None
    cooldown_seconds: float = 0.0
    reopen_count: int = 0
    first_opened_at: datetime | None = None
    probe_started_at: datetime | None = None

    def next_probe_at(self) -> datetime | None:
        """When :func:`allow` will next let a request through; None when closed (always)."""
        if self.state is BreakerStatus.OPEN and self.opened_at is not None:
            return self.opened_at + timedelta(seconds=self.cooldown_seconds)
        if self.state is BreakerStatus.HALF_OPEN:
            since = self.probe_started_at or self.opened_at
            if since is not None:
                return since + timedelta(seconds=self.cooldown_seconds)
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state.value,
            "consecutive_failures": self.consecutive_failures,
            "opened_at": _iso(self.opened_at),
            "cooldown_seconds": self.cooldown_seconds,
            "reopen_count": self.reopen_count,
            "first_opened_at": _iso(self.first_opened_at),
            "probe_started_at": _iso(self.probe_started_at),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BreakerState:
        """Inverse of ``to_dict``; missing keys take defaults so older state files still load."""
        return cls(
            state=BreakerStatus(data.get("state", BreakerStatus.CLOSED.value)),
            consecutive_failures=int(data.get("consecutive_failures", 0)),
            opened_at=_parse(data.get("opened_at")),
            cooldown_seconds=float(data.get("cooldown_seconds", 0.0)),
            reopen_count=int(data.get("reopen_count", 0)),
            first_opened_at=_parse(data.get("first_opened_at")),
            probe_started_at=_parse(data.get("probe_started_at")),
        )


class _EventDict:
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (times as UTC ``...Z``), for stored events and log lines."""
        return {
            key: _iso(value) if isinstance(value, datetime) else value
            for key, value in asdict(self).items()  # type: ignore[call-overload]
        }


@dataclass(frozen=True)
class BreakerOpened(_EventDict):
    """closed -> open: the alert-worthy transition.

    A failed probe (half-open -> open again) emits nothing: it is the same outage, and alerting
    on every re-open would repeat the alert at each cooldown. ``reopen_count`` and the grown
    ``cooldown_seconds`` in the state say it happened.
    """

    opened_at: datetime
    consecutive_failures: int
    cooldown_seconds: float
    probe_at: datetime


@dataclass(frozen=True)
class BreakerClosed(_EventDict):
    """open/half-open -> closed; ``down_seconds`` counts from the outage's first opening."""

    closed_at: datetime
    first_opened_at: datetime | None
    down_seconds: float | None


BreakerEvent = BreakerOpened | BreakerClosed


def allow(state: BreakerState, now: datetime) -> tuple[bool, BreakerState]:
    """May a request go to this spreadsheet now? Letting the probe through moves open -> half-open.

    The cooldown boundary is inclusive: at exactly ``opened_at + cooldown`` the probe is allowed.
    Store the returned state: it records that the probe is in flight.
    """
    _require_aware(now)
    if state.state is BreakerStatus.CLOSED:
        return True, state
    probe_at = state.next_probe_at()
    if probe_at is None or now >= probe_at:
        return True, replace(state, state=BreakerStatus.HALF_OPEN, probe_started_at=now)
    return False, state


def record_success(state: BreakerState, now: datetime) -> tuple[BreakerState, list[BreakerEvent]]:
    """A read succeeded: the breaker closes (emitting BreakerClosed if it was not closed)."""
    _require_aware(now)
    if state.state is BreakerStatus.CLOSED:
        return (replace(state, consecutive_failures=0) if state.consecutive_failures else state), []
    since = state.first_opened_at or state.opened_at
    down = (now - since).total_seconds() if since is not None else None
    return BreakerState(), [BreakerClosed(closed_at=now, first_opened_at=since, down_seconds=down)]


def record_failure(
    state: BreakerState,
    now: datetime,
    threshold: int = DEFAULT_FAILURE_THRESHOLD,
    base_cooldown: float | timedelta = DEFAULT_COOLDOWN_SECONDS,
    max_cooldown: float | timedelta = DEFAULT_MAX_COOLDOWN_SECONDS,
    *,
    error_class: ErrorClass | None = None,
) -> tuple[BreakerState, list[BreakerEvent]]:
    """A read failed with a transient or uncertain error (never quota, permanent or loading).

    closed: counts; the ``threshold``-th consecutive failure opens it for ``base_cooldown``.
    half-open (the probe failed): re-opens with the cooldown doubled, capped at ``max_cooldown``;
    no event (see BreakerOpened).
    open (a request that was already in flight): counted, nothing else changes.
    Cooldowns are seconds or timedeltas. Pass ``error_class`` to have the rule checked: other
    classes raise ValueError.
    """
    _require_aware(now)
    if error_class is not None and ErrorClass(error_class) not in BREAKER_ERROR_CLASSES:
        raise ValueError(
            f"{ErrorClass(error_class).value} errors must not reach the breaker "
            "(only transient and uncertain failures count; see Decision.counts_for_breaker)"
        )
    if threshold < 1:
        raise ValueError(f"threshold must be >= 1, got {threshold}")
    base_cooldown, max_cooldown = _seconds(base_cooldown), _seconds(max_cooldown)
    failures = state.consecutive_failures + 1

    if state.state is BreakerStatus.CLOSED:
        if failures < threshold:
            return replace(state, consecutive_failures=failures), []
        cooldown = min(base_cooldown, max_cooldown)
        opened = BreakerState(
            state=BreakerStatus.OPEN,
            consecutive_failures=failures,
            opened_at=now,
            cooldown_seconds=cooldown,
            reopen_count=0,
            first_opened_at=now,
        )
        probe_at = now + timedelta(seconds=cooldown)
        return opened, [BreakerOpened(now, failures, cooldown, probe_at)]

    if state.state is BreakerStatus.HALF_OPEN:
        cooldown = min(max(state.cooldown_seconds, base_cooldown) * 2, max_cooldown)
        reopened = replace(
            state,
            state=BreakerStatus.OPEN,
            consecutive_failures=failures,
            opened_at=now,
            cooldown_seconds=cooldown,
            reopen_count=state.reopen_count + 1,
            first_opened_at=state.first_opened_at or state.opened_at or now,
            probe_started_at=None,
        )
        return reopened, []

    return replace(state, consecutive_failures=failures), []


@dataclass(frozen=True)
class ApiDegraded(_EventDict):
    """Many different spreadsheets failed in a row: one event instead of hundreds of alerts."""

    at: datetime | None
    failed_spreadsheets: tuple[str, ...]


@dataclass(frozen=True)
class ApiRecovered(_EventDict):
    at: datetime | None
    degraded_since: datetime | None


@dataclass
class ApiHealth:
    """The whole-API breaker for one run, plus the flag that outlives it.

    Call :meth:`record` after every read whose outcome says something about Google's health:
    ``ok=False`` for failures with ``Decision.counts_for_breaker`` (transient, uncertain);
    ``ok=True`` for any other answer (success, but also 400/403/404: Google answered). Do not
    call it for quota errors, which say nothing either way.

    When ``threshold`` consecutive failures span that many *different* spreadsheets (a sheet
    failing its own retries counts once), the run is degraded: stop early, save, and deliver the
    one ApiDegraded event. ``degraded`` is persisted (``to_dict``); a run that loads it set
    treats its first read as a probe: a failure returns True at once (stop again, no new event),
    a success clears it with ApiRecovered. The failure streak itself lives only within a run.
    """

    threshold: int = 8
    degraded: bool = False
    degraded_since: datetime | None = None
    _streak: dict[str, None] = field(default_factory=dict, repr=False)
    _events: list[ApiDegraded | ApiRecovered] = field(default_factory=list, repr=False)

    @property
    def probe_required(self) -> bool:
        """True when the next read is a single probe (the API was degraded when last seen)."""
        return self.degraded

    def record(self, spreadsheet_id: str, ok: bool, now: datetime | None = None) -> bool:
        """Record one read's outcome; returns True when the run should stop (API degraded)."""
        if ok:
            self._streak.clear()
            if self.degraded:
                self._events.append(ApiRecovered(at=now, degraded_since=self.degraded_since))
                self.degraded = False
                self.degraded_since = None
            return False
        self._streak[spreadsheet_id] = None  # a dict keeps first-failure order, unlike a set
        if self.degraded:
            return True
        if len(self._streak) >= self.threshold:
            self.degraded = True
            self.degraded_since = now
            self._events.append(ApiDegraded(at=now, failed_spreadsheets=tuple(self._streak)))
            return True
        return False

    def take_events(self) -> list[ApiDegraded | ApiRecovered]:
        """Events since the last call (each is returned once)."""
        events, self._events = self._events, []
        return events

    def to_dict(self) -> dict[str, Any]:
        return {"degraded": self.degraded, "degraded_since": _iso(self.degraded_since)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, threshold: int = 8) -> ApiHealth:
        data = data or {}
        return cls(
            threshold=threshold,
            degraded=bool(data.get("degraded", False)),
            degraded_since=_parse(data.get("degraded_since")),
        )


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime (stored times are UTC)")


def _seconds(value: float | timedelta) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else format_utc(value)


def _parse(value: str | None) -> datetime | None:
    return parse_utc(value) if value else None
