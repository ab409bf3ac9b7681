"""Counts of the requests the fake Google API answered, for tests, the demo and benchmarks."""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable

ANONYMOUS = "anonymous"  # the user of requests answered before (or without) authentication
REFUSALS_KEPT = 100  # the latest 429s told one by one: enough to trace a few, bounded in a long bench


class Stats:
    """Requests by endpoint, by status, by user and, for those that name one, by spreadsheet (which
    tells a test whether a given spreadsheet was read, and a benchmark that each one was read as often
    as it claims), and when the first request since the last reset came (a run's start-up, measured
    where Google would see it). Thread-safe; ``record`` is a few dict updates."""

    def __init__(self, time_of: Callable[[], float] = time.time) -> None:
        self._time_of = time_of  # epoch seconds: the sandbox's clock
        self._lock = threading.Lock()
        self.reset()

    def record(self, endpoint: str, status: int, user: str | None, spreadsheet: str | None = None) -> None:
        with self._lock:
            if self._first_request_at is None:
                self._first_request_at = self._time_of()
            self._total += 1
            self._by_endpoint[endpoint] += 1
            self._by_status[status] += 1
            self._by_user[user or ANONYMOUS] += 1
            if status == 429:
                self._refused_by_user[user or ANONYMOUS] += 1
                self._refusals.append({"at": self._time_of(), "endpoint": endpoint,
                                       "user": user or ANONYMOUS, "spreadsheet": spreadsheet})
            if spreadsheet is not None:
                self._by_spreadsheet.setdefault(spreadsheet, Counter())[endpoint] += 1

    def of_spreadsheet(self, spreadsheet: str) -> dict[str, int]:
        """Requests naming ``spreadsheet``, by endpoint (answered with any status)."""
        with self._lock:
            return dict(self._by_spreadsheet.get(spreadsheet, {}))

    def snapshot(self) -> dict:
        """A JSON-ready copy: total, by_endpoint, by_status (string keys), by_user, quota_exceeded,
        quota_exceeded_by_user (whose requests were refused for quota: which accounts a client kept
        sending after a 429), refusals (the latest ``REFUSALS_KEPT`` 429s, each its moment, endpoint,
        user and spreadsheet: what a client was sending when it was refused), by_spreadsheet (id ->
        endpoint -> count), first_request_at (epoch seconds of the first request since the last
        reset; None before one)."""
        with self._lock:
            return {
                "total": self._total,
                "by_endpoint": dict(self._by_endpoint),
                "by_status": {str(status): n for status, n in sorted(self._by_status.items())},
                "by_user": dict(self._by_user),
                "quota_exceeded": self._by_status.get(429, 0),
                "quota_exceeded_by_user": dict(self._refused_by_user),
                "refusals": list(self._refusals),
                "by_spreadsheet": {sid: dict(counts) for sid, counts in self._by_spreadsheet.items()},
                "first_request_at": self._first_request_at,
            }

    def reset(self) -> None:
        with self._lock:
            self._total = 0
            self._by_endpoint: Counter[str] = Counter()
            self._by_status: Counter[int] = Counter()
            self._by_user: Counter[str] = Counter()
            self._by_spreadsheet: dict[str, Counter[str]] = {}
            self._refused_by_user: Counter[str] = Counter()
            self._refusals: deque[dict] = deque(maxlen=REFUSALS_KEPT)
            self._first_request_at: float | None = None
