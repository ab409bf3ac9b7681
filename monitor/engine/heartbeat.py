"""What each run leaves behind about itself: the heartbeat of the latest run and a short history.

The run writes the heartbeat twice: ``running`` when it starts, then its outcome and stats when it
finishes. The watchdog judges the monitor from these two documents alone (a run that started and
never finished is stuck or killed; no finished run for a while is silence); ``status`` shows them.
"""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum

from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document
from monitor.engine.run_counts import RunCounts

RUNS_KEPT = 20  # the watchdog needs the last few outcomes ("failing" is 3 bad runs in a row)


class RunOutcome(StrEnum):
    RUNNING = "running"  # started, not finished (yet, or ever: the watchdog tells which)
    OK = "ok"
    DEGRADED = "degraded"  # Google failing (the whole-API breaker), or not one spreadsheet could be read
    NOTHING_TO_DO = "nothing_to_do"  # the round was done and the next one not yet due


GOOD_OUTCOMES = frozenset({RunOutcome.OK, RunOutcome.NOTHING_TO_DO})


class StopReason(StrEnum):
    """Why a run stopped starting reads (`sheet-monitor run` says each in words)."""

    NONE = ""  # it has not stopped (yet)
    ROUND_DONE = "round_done"
    BUDGET = "budget"
    WATCHED = "watched"  # the round's work was done: the rest of the budget watched Drive's feed
    NO_USABLE_CREDENTIAL = "no_usable_credential"
    API_DEGRADED = "api_degraded"  # the whole-API breaker opened


@document
class RoundProgress:
    id: str
    pending: int
    processing: int
    done: int
    failed: int


@document
class RunStats:
    """A finished run's counts, as the run log and the totals keep them too, and what it measured."""

    counts: RunCounts = field(default_factory=RunCounts)
    mean_read_seconds: float | None = None  # a read's mean time, request to answer; None: no read
    concurrency: int | None = None  # the most reads in flight at once; None: not measured
    duration_seconds: float = 0.0
    stop_reason: StopReason = StopReason.NONE
    round: RoundProgress | None = None


@document
class Heartbeat:
    run_id: str
    started_at: UtcTime
    budget_seconds: float
    finished_at: UtcTime | None = None
    outcome: RunOutcome = RunOutcome.RUNNING
    previous_run_id: str | None = None
    stats: RunStats | None = None


@document
class RunSummary:
    run_id: str
    started_at: UtcTime
    finished_at: UtcTime
    outcome: RunOutcome


@document
class RunHistory:
    """The latest runs' outcomes, oldest first (at most RUNS_KEPT)."""

    runs: tuple[RunSummary, ...] = ()

    def add(self, summary: RunSummary) -> RunHistory:
        return RunHistory((*self.runs, summary)[-RUNS_KEPT:])
