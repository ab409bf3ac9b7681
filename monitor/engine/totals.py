"""What every run so far has counted, added up: the totals behind the monitor's counters.

A run's stats (``RunStats``) say what that one run did; a Prometheus counter must only ever grow,
also across runs, or ``rate()`` reads each new run's smaller figure as a reset and loses the rest
(a file scraped several times between runs holds one run's figure for minutes). So each run adds
its stats here, in the same save as its heartbeat, and the counters are these totals. Pure: no I/O,
no clock.

The read-time histogram's buckets suit Google's reads, ~0.4 s each (docs/sandbox.md, "Latency"):
fine below a second, where normal reads fall, and coarse up to the request timeout (30 s).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import field

from monitor.core.tracking import document

READ_SECONDS_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def bucket_of(seconds: float) -> int:
    """The index of the first bucket whose upper bound holds ``seconds``; len(READ_SECONDS_BUCKETS)
    for one beyond the last bound (the +Inf bucket)."""
    return bisect.bisect_left(READ_SECONDS_BUCKETS, seconds)


@document
class RunTotals:
    """Sums over every run that finished since the state was created (never reset)."""

    runs_by_outcome: dict[str, int] = field(default_factory=dict)
    tasks_done: int = 0  # spreadsheets read and judged
    dead_lettered: int = 0
    reads_by_credential: dict[str, int] = field(default_factory=dict)
    reads_by_project: dict[str, int] = field(default_factory=dict)
    quota_refusals: int = 0  # 429s met
    retries_by_class: dict[str, int] = field(default_factory=dict)  # retries scheduled, by ErrorClass
    # Read times: reads per bucket of READ_SECONDS_BUCKETS, +Inf last (not cumulative), and their sum.
    read_seconds_buckets: tuple[int, ...] = (0,) * (len(READ_SECONDS_BUCKETS) + 1)
    read_seconds_sum: float = 0.0

    def add(self, outcome: str, stats) -> RunTotals:
        """These totals with one more finished run, ``stats`` being its ``RunStats``."""
        buckets = self.read_seconds_buckets
        if len(stats.read_seconds_buckets) == len(buckets):  # else measured with other bounds: left out
            buckets = tuple(a + b for a, b in zip(buckets, stats.read_seconds_buckets, strict=True))
        return RunTotals(
            runs_by_outcome=_summed(self.runs_by_outcome, {outcome: 1}),
            tasks_done=self.tasks_done + stats.ok,
            dead_lettered=self.dead_lettered + stats.failed,
            reads_by_credential=_summed(self.reads_by_credential, stats.reads_by_credential),
            reads_by_project=_summed(self.reads_by_project, stats.reads_by_project),
            quota_refusals=self.quota_refusals + stats.quota_refusals,
            retries_by_class=_summed(self.retries_by_class, stats.retries_by_class),
            read_seconds_buckets=buckets,
            read_seconds_sum=round(self.read_seconds_sum + stats.read_seconds_sum, 3),
        )


def _summed(totals: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    summed = dict(totals)
    for key, count in more.items():
        summed[key] = summed.get(key, 0) + count
    return summed
