"""Client-side pacing of read requests, so that a healthy run sees no 429 at all.

Google (and the sandbox) count reads per credential and per project over a *rolling* 60-second
window. We therefore keep a sliding log of send times per credential and for the project, and let
a request go only if fewer than the limit were sent in the last window. That bound holds for every
rolling window by construction. A token bucket would not: with a burst of N and a refill of N/60 per
second, N requests at t=0 and N-1 more by t=59 put 2N-1 in one window; it is only safe with a burst
of 1, which wastes the first minute. The log costs one float per request in the window (<= limit).

The server counts a request when it *arrives*, we record it when we *send*; if an old request
arrived late and a new one early, the server could see two requests closer together than we did.
``margin_seconds`` (default 1 s) widens our window to absorb that; ``reserve`` keeps a few requests
per window free for anything else using the same credential (an admin's ``check ID``).

Pure over time: every call takes ``now`` as float seconds. Any steady timeline works; use epoch
seconds (``clock.time()``) if you persist the log between runs with :meth:`QuotaPacer.snapshot`,
because the previous run's last minute of requests still counts at the server. A clock that steps
back is treated as standing still. Not thread-safe: one runner thread owns it.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from monitor.config import Config
from monitor.core.tracking import document

WINDOW_SECONDS = 60.0
DEFAULT_MARGIN_SECONDS = 1.0


@document
class QuotaLog:
    """The recent sends (epoch seconds) a run leaves for the next, whose first minute they still fill."""

    window_seconds: float = WINDOW_SECONDS + DEFAULT_MARGIN_SECONDS
    sent: dict[str, tuple[float, ...]] = field(default_factory=dict)
    project: tuple[float, ...] = ()
    paused_until: dict[str, float] = field(default_factory=dict)


class QuotaPacer:
    """Chooses which credential sends the next read, and when.

    ``acquire(now)`` returns ``(credential, 0.0)`` and counts the send, or ``(None, wait)`` when
    nothing may be sent for ``wait`` seconds. Among credentials free now it picks the one with the
    fewest sends in the window, then the fewest overall, then the configured order, so N
    credentials each carry about 1/N of the reads.
    """

    def __init__(
        self,
        credentials: Sequence[str],
        per_credential: int = 60,
        per_project: int = 300,
        *,
        window_seconds: float = WINDOW_SECONDS,
        margin_seconds: float = DEFAULT_MARGIN_SECONDS,
        reserve: int = 0,
    ) -> None:
        if not credentials:
            raise ValueError("at least one credential is needed")
        if len(set(credentials)) != len(credentials):
            raise ValueError("credentials must be unique")
        if window_seconds <= 0 or margin_seconds < 0 or reserve < 0:
            raise ValueError("window_seconds must be > 0, margin_seconds and reserve >= 0")
        if min(per_credential, per_project) - reserve < 1:
            raise ValueError(
                f"limits (per credential {per_credential}, per project {per_project}) must exceed "
                f"the reserve ({reserve})"
            )
        self.credentials = tuple(credentials)
        self.per_credential = per_credential
        self.per_project = per_project
        self.window_seconds = window_seconds
        self.margin_seconds = margin_seconds
        self.reserve = reserve
        self._window = window_seconds + margin_seconds
        self._credential_limit = per_credential - reserve
        self._project_limit = per_project - reserve
        self._sent: dict[str, deque[float]] = {c: deque() for c in self.credentials}
        self._project: deque[float] = deque()
        self._paused_until: dict[str, float] = {}
        self._totals: Counter[str] = Counter()
        self._quota_errors: Counter[str] = Counter()
        self._latest = -math.inf

    @classmethod
    def from_config(cls, config: Config) -> QuotaPacer:
        """The pacer for the config's credentials and read quotas."""
        return cls(
            [str(path) for path in config.google.credentials],
            per_credential=config.google.read_requests_per_minute,
            per_project=config.google.project_read_requests_per_minute,
        )

    def acquire(self, now: float) -> tuple[str | None, float]:
        """Take a send slot at ``now`` if any credential has one; else say how long to wait."""
        now = self._advance(now)
        ready = {c: self._credential_ready_at(c, now) for c in self.credentials}
        soonest = max(self._project_ready_at(now), min(ready.values()))
        if soonest > now:
            return None, soonest - now
        order = {c: i for i, c in enumerate(self.credentials)}
        free = [c for c in self.credentials if ready[c] <= now]
        chosen = min(free, key=lambda c: (len(self._sent[c]), self._totals[c], order[c]))
        self._sent[chosen].append(now)
        self._project.append(now)
        self._totals[chosen] += 1
        return chosen, 0.0

    def reads_per_second(self) -> float:
        """The rate the limits sustain (what the run sizes its reads in flight for)."""
        return min(len(self.credentials) * self._credential_limit, self._project_limit) / self.window_seconds

    def next_ready_in(self, now: float) -> float:
        """Seconds until :meth:`acquire` would grant a slot (0.0 if now); takes nothing."""
        now = self._advance(now)
        soonest = max(
            self._project_ready_at(now),
            min(self._credential_ready_at(c, now) for c in self.credentials),
        )
        return max(0.0, soonest - now)

    def record_quota_error(self, credential: str, now: float, project_wide: bool = False) -> float:
        """A 429 came back: pause ``credential`` (or all, for the project quota) for a full window.

        A full window because requests we do not know about (another process, a previous run not
        persisted) may be what filled it; after one window nothing older can still count.
        Returns :meth:`next_ready_in`: how long until this credential (or another) may send again.
        """
        if credential not in self._sent:
            raise KeyError(f"unknown credential {credential!r}")
        now = self._advance(now)
        until = now + self._window
        self._quota_errors[credential] += 1
        for name in self.credentials if project_wide else (credential,):
            self._paused_until[name] = max(self._paused_until.get(name, -math.inf), until)
        return self.next_ready_in(now)

    def usage(self) -> dict[str, Any]:
        """Counts since this pacer was built (JSON-ready, for run stats and benchmarks)."""
        return {
            "sent": sum(self._totals.values()),
            "quota_errors": sum(self._quota_errors.values()),
            "credentials": {
                c: {
                    "sent": self._totals[c],
                    "quota_errors": self._quota_errors[c],
                    "paused_until": self._paused_until.get(c),
                }
                for c in self.credentials
            },
        }

    def snapshot(self, now: float) -> QuotaLog:
        """The sends and pauses still mattering at ``now``, to carry into the next run."""
        now = self._advance(now)
        return QuotaLog(
            window_seconds=self._window,
            sent={c: tuple(self._sent[c]) for c in self.credentials},
            project=tuple(self._project),
            paused_until={c: t for c, t in self._paused_until.items() if t > now},
        )

    def restore(self, log: QuotaLog | None) -> None:
        """Load what :meth:`snapshot` saved (same time base). Unknown credentials are ignored for
        per-credential limits; their sends still count against the project."""
        if log is None:
            return
        for c, times in log.sent.items():
            if c in self._sent:
                self._sent[c] = deque(sorted(times))
        self._project = deque(sorted(log.project))
        for c, until in log.paused_until.items():
            if c in self._sent:
                self._paused_until[c] = until
        latest = [t for sent in (*self._sent.values(), self._project) for t in sent]
        self._latest = max(latest, default=self._latest)

    def _advance(self, now: float) -> float:
        now = max(float(now), self._latest)
        self._latest = now
        for log in (*self._sent.values(), self._project):
            # Same expression as _ready_at, so float rounding cannot disagree about the boundary.
            while log and log[0] + self._window <= now:
                log.popleft()
        return now

    def _credential_ready_at(self, credential: str, now: float) -> float:
        ready = self._ready_at(self._sent[credential], self._credential_limit, now)
        return max(ready, self._paused_until.get(credential, -math.inf))

    def _project_ready_at(self, now: float) -> float:
        return self._ready_at(self._project, self._project_limit, now)

    def _ready_at(self, log: deque[float], limit: int, now: float) -> float:
        # A send at s stops counting at s + window; a slot frees when the count drops below limit.
        excess = len(log) - limit
        if excess < 0:
            return now
        return log[excess] + self._window


def round_estimate(
    spreadsheets: int,
    credentials: int,
    per_credential: int = 60,
    per_project: int = 300,
    *,
    window_seconds: float = WINDOW_SECONDS,
) -> float:
    """Seconds a round of one read per spreadsheet needs at the sustained quota rate.

    The rate is ``min(credentials * per_credential, per_project)`` reads per window: 700 sheets
    with one credential at 60/min take 700 s (11.7 min), with three 233 s (3.9 min). The first
    window's burst makes a real round up to one window shorter; this is the figure to plan with.
    """
    if credentials < 1:
        raise ValueError("at least one credential is needed")
    per_window = min(credentials * per_credential, per_project)
    return spreadsheets * window_seconds / per_window


def credentials_needed(
    spreadsheets: int,
    within_seconds: float,
    per_credential: int = 60,
    per_project: int = 300,
    *,
    window_seconds: float = WINDOW_SECONDS,
) -> int | None:
    """How many credentials let a round finish within ``within_seconds``; None if the project
    quota alone makes it impossible (more credentials would not help)."""
    needed_per_window = spreadsheets * window_seconds / within_seconds
    if needed_per_window > per_project:
        return None
    return max(1, math.ceil(needed_per_window / per_credential))
