"""Google's per-minute Sheets quotas: reads and writes, per user and per project.

Windows are rolling: a request is admitted when fewer than ``limit`` requests of its kind were admitted
in the last 60 seconds (for its user, and for its user's project). Every Cloud project has its own
project windows, as at Google, where the limits are "per minute per project" and "per minute per user
per project" (developers.google.com/sheets/api/limits); the limits themselves are the same for every
project, as Google's defaults are. Google describes its quotas as
"per minute" and refills them continuously; a rolling window is the stricter reading, so a client that
stays under it here stays under it at Google. Refused requests are not counted, like at Google.
Only time from the injected clock is used, so tests move a ManualClock instead of waiting a minute.
"""

from __future__ import annotations

import threading
from collections import deque

from . import errors
from .http import Response
from .projects import DEFAULT_PROJECT_ID, project_number

WINDOW_SECONDS = 60.0
KINDS = ("read", "write")
_LIMIT_NAMES = ("read_per_user", "read_per_project", "write_per_user", "write_per_project")


class QuotaMeter:
    """Counts admitted Sheets requests per (kind, user) and per (kind, project). Thread-safe."""

    def __init__(
        self,
        clock,
        read_per_user: int = 60,
        read_per_project: int = 300,
        write_per_user: int = 60,
        write_per_project: int = 300,
    ) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._limits: dict[str, int] = {}
        self.set_limits(
            read_per_user=read_per_user,
            read_per_project=read_per_project,
            write_per_user=write_per_user,
            write_per_project=write_per_project,
        )
        self._by_user: dict[tuple[str, str], deque[float]] = {}
        self._by_project: dict[tuple[str, str], deque[float]] = {}

    def set_limits(self, **limits: int) -> None:
        """Change any of read_per_user, read_per_project, write_per_user, write_per_project.

        Raises ValueError naming the key for an unknown name or a limit that is not a positive int.
        Counts already in the window are kept, so lowering a limit can refuse the next request at once.
        """
        check_limits(limits, _LIMIT_NAMES, "quota")
        with self._lock:
            self._limits.update(limits)

    def limits(self) -> dict[str, int]:
        with self._lock:
            return dict(self._limits)

    def admit(self, user: str, kind: str, project: str = DEFAULT_PROJECT_ID) -> Response | None:
        """None when the request is allowed (and counted); else Google's 429, not counted.

        ``project`` is the Cloud project of ``user`` (``projects.project_of``): its window is the
        one the request counts against, and its number is the consumer a 429 names. The per-user
        quota is checked before the project's, so one busy account sees the per-user message while
        the project still has room.
        """
        kind = kind.lower()
        if kind not in KINDS:
            raise ValueError(f"unknown request kind {kind!r}; expected one of {KINDS}")
        now = self._clock.time()
        with self._lock:
            user_window = self._by_user.setdefault((kind, user), deque())
            project_window = self._by_project.setdefault((kind, project), deque())
            expire(user_window, now)
            expire(project_window, now)
            user_limit = self._limits[f"{kind}_per_user"]
            project_limit = self._limits[f"{kind}_per_project"]
            if len(user_window) >= user_limit:
                return errors.quota_exceeded(kind.capitalize(), "user", user_limit, project_number(project))
            if len(project_window) >= project_limit:
                return errors.quota_exceeded(
                    kind.capitalize(), "project", project_limit, project_number(project)
                )
            user_window.append(now)
            project_window.append(now)
        return None

    def usage(self) -> dict:
        """Requests counted in the current window, per kind: for each project and for each user.

        Only windows holding requests are listed: ``{"read": {"projects": {"sheet-monitor-sandbox":
        12}, "users": {email: 12}}, "write": ...}``.
        """
        now = self._clock.time()
        with self._lock:
            result: dict = {"window_seconds": WINDOW_SECONDS, "limits": dict(self._limits)}
            for kind in KINDS:
                result[kind] = {
                    "projects": _counts(self._by_project, kind, now),
                    "users": _counts(self._by_user, kind, now),
                }
        return result

    def reset(self) -> None:
        """Empty every window (limits stay as set)."""
        with self._lock:
            self._by_user.clear()
            self._by_project.clear()


def _counts(windows: dict[tuple[str, str], deque[float]], kind: str, now: float) -> dict[str, int]:
    """Name -> requests still in the window, for the non-empty windows of ``kind``."""
    return window_counts({name: window for (window_kind, name), window in windows.items()
                          if window_kind == kind}, now)


def check_limits(limits: dict[str, int], allowed: tuple[str, ...], what: str) -> None:
    """ValueError naming the key for a limit not in ``allowed`` or not a positive integer."""
    for name, value in limits.items():
        if name not in allowed:
            raise ValueError(f"unknown {what} {name!r}; allowed: {', '.join(allowed)}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{what} {name!r} must be a positive integer, got {value!r}")


def window_counts(windows: dict[str, deque[float]], now: float) -> dict[str, int]:
    """Name -> requests still in the window, for the windows holding any."""
    counts = {}
    for name, window in windows.items():
        expire(window, now)
        if window:
            counts[name] = len(window)
    return counts


def expire(window: deque[float], now: float) -> None:
    """Drop admissions older than the window; one exactly 60 s old no longer counts."""
    while window and window[0] <= now - WINDOW_SECONDS:
        window.popleft()
