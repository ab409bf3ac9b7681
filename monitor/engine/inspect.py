"""Inspecting one spreadsheet: read everything its checks need, then judge them.

The one place that does it, for the run and for `sheet-monitor check ID` alike: one
``values:batchGet`` for every range of the spreadsheet's checks (plus one Drive request when a
freshness check looks at the file's modified time, and one ``spreadsheets.get`` for its time zone
when the caller does not know it: see ``monitor.engine.zones``), then the checks, evaluated over what
Google returned, with dates read in the spreadsheet's own zone. Reading and judging are separate steps
because the run holds a task's lease only while the requests are in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Protocol

from monitor.checks import Check, CheckResult, ValuesStillLoading, evaluate_all
from monitor.config import Config, Sheet
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.zones import zone_named
from monitor.engine.zones import needs_time_zone


@dataclass(frozen=True)
class SheetPlan:
    """One configured spreadsheet as inspecting it needs it."""

    id: str
    name: str
    checks: tuple[Check, ...]
    ranges: tuple[str, ...]  # every range its checks read, fetched in one batchGet
    needs_modified_time: bool = False  # a freshness check on the file's modifiedTime (one Drive request)
    fingerprint: str = ""  # of its checks: a last read judged by other checks does not count
    # Read at least this often when Drive reports no change, or every round (monitor.engine.changes).
    max_age: timedelta = timedelta(hours=1)
    always_read: bool = False

    @classmethod
    def of(cls, sheet: Sheet, config: Config) -> SheetPlan:
        # No zone here: dates are read in the spreadsheet's own (read from Google, kept in its
        # health record); the config's [alerts] timezone is the digest's alone.
        return cls(sheet.id, sheet.name, sheet.checks, sheet.ranges, sheet.needs_modified_time,
                   sheet.fingerprint, sheet.max_age or config.run.max_age, sheet.always_read)

    @property
    def needs_time_zone(self) -> bool:
        return needs_time_zone(self.checks)


def plans_of(config: Config) -> list[SheetPlan]:
    return [SheetPlan.of(sheet, config) for sheet in config.sheets]


class SheetReader(Protocol):
    """What inspecting needs from the Sheets adapter (``monitor.google.GspreadReader`` implements it).

    Both raise ``SheetReadError`` (already classified), never a library's exception."""

    def read(
        self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float
    ) -> list[dict]: ...

    def modified_time(self, spreadsheet_id: str, credential: str, timeout: float) -> str: ...

    def time_zone(self, spreadsheet_id: str, credential: str, timeout: float) -> str: ...


@dataclass(frozen=True)
class SheetData:
    """What Google returned for a plan: each requested range's ValueRange, the file's modifiedTime,
    and the spreadsheet's time zone when this read asked for it."""

    value_ranges: Mapping[str, Mapping[str, Any]]
    modified_time: str | None = None
    time_zone: str | None = None


def read(plan: SheetPlan, reader: SheetReader, credential: str, timeout: Callable[[], float],
         fetch_zone: bool = False) -> SheetData:
    """Every request ``plan`` needs, and its spreadsheet's time zone first when ``fetch_zone``;
    ``timeout()`` is asked as each request starts (the budget shrinks)."""
    zone = reader.time_zone(plan.id, credential, timeout()) if fetch_zone else None
    value_ranges = reader.read(plan.id, plan.ranges, credential, timeout()) if plan.ranges else []
    modified = reader.modified_time(plan.id, credential, timeout()) if plan.needs_modified_time else None
    return SheetData(dict(zip(plan.ranges, value_ranges, strict=True)), modified, zone)


def zone_of(plan: SheetPlan, name: str | None) -> tzinfo:
    """The zone to judge ``plan``'s dates in, from the name Google gave (``properties.timeZone``).

    UTC for a plan that reads no dates (a modified time alone is shown in UTC). A name this system's
    time-zone database does not know is a PERMANENT ``SheetReadError``: judging dates in a guessed
    zone would be off by hours, silently. ValueError when the plan needs a zone and none was read (a
    caller's mistake)."""
    if name is None:
        if plan.needs_time_zone:
            raise ValueError(f"{plan.id}: dates cannot be judged before the spreadsheet's time zone is read")
        return UTC
    try:
        return zone_named(name)
    except ValueError:
        raise SheetReadError(
            ErrorClass.PERMANENT, None, None,
            f"the spreadsheet's time zone {name!r} (File > Settings) is unknown to this machine's "
            "time-zone database: update the tzdata package, or choose a listed zone") from None


def judge(plan: SheetPlan, data: SheetData, now: datetime, zone: tzinfo) -> list[CheckResult]:
    """Every check of ``plan`` over ``data``, dates read in ``zone`` (:func:`zone_of`). Cells still
    showing "Loading..." are not a finding but a failed read, raised as a LOADING ``SheetReadError``
    so the read is retried later."""
    try:
        return evaluate_all(plan.checks, data.value_ranges, now, zone, modified_time=data.modified_time)
    except ValuesStillLoading as exc:
        raise SheetReadError(ErrorClass.LOADING, None, None, str(exc)) from None
