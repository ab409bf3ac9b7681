"""The runs of the last days, kept for the status page (``[report] keep``): one document per hour.

Each finished run adds one :class:`RunRecord` to the document of the hour it started in
(``runlog/2026-11-30T15``), so a run writes one small document (a few runs of the hour, ~500 bytes
each) whatever the number of spreadsheets and however long the history is kept, and the keys stay few
(24 a day). Hours older than ``keep`` are removed by the run that finds them expired.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from monitor.core.timefmt import UtcTime
from monitor.core.tracking import Documents, document
from monitor.engine.heartbeat import Heartbeat, RunOutcome
from monitor.engine.run_counts import RunCounts

HOUR_FORMAT = "%Y-%m-%dT%H"  # a run log key's id: the UTC hour its runs started in, sorting in time order
# A run judging more edits than this keeps the latest: 5,000 spreadsheets at a fifth edited every five
# minutes are 1,000 a run; a record stays a few kilobytes.
EDIT_LAGS_KEPT = 2000
# The lag from an edit to its verdict is shown over this much of the latest runs.
EDIT_LAG_WINDOW = timedelta(hours=1)


@document
class RunRecord:
    """One finished run, as the status page draws it."""

    run_id: str
    started_at: UtcTime
    duration_seconds: float
    budget_seconds: float
    outcome: RunOutcome
    counts: RunCounts  # the run's, as its heartbeat's stats hold them
    # The configured spreadsheets by standing when it ended ("ok", "warn", "fail", "error", "skipped",
    # "muted", "unknown": monitor.engine.fleet): the fleet over time without keeping every verdict.
    health: dict[str, int]
    # Seconds from each edit it judged to its verdict (whole seconds, at most EDIT_LAGS_KEPT).
    edit_lags: tuple[int, ...] = ()


@document
class RunHour:
    """The runs that started in one UTC hour, oldest first."""

    runs: tuple[RunRecord, ...] = ()


def hour_of(moment: datetime) -> str:
    return moment.strftime(HOUR_FORMAT)


def record_of(heartbeat: Heartbeat, standings: Mapping[str, int],
              edit_lags: Sequence[float] = ()) -> RunRecord:
    """The record of the run ``heartbeat`` tells of, finished; ``standings``: the fleet's counts as
    the run left it (``monitor.engine.fleet``), of which those no spreadsheet has are left out;
    ``edit_lags``: how long after each edit it judged its verdict came."""
    stats = heartbeat.stats
    if stats is None:
        raise ValueError("the run has not finished: its heartbeat holds no stats")
    shown = {name: count for name, count in standings.items() if count}
    return RunRecord(
        run_id=heartbeat.run_id, started_at=heartbeat.started_at, duration_seconds=stats.duration_seconds,
        budget_seconds=heartbeat.budget_seconds, outcome=heartbeat.outcome, counts=stats.counts,
        health={str(name): count for name, count in sorted(shown.items())},
        edit_lags=tuple(round(lag) for lag in edit_lags[-EDIT_LAGS_KEPT:]),
    )


def add_run(log: Documents[RunHour], record: RunRecord, now: datetime, keep: timedelta,
            runner: str = "") -> None:
    """Add ``record`` to its hour and drop the hours wholly older than ``keep``: writes one document,
    and removes only those that expired. Runners sharing one state each keep their own document of
    an hour (``2026-11-30T15.host-a``): two runners ending a run in one hour never write one key."""
    hour = hour_of(record.started_at) + (f".{runner}" if runner else "")
    earlier = log.get(hour) or RunHour()
    # In time order even when a run is added after a later one of its hour (a clock set back).
    log[hour] = RunHour(tuple(sorted((*earlier.runs, record), key=lambda run: run.started_at)))
    oldest = hour_of(now - keep)
    for expired in [key for key in log if key < oldest]:
        del log[expired]


def runs_since(log: Documents[RunHour] | dict[str, RunHour], since: datetime) -> Iterator[RunRecord]:
    """The runs that started at or after ``since``, oldest first."""
    first = hour_of(since)
    for key in sorted(key for key in log if key >= first):
        yield from (run for run in log[key].runs if run.started_at >= since)


@dataclass(frozen=True)
class EditLag:
    """How long edits took to be judged over the last hour: what `status`, the status page and the
    metrics show, all from here."""

    edits: int
    p50_seconds: int
    p95_seconds: int
    max_seconds: int


def edit_lag(log: Mapping[str, RunHour], now: datetime,
             window: timedelta = EDIT_LAG_WINDOW) -> EditLag | None:
    """The lag from an edit to its verdict in the runs that started within ``window`` of ``now``
    (nearest-rank percentiles); None when they judged no edit."""
    since, first_hour = now - window, hour_of(now - window)
    lags = sorted(lag for key, hour in log.items() if key >= first_hour
                  for run in hour.runs if run.started_at >= since for lag in run.edit_lags)
    if not lags:
        return None
    return EditLag(len(lags), _rank(lags, 0.50), _rank(lags, 0.95), lags[-1])


def _rank(ordered: Sequence[int], share: float) -> int:
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]
