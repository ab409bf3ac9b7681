"""The run's settings: what the config decides, plus the engine's own constants with their reasons.

Everything an admin can set has its default (and the reason for it) in ``monitor.config.defaults``
only; :meth:`RunSettings.from_config` is how the run gets them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from monitor.config import Config
from monitor.engine.api_health import DEFAULT_DEGRADED_AFTER
from monitor.engine.breaker import BreakerPolicy
from monitor.engine.health import DEFAULT_KEEP

# Left at the end of the budget to save the state, hand events over and exit.
RESERVE_SECONDS = 3.0
# No task starts with less usable budget than this (Google answers healthy reads well within it).
MIN_REQUEST_SECONDS = 1.0
# The shortest budget in which a run can read at all: the reserve, and one request.
LEAST_BUDGET_SECONDS = RESERVE_SECONDS + MIN_REQUEST_SECONDS


@dataclass(frozen=True)
class RunSettings:
    budget: timedelta
    round_interval: timedelta
    request_timeout: float
    breaker: BreakerPolicy
    reserve_seconds: float = RESERVE_SECONDS
    min_request_seconds: float = MIN_REQUEST_SECONDS
    # Consecutive transient failures on different spreadsheets that mean "Google, not them".
    api_degraded_after: int = DEFAULT_DEGRADED_AFTER
    # A round still unfinished after this many round intervals is "falling behind".
    behind_after_intervals: int = 3
    # Checkpoints closer together than this are merged (docs/architecture.md, "Checkpoints"): a
    # save now costs what changed, about a millisecond, but the fsync behind it is the disk's to
    # decide. 0.2 s is one read at a project quota's most (300/min): at production pace most results
    # are saved on their own; only faster-than-quota runs (benchmarks) merge.
    checkpoint_every: float = 0.2
    # A quarantined task (a suspect of the poison guard) is not read in a run's first seconds, unless
    # the budget is too short to wait them out: see Run._next_task ([run] suspects_after).
    suspects_after: float = 5.0
    # Reads in flight at most: the config's ceiling (the run sizes itself below it from the quota and
    # the latency it observes). 1 reads one spreadsheet at a time.
    max_in_flight: int = 1
    # A spreadsheet none of whose reads worked for this long is failing (monitor.engine.unreadable).
    unreadable_after: timedelta = timedelta(minutes=30)
    # How long the runs' records and each spreadsheet's verdict changes are kept ([report] keep).
    history_keep: timedelta = DEFAULT_KEEP
    # The config's maintenance windows ([[maintenance]]): the run log counts what they cover as such.
    maintenance: tuple = ()
    # How often a run asks Drive's feed again while it has budget left ([run] change_poll; None: only
    # at a round's start, and the run ends with its round's work).
    change_poll: timedelta | None = None

    @classmethod
    def from_config(cls, config: Config, budget: timedelta | None = None) -> RunSettings:
        return cls(
            budget=budget or config.run.budget,
            round_interval=config.run.round_interval,
            request_timeout=config.google.request_timeout.total_seconds(),
            max_in_flight=config.google.max_concurrent_reads,
            suspects_after=config.run.suspects_after.total_seconds(),
            unreadable_after=config.breaker.unreadable_after,
            history_keep=config.report.keep,
            maintenance=tuple(config.maintenance),
            change_poll=config.run.change_poll if config.run.change_detection else None,
            breaker=BreakerPolicy(
                failure_threshold=config.breaker.failure_threshold,
                cooldown=config.breaker.cooldown,
                max_cooldown=config.breaker.max_cooldown,
            ),
        )
