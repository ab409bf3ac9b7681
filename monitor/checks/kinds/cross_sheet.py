"""``cross_sheet``: this range's aggregate against another spreadsheet's (within ``tolerance``), or
every value of this range among the other's keys.

The other side comes in ``Past.others``, as the other spreadsheet's last read lent it. Unreadable, it
is a finding at the check's level: agreement that cannot be seen is not agreement. Not read yet
(``NOT_READ``) is no finding: the other's read, due in the same round, judges the check again. An
aggregate check keeps its own side (``Keep``), so that a change of the other side judges it again
without a read; a keys check keeps none (the engine reads its spreadsheet again instead).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from ..aggregates import Metric, ValueRange, keys_of, metric_of, shown_metric
from ..base import CheckBase
from ..cells import Values
from ..conditions import format_number
from ..fields import A1Text
from ..kind import Keep, Kind
from ..past import NOT_READ, OtherSide, Past
from ..result import MAX_CELLS, CheckResult, Health, result_of

_KEYS_SHOWN = 3


class CrossSheetCheck(CheckBase):
    """``range`` of this spreadsheet agrees with ``other_range`` of ``other`` (its id or its name in
    the config; it must be monitored too, and its range is read in its own batchGet). ``match =
    "aggregate"``: both aggregates differ by at most ``tolerance``; ``"keys"``: every value of
    ``range`` is among the values of ``other_range``."""

    kind: Literal["cross_sheet"] = "cross_sheet"
    range: A1Text
    other: str = Field(min_length=1)
    other_range: A1Text
    match: Literal["aggregate", "keys"] = "aggregate"
    aggregate: Metric = "sum"
    tolerance: float = Field(default=0, ge=0)
    level: Literal["warn", "fail"] = "fail"


def judge(check: CrossSheetCheck, value_range: ValueRange | None, now: datetime, tz: Any,
          modified_time: Any, past: Past) -> CheckResult:
    mine = keys_of(value_range) if check.match == "keys" else metric_of(check.aggregate, value_range)
    return compare_cross(check, mine, past.others.get(check.name))


def compare_cross(check: CrossSheetCheck, mine: Any, other: OtherSide | None) -> CheckResult:
    """A cross-sheet check's result from this side (an aggregate, or the key cells: ``keys_of``) and
    the other: a read judges it, and so does the other side's read (``monitor.engine.history``)."""
    if other is None or other.value is NOT_READ:
        # Not a finding: the other spreadsheet is read in the same round, and its read judges this
        # check again (monitor.engine.history); telling it would alert on every first round.
        name = other.spreadsheet if other is not None else check.other
        return result_of(check, Health.OK, f"{name} {check.other_range} not read yet: compared once it is",
                         None)
    if other.problem is not None:
        return result_of(check, check.level, f"cannot compare with {other.spreadsheet} {check.other_range}: "
                                             f"{other.problem}", None)
    if check.match == "keys":
        return _judge_keys(check, mine, other)
    said = f"{check.aggregate} {shown_metric(mine)} here, {shown_metric(other.value)} in " \
           f"{other.spreadsheet} {check.other_range}"
    if mine is None or other.value is None:
        return result_of(check, check.level, f"{said}: one side has no {check.aggregate}", mine)
    gap = abs(mine - other.value)
    if gap > check.tolerance:
        allowed = f" (tolerance {format_number(check.tolerance)})" if check.tolerance else ""
        return result_of(check, check.level, f"{said}: they differ by {format_number(gap)}{allowed}", mine)
    return result_of(check, Health.OK, f"{said}: they agree", mine)


def _judge_keys(check: CrossSheetCheck, keys: Values, other: OtherSide) -> CheckResult:
    known = set(other.value or ())
    missing = keys.cells(index for index, key in enumerate(keys.values) if key not in known)
    if not missing:
        return result_of(check, Health.OK,
                         f"all {len(keys)} keys are in {other.spreadsheet} {check.other_range}", len(keys))
    shown = ", ".join(f"{c.value!r} ({c.ref})" for c in missing[:_KEYS_SHOWN])
    more = f" and {len(missing) - _KEYS_SHOWN} more" if len(missing) > _KEYS_SHOWN else ""
    message = (f"{len(missing)} of {len(keys)} keys are not in {other.spreadsheet} "
               f"{check.other_range}: {shown}{more}")
    return CheckResult(check.name, check.kind, check.level, message, len(keys),
                       tuple(c.at for c in missing[:MAX_CELLS]))



def keeps(check: CrossSheetCheck, observed: Any, value_range: ValueRange | None) -> Keep | None:
    if check.match != "aggregate":
        return None
    return Keep("own", metric_of(check.aggregate, value_range))


KIND = Kind(CrossSheetCheck, judge, keeps, other_side=True)
