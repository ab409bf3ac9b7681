"""Time for everything that decides: one real clock for production and a manual one for tests.

Decisions take ``now`` as an argument; only composition roots (the CLI, the sandbox's server, tests)
hold a clock. Wall time is aware UTC; deadlines use the monotonic reading.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def time(self) -> float:
        """Seconds since the epoch (for code that counts in floats, like quota windows)."""
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def wait(self, condition: threading.Condition, seconds: float) -> None:
        """Wait on ``condition`` (its lock held) up to ``seconds``, or until it is notified."""
        condition.wait(max(0.0, seconds))


class ManualClock:
    """A clock that only moves when told to; ``sleep`` advances it instead of waiting. Thread-safe."""

    def __init__(self, start: datetime | None = None) -> None:
        self._epoch = (start or datetime(2026, 1, 5, 3, 0, tzinfo=UTC)).timestamp()
        self._monotonic = 1000.0
        self._lock = threading.Lock()

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), UTC)

    def time(self) -> float:
        with self._lock:
            return self._epoch

    def monotonic(self) -> float:
        with self._lock:
            return self._monotonic

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._epoch += seconds
            self._monotonic += seconds

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.advance(seconds)

    def wait(self, condition: threading.Condition, seconds: float) -> None:
        """As ``sleep``: the wait's whole time passes at once (what it waits for is looked at after)."""
        self.sleep(seconds)
