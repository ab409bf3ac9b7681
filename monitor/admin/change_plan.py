"""What `check-config` expects a round to read with change detection, at a share of spreadsheets edited.

With ``[run] change_detection`` a round reads only what may differ from its last read
(``monitor.engine.change_detection.due_for_read``): the spreadsheets Drive reports changed, those whose last
read ``max_age`` makes due, and the ``always_read`` ones. How many that is depends on how often people
edit, which no config says, so the plan is given at a few edit shares (the share of spreadsheets
edited within one round interval). Per spreadsheet, the share of rounds that read it:

* ``always_read``: every round;
* any other: the edit share (Drive reported a change), plus one round in
  ``rounds_between_reads(max_age, round_interval)`` (its max_age came due), at most every round.
  A spreadsheet edited is read then and its max_age starts again, so adding the two counts some
  reads twice: the figure errs toward more reads, never fewer.

A time zone due (``monitor.engine.zone_refresh``) is asked in the request of the spreadsheet's next read: it
adds no read.

The first round, and any round Drive cannot answer, reads every spreadsheet: that is the full round of
the rest of the plan. Drive's own requests (the
change feed, one per 1,000 changes; a file's modifiedTime for a freshness check, when its spreadsheet is
read) count against Drive's quota, not Sheets'.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from monitor.config import Config, Sheet
from monitor.core.durations import format_duration
from monitor.engine.change_detection import CHANGES_PER_FEED_REQUEST, rounds_between_reads
from monitor.engine.concurrency import round_time_at_latency
from monitor.engine.pacer import round_estimate, sustained_rate

DEFAULT_EDIT_SHARES = (0.05, 0.20, 0.50)


def change_detection_plan(config: Config, sizes: Mapping[str, int], read_seconds: float,
                          edit_shares: Sequence[float] = DEFAULT_EDIT_SHARES) -> dict[str, Any]:
    """The reads per round at each of ``edit_shares`` (0 to 1), with the credentials of each project
    (``sizes``; empty: no credentials, and nothing can fit) and ``read_seconds`` a read."""
    run = config.run
    if not run.change_detection:
        return {"enabled": False, "always_read": None, "max_age": [], "estimates": []}
    every = Counter(_max_age(sheet, config) for sheet in config.sheets if not sheet.always_read)
    interval = run.round_interval
    return {
        "enabled": True,
        "always_read": sum(1 for sheet in config.sheets if sheet.always_read),
        "max_age": [{"max_age": format_duration(max_age), "spreadsheets": count,
                     "rounds_between_reads": rounds_between_reads(max_age, interval)}
                    for max_age, count in sorted(every.items())],
        "estimates": [_estimate(config, share, sizes, read_seconds) for share in edit_shares],
    }


def _estimate(config: Config, edit_share: float, sizes: Mapping[str, int], read_seconds: float
              ) -> dict[str, Any]:
    """One edit share's row: its reads by reason, the Drive requests, the round's time and fit."""
    interval = config.run.round_interval
    changed = due = always = file_reads = 0.0
    for sheet in config.sheets:
        if sheet.always_read:
            always += 1
            share = 1.0
        else:
            every = rounds_between_reads(_max_age(sheet, config), interval)
            aged = min(1 - edit_share, 1 / every)
            changed, due, share = changed + edit_share, due + aged, edit_share + aged
        if sheet.needs_modified_time:
            file_reads += share
    # Rounded first, so that float noise cannot ask for one read more.
    reads = math.ceil(round(changed + due + always, 6))
    feed = max(1, math.ceil(round(edit_share * len(config.sheets), 6) / CHANGES_PER_FEED_REQUEST))
    row: dict[str, Any] = {
        "edit_share": edit_share, "changed_reads": round(changed, 1), "max_age_reads": round(due, 1),
        "always_read_reads": int(always), "reads_per_round": reads,
        "drive_requests_per_round": feed + math.ceil(round(file_reads, 6)),
        "round_seconds": None, "round_seconds_at_latency": None, "fits": None,
    }
    if sizes:
        google = config.google
        quota = (sizes, google.read_requests_per_minute, google.project_read_requests_per_minute)
        rate = sustained_rate(*quota)
        at_latency = round_time_at_latency(reads, rate, read_seconds, google.max_concurrent_reads)
        row.update(round_seconds=round(round_estimate(reads, *quota), 1),
                   round_seconds_at_latency=round(at_latency, 1),
                   fits=at_latency <= interval.total_seconds())
    return row


def _max_age(sheet: Sheet, config: Config) -> timedelta:
    return sheet.max_age or config.run.max_age
