"""Helpers for tests of what happens at once: rolling windows of sends, and work on several threads.

No asserts in this module: test modules make them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

WINDOW = 60.0


def most_in_a_window(times: list[float], window: float = WINDOW) -> int:
    """The most sends inside any half-open window [t, t + window) (the server's rolling count)."""
    times = sorted(times)
    best, start = 0, 0
    for end, t in enumerate(times):
        while times[start] + window <= t:  # the pacer's own expression: floats agree on the edge
            start += 1
        best = max(best, end - start + 1)
    return best


def most_at_the_server(spans: list[tuple[float, float]], window: float = WINDOW) -> int:
    """The most requests a server's rolling window [t, t + window) can hold when each request
    arrives at any moment of its span (sent, latest): a set fits one window when its latest send is
    less than a window after the earliest of their latest arrivals."""
    best = 0
    for sent, _ in spans:  # the newest of a set, arriving as early as it can
        best = max(best, sum(1 for start, latest in spans if start <= sent < latest + window))
    return best


def gathered_from_threads(work: Callable[[], list], threads: int = 8) -> list:
    """What ``work`` returned on each of ``threads`` threads started together, concatenated."""
    gathered, lock = [], threading.Lock()

    def run() -> None:
        mine = work()
        with lock:
            gathered.extend(mine)

    started = [threading.Thread(target=run) for _ in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    return gathered
