"""Per-spreadsheet circuit breakers as plain values and pure transitions.

:class:`BreakerState` is a frozen value stored in the state file; :func:`allow`, :func:`record_success`
and :func:`record_failure` take ``now`` and return the new state plus transitions, never touching a
clock or the store. The breaker does not know what it protects: transitions carry no spreadsheet id,
the run adds it when it turns them into events.

Which failures count is the breaker's own rule (as pybreaker's ``exclude``): only transient and
uncertain ones. :func:`record_failure` checks it on every call, so a mistake in the run fails loudly
instead of tripping breakers on 429s or 404s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from monitor.core.errors import ErrorClass
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document

COUNTED_ERROR_CLASSES = frozenset({ErrorClass.TRANSIENT, ErrorClass.UNCERTAIN})


class BreakerStatus(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


CLOSED, OPEN, HALF_OPEN = BreakerStatus


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    """From the config's [breaker] table (its defaults and their reasons live in monitor.config)."""

    failure_threshold: int
    cooldown: timedelta
    max_cooldown: timedelta

    def __post_init__(self) -> None:
        if self.failure_threshold < 1:
            raise ValueError(f"failure_threshold must be >= 1, got {self.failure_threshold}")


@document
class BreakerState:
    """One spreadsheet's breaker.

    ``opened_at`` is the latest (re)opening, which the cooldown counts from; ``first_opened_at`` is
    when this outage began (for "down for 2h"). In half-open, ``probe_started_at`` is when the one
    probe was let through; if that probe never reports (the run was killed), another is allowed
    once a cooldown has passed, so a crash cannot wedge the breaker half-open forever.
    """

    state: BreakerStatus = CLOSED
    consecutive_failures: int = 0
    opened_at: UtcTime | None = None
    cooldown_seconds: float = 0.0
    reopen_count: int = 0
    first_opened_at: UtcTime | None = None
    probe_started_at: UtcTime | None = None

    @property
    def is_closed(self) -> bool:
        return self.state is CLOSED

    @property
    def is_healthy(self) -> bool:
        """Closed with no failure counted: such a breaker need not be stored at all."""
        return self.state is CLOSED and self.consecutive_failures == 0

    def next_probe_at(self) -> datetime | None:
        """When :func:`allow` will next let a request through; None when closed (always)."""
        if self.state is OPEN and self.opened_at is not None:
            return self.opened_at + timedelta(seconds=self.cooldown_seconds)
        if self.state is HALF_OPEN:
            since = self.probe_started_at or self.opened_at
            if since is not None:
                return since + timedelta(seconds=self.cooldown_seconds)
        return None

    def blocks(self, now: datetime) -> bool:
        """True while open and its probe is not yet due (asking changes nothing)."""
        probe_at = self.next_probe_at()
        return probe_at is not None and now < probe_at


@dataclass(frozen=True, slots=True)
class Opened:
    """closed -> open: the alert-worthy transition.

    A failed probe (half-open -> open again) yields nothing: it is the same outage, and alerting on
    every re-open would repeat the alert at each cooldown. ``reopen_count`` and the grown
    ``cooldown_seconds`` in the state say it happened.
    """

    opened_at: datetime
    consecutive_failures: int
    cooldown_seconds: float
    probe_at: datetime


@dataclass(frozen=True, slots=True)
class Closed:
    """open/half-open -> closed; ``down_seconds`` counts from the outage's first opening."""

    closed_at: datetime
    first_opened_at: datetime | None
    down_seconds: float | None


Transition = Opened | Closed


def allow(state: BreakerState, now: datetime) -> tuple[bool, BreakerState]:
    """May a request go to this spreadsheet now? Letting the probe through moves open -> half-open.

    The cooldown boundary is inclusive: at exactly ``opened_at + cooldown`` the probe is allowed.
    Store the returned state: it records that the probe is in flight.
    """
    _require_aware(now)
    if state.state is CLOSED:
        return True, state
    probe_at = state.next_probe_at()
    if probe_at is None or now >= probe_at:
        return True, replace(state, state=HALF_OPEN, probe_started_at=now)
    return False, state


def record_success(state: BreakerState, now: datetime) -> tuple[BreakerState, list[Transition]]:
    """A read succeeded: the breaker closes (with a Closed transition if it was not closed)."""
    _require_aware(now)
    if state.state is CLOSED:
        return (replace(state, consecutive_failures=0) if state.consecutive_failures else state), []
    since = state.first_opened_at or state.opened_at
    down = (now - since).total_seconds() if since is not None else None
    return BreakerState(), [Closed(closed_at=now, first_opened_at=since, down_seconds=down)]


def record_failure(
    state: BreakerState, now: datetime, policy: BreakerPolicy, error_class: ErrorClass
) -> tuple[BreakerState, list[Transition]]:
    """A read failed with ``error_class``, which must be one the breaker counts (transient, uncertain).

    closed: counts; the ``failure_threshold``-th consecutive failure opens it for ``cooldown``.
    half-open (the probe failed): re-opens with the cooldown doubled, capped at ``max_cooldown``;
    no transition (see Opened). open (a request that was already in flight): counted, nothing else.
    """
    _require_aware(now)
    if ErrorClass(error_class) not in COUNTED_ERROR_CLASSES:
        raise ValueError(
            f"{ErrorClass(error_class).value} errors must not reach the breaker "
            "(only transient and uncertain failures count)"
        )
    base, cap = policy.cooldown.total_seconds(), policy.max_cooldown.total_seconds()
    failures = state.consecutive_failures + 1

    if state.state is CLOSED:
        if failures < policy.failure_threshold:
            return replace(state, consecutive_failures=failures), []
        cooldown = min(base, cap)
        opened = BreakerState(OPEN, failures, opened_at=now, cooldown_seconds=cooldown, first_opened_at=now)
        return opened, [Opened(now, failures, cooldown, now + timedelta(seconds=cooldown))]

    if state.state is HALF_OPEN:
        reopened = replace(
            state,
            state=OPEN,
            consecutive_failures=failures,
            opened_at=now,
            cooldown_seconds=min(max(state.cooldown_seconds, base) * 2, cap),
            reopen_count=state.reopen_count + 1,
            first_opened_at=state.first_opened_at or state.opened_at or now,
            probe_started_at=None,
        )
        return reopened, []

    return replace(state, consecutive_failures=failures), []


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime (stored times are UTC)")
