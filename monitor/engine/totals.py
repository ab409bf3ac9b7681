"""What every run so far has counted, added up: the totals behind the monitor's counters.

A run's counts (``RunCounts``, kept in its heartbeat's stats) say what that one run did; a
Prometheus counter must only ever grow, also across runs, or ``rate()`` reads each new run's smaller
figure as a reset and loses the rest (a file scraped several times between runs holds one run's
figure for minutes). So each run adds its counts here, in the same save as its heartbeat, and the
counters are these totals. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import field

from monitor.core.tracking import document
from monitor.engine.run_counts import RunCounts


@document
class RunTotals:
    """Sums over every run that finished since the state was created (never reset). ``tasks`` and
    ``retries_scheduled`` are counted from the release that kept every count here on."""

    runs_by_outcome: dict[str, int] = field(default_factory=dict)
    counts: RunCounts = field(default_factory=RunCounts)

    def add(self, outcome: str, counts: RunCounts) -> RunTotals:
        """These totals with one more finished run, which ended as ``outcome`` with ``counts``."""
        runs = dict(self.runs_by_outcome)
        runs[outcome] = runs.get(outcome, 0) + 1
        return RunTotals(runs_by_outcome=runs, counts=self.counts.plus(counts).rounded())
