"""Inspecting one spreadsheet: read everything its checks need, then judge them.

The one place that does it, for the run and for `sheet-monitor check ID` alike: one
``values:batchGet`` for every range of the spreadsheet's checks (plus one Drive request when a
freshness check looks at the file's modified time), then the checks, evaluated over what Google
returned. Reading and judging are separate steps because the run holds a task's lease only while the
requests are in flight. `check ID` alone also reads the ranges once more as formulas, to find values
that move without an edit (``volatile_formulas``), which change detection would see late.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any, Protocol

from monitor.checks import Check, CheckResult, ValuesStillLoading, VolatileCell, evaluate_all, volatile_cells
from monitor.config import Config, Sheet
from monitor.core.errors import ErrorClass, SheetReadError


@dataclass(frozen=True)
class SheetPlan:
    """One configured spreadsheet as inspecting it needs it."""

    id: str
    name: str
    checks: tuple[Check, ...]
    ranges: tuple[str, ...]  # every range its checks read, fetched in one batchGet
    timezone: tzinfo  # date serials and dates without an offset are wall-clock times in this zone
    needs_modified_time: bool = False  # a freshness check on the file's modifiedTime (one Drive request)
    fingerprint: str = ""  # of its checks: a last read judged by other checks does not count
    # Read at least this often when Drive reports no change, or every round (monitor.engine.changes).
    max_age: timedelta = timedelta(hours=1)
    always_read: bool = False

    @classmethod
    def of(cls, sheet: Sheet, config: Config) -> SheetPlan:
        # Serial dates are in the spreadsheet's own time zone; the config's [alerts] timezone stands
        # for all of them (reading each file's zone would cost a second request per spreadsheet).
        return cls(sheet.id, sheet.name, sheet.checks, sheet.ranges, config.alerts.tzinfo,
                   sheet.needs_modified_time, sheet.fingerprint, sheet.max_age or config.run.max_age,
                   sheet.always_read)


def plans_of(config: Config) -> list[SheetPlan]:
    return [SheetPlan.of(sheet, config) for sheet in config.sheets]


class SheetReader(Protocol):
    """What inspecting needs from the Sheets adapter (``monitor.google.GspreadReader`` implements it).

    Both raise ``SheetReadError`` (already classified), never a library's exception."""

    def read(
        self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float
    ) -> list[dict]: ...

    def modified_time(self, spreadsheet_id: str, credential: str, timeout: float) -> str: ...


@dataclass(frozen=True)
class SheetData:
    """What Google returned for a plan: each requested range's ValueRange, and the file's modifiedTime."""

    value_ranges: Mapping[str, Mapping[str, Any]]
    modified_time: str | None = None


def read(plan: SheetPlan, reader: SheetReader, credential: str, timeout: Callable[[], float]) -> SheetData:
    """Every request ``plan`` needs; ``timeout()`` is asked as each one starts (the budget shrinks)."""
    value_ranges = reader.read(plan.id, plan.ranges, credential, timeout()) if plan.ranges else []
    modified = reader.modified_time(plan.id, credential, timeout()) if plan.needs_modified_time else None
    return SheetData(dict(zip(plan.ranges, value_ranges, strict=True)), modified)


class FormulaReader(Protocol):
    """Reading ranges as formulas (``monitor.google.GspreadReader`` implements it); raises
    ``SheetReadError`` like :class:`SheetReader`."""

    def formulas(
        self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float
    ) -> list[dict]: ...


def volatile_formulas(plan: SheetPlan, reader: FormulaReader, credential: str, timeout: float,
                      change_detection: bool) -> list[VolatileCell] | None:
    """The cells of ``plan``'s ranges whose formulas move without an edit (NOW(), IMPORTRANGE), at the
    cost of one more ``values:batchGet``. None, and no request, when it would not matter: every
    round reads the spreadsheet anyway (change detection is off, or it is ``always_read``), or it has
    no ranges."""
    if not change_detection or plan.always_read or not plan.ranges:
        return None
    return volatile_cells(reader.formulas(plan.id, plan.ranges, credential, timeout))


def judge(plan: SheetPlan, data: SheetData, now: datetime) -> list[CheckResult]:
    """Every check of ``plan`` over ``data``. Cells still showing "Loading..." are not a finding but a
    failed read, raised as a LOADING ``SheetReadError`` so the read is retried later."""
    try:
        return evaluate_all(plan.checks, data.value_ranges, now, plan.timezone,
                            modified_time=data.modified_time)
    except ValuesStillLoading as exc:
        raise SheetReadError(ErrorClass.LOADING, None, None, str(exc)) from None
