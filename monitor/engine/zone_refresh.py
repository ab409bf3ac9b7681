"""When a read asks a spreadsheet for its time zone, and what the state keeps of the answer.

Date serials are wall-clock times in the spreadsheet's own zone (``properties.timeZone``), which is
its creator's unless someone changed it in File > Settings. It is asked in the request that reads the
values: one ``spreadsheets.get`` with the ranges' grid data and ``properties.timeZone``, one read of
quota like the ``values:batchGet`` it stands in for, but a larger answer (each cell as an object). So
it is asked with a spreadsheet's first read that needs it, kept on its health record, and asked again
about once a day, with a read that happens anyway: a changed zone is seen within a day.

A zone first learnt is asked again after a part of the day that depends on the spreadsheet's id, so
the spreadsheets whose zones were all learnt in one round (the first, or the first after an upgrade)
spread their daily questions over the day instead of doubling one round's reads every day.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.checks import AnomalyCheck, Check, FreshnessCheck
from monitor.engine.health import SheetHealth, Tab

ZONE_REFRESH = timedelta(days=1)
_SPREAD_STEPS = 1000


def needs_time_zone(checks: Iterable[Check]) -> bool:
    """A freshness check on a range reads dates, which are wall-clock times in the spreadsheet's zone,
    and an anomaly check's days and hours are the spreadsheet's ("on a Tuesday at this hour"). No other
    check looks at one, so their spreadsheets' zones are never asked for: a freshness check on the
    file's modified time alone (an instant Drive gives in UTC) shows it in UTC."""
    return any((isinstance(check, FreshnessCheck) and check.source == "range")
               or isinstance(check, AnomalyCheck) for check in checks)


def zone_due(record: SheetHealth | None, now: datetime) -> bool:
    """Must a read of this spreadsheet at ``now`` also ask for its time zone?"""
    if record is None or record.time_zone is None or record.zone_due is None:
        return True
    return now >= record.zone_due


def with_zone(record: SheetHealth | None, spreadsheet_id: str, name: str, now: datetime,
              tabs: tuple[Tab, ...] = ()) -> SheetHealth:
    """``record`` knowing that the spreadsheet's zone is ``name`` at ``now`` (and its ``tabs``, which
    the same answer gives), and when to ask again."""
    record = record or SheetHealth()
    wait = ZONE_REFRESH if record.time_zone is not None else ZONE_REFRESH * _share_of_day(spreadsheet_id)
    return replace(record, time_zone=name, zone_due=now + wait, tabs=tabs)


def _share_of_day(spreadsheet_id: str) -> float:
    """A share of the day in (0, 1], fixed for a spreadsheet and spread evenly over spreadsheets."""
    return (zlib.crc32(spreadsheet_id.encode()) % _SPREAD_STEPS + 1) / _SPREAD_STEPS
