"""What runs count, one name per count: ``RunCounts``.

A run counts as it reads (``monitor.engine.task_results.RunReport``); the counts it ends with are
kept as they are, the same value, in its heartbeat's stats (``monitor.engine.heartbeat``) and its
record in the run log (``monitor.engine.runlog``), and added to every earlier run's in the totals
behind the metrics' counters (``monitor.engine.totals``). Adding is one rule for every count, over
the fields: a count added to a count, a count by key added key by key, the read-time buckets added
bucket by bucket. A new count is one field here and nothing else to copy.

The read-time histogram's buckets suit Google's reads, ~0.4 s each (docs/sandbox.md, "Latency"):
fine below a second, where normal reads fall, and coarse up to the request timeout (30 s).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import field, fields, replace
from typing import Any

from monitor.core.tracking import document

READ_SECONDS_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
NO_READ_TIMES = (0,) * (len(READ_SECONDS_BUCKETS) + 1)


def bucket_of(seconds: float) -> int:
    """The index of the first bucket whose upper bound holds ``seconds``; len(READ_SECONDS_BUCKETS)
    for one beyond the last bound (the +Inf bucket)."""
    return bisect.bisect_left(READ_SECONDS_BUCKETS, seconds)


@document
class RunCounts:
    """What one run counted, or (in the totals) every run added up."""

    tasks: int = 0  # read attempts: reads sent, and requests for a time zone alone that failed
    tasks_done: int = 0  # spreadsheets read and judged
    dead_lettered: int = 0
    retries_scheduled: int = 0
    quota_refusals: int = 0  # reads Google refused for quota (429)
    reads_by_credential: dict[str, int] = field(default_factory=dict)  # Sheets requests sent, by key file
    reads_by_project: dict[str, int] = field(default_factory=dict)  # the same, by Google Cloud project
    retries_by_class: dict[str, int] = field(default_factory=dict)  # retries scheduled, by ErrorClass value
    # Every request's time, request to answer: requests per bucket of READ_SECONDS_BUCKETS, +Inf last
    # (not cumulative), and their sum.
    read_seconds_buckets: tuple[int, ...] = NO_READ_TIMES
    read_seconds_sum: float = 0.0

    @classmethod
    def read_time(cls, seconds: float) -> RunCounts:
        """The counts of one request that took ``seconds``."""
        buckets = [0] * len(NO_READ_TIMES)
        buckets[bucket_of(seconds)] = 1
        return cls(read_seconds_buckets=tuple(buckets), read_seconds_sum=seconds)

    def plus(self, more: RunCounts) -> RunCounts:
        """These counts with ``more`` added, field by field."""
        return RunCounts(**{name.name: _added(getattr(self, name.name), getattr(more, name.name))
                            for name in fields(self)})

    def rounded(self) -> RunCounts:
        """These counts as they are kept: the read times' sum to the millisecond."""
        return replace(self, read_seconds_sum=round(self.read_seconds_sum, 3))


def _added(count: Any, more: Any) -> Any:
    if isinstance(count, Mapping):
        summed = dict(count)
        for key, value in more.items():
            summed[key] = summed.get(key, 0) + value
        return summed
    if isinstance(count, tuple):
        # Buckets measured with other bounds (a release with other READ_SECONDS_BUCKETS) are left out.
        return tuple(a + b for a, b in zip(count, more, strict=True)) if len(count) == len(more) else count
    return count + more
