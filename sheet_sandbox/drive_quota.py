"""Drive's own per-minute quota: every Drive v3 request, per user and per project.

Drive's quota is separate from Sheets': its "Usage limits" page
(developers.google.com/drive/api/guides/limits) lists queries "per 60 seconds" (12,000) and "per 60
seconds per user" (12,000); its current version counts quota units (1,000,000 per minute per
project, 325,000 per user) without saying what a request costs, so the sandbox counts requests
against the query limits. The window is rolling, as for the Sheets quotas (see quota.py): a request
is admitted when fewer than ``limit`` requests were admitted in the last 60 s; refused requests do
not count. The per-user quota is checked first.
"""

from __future__ import annotations

import threading
from collections import deque

from . import errors
from .http import Response
from .quota import WINDOW_SECONDS, check_limits, expire, window_counts

_LIMIT_NAMES = ("per_user", "per_project")
DEFAULT_PER_USER = 12_000
DEFAULT_PER_PROJECT = 12_000


class DriveQuotaMeter:
    """Counts admitted Drive requests per user and per project. Thread-safe."""

    def __init__(self, clock, per_user: int = DEFAULT_PER_USER,
                 per_project: int = DEFAULT_PER_PROJECT) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._limits: dict[str, int] = {}
        self.set_limits(per_user=per_user, per_project=per_project)
        self._by_user: dict[str, deque[float]] = {}
        self._by_project: dict[str, deque[float]] = {}

    def set_limits(self, **limits: int) -> None:
        """Change per_user and/or per_project; ValueError naming the key for anything else or a
        limit that is not a positive integer (nothing changes then)."""
        check_limits(limits, _LIMIT_NAMES, "Drive quota")
        with self._lock:
            self._limits.update(limits)

    def admit(self, user: str, project: str) -> Response | None:
        """None when the request is allowed (and counted); else Drive's 403 (user) or 429
        (project), not counted."""
        now = self._clock.time()
        with self._lock:
            user_window = self._by_user.setdefault(user, deque())
            project_window = self._by_project.setdefault(project, deque())
            expire(user_window, now)
            expire(project_window, now)
            if len(user_window) >= self._limits["per_user"]:
                return errors.drive_rate_limited("user")
            if len(project_window) >= self._limits["per_project"]:
                return errors.drive_rate_limited("project")
            user_window.append(now)
            project_window.append(now)
        return None

    def usage(self) -> dict:
        """``{"window_seconds", "limits", "projects": {id: n}, "users": {email: n}}`` (windows
        holding requests only)."""
        now = self._clock.time()
        with self._lock:
            return {
                "window_seconds": WINDOW_SECONDS,
                "limits": dict(self._limits),
                "projects": window_counts(self._by_project, now),
                "users": window_counts(self._by_user, now),
            }

    def reset(self) -> None:
        """Empty every window (limits stay as set)."""
        with self._lock:
            self._by_user.clear()
            self._by_project.clear()
