"""``change``: a metric of the range (non-empty rows, or one of the threshold's aggregates) now,
against its value at the previous read, or ``over`` ago.

``over`` ago is the newest point at or before then; when the history is younger than that, its oldest
point: a drop since then happened within the window. The change is in percent of the earlier value;
from 0 it is +/-infinity (any rise from nothing is "more than X %"). A metric that became undefined
(the range emptied) is reported at the check's most severe level, as a threshold does. Each read
keeps its metric as a point of the check's series (``Keep``), which the engine bounds.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import model_validator

from monitor.core.invalid_value import InvalidValue

from ..aggregates import Metric, ValueRange, metric_of, shown_metric
from ..base import CheckBase
from ..conditions import format_number
from ..fields import A1Text, ConditionField, DurationField
from ..kind import Keep, Kind
from ..past import Past
from ..result import CheckResult, Status, result_of

# The longest ``over`` a change check may look back: a month compares month-end closes; further back
# the history a spreadsheet keeps (its points spread over ``over``) would say little of a day.
LONGEST_OVER = timedelta(days=31)


class ChangeCheck(CheckBase):
    """A metric of ``range`` compared with its value at the previous read, or ``over`` ago; ``warn``
    and ``fail`` hold for the change in percent of the earlier value ("< -30": dropped by more than
    30 %); ``only_grows``: any decrease fails. The history is kept in the state between runs."""

    kind: Literal["change"] = "change"
    range: A1Text
    aggregate: Metric = "row_count"
    over: DurationField | None = None
    warn: ConditionField | None = None
    fail: ConditionField | None = None
    only_grows: bool = False

    @model_validator(mode="after")
    def _some_condition(self) -> ChangeCheck:
        if self.warn is None and self.fail is None and not self.only_grows:
            raise InvalidValue("change needs a condition",
                               'add fail = "< -30" (dropped by more than 30 %), warn = "> 50", '
                               "or only_grows = true")
        if self.over is not None and not timedelta(0) < self.over <= LONGEST_OVER:
            raise InvalidValue(f"over must be between 1s and {LONGEST_OVER.days}d",
                               'write a duration such as over = "24h", or remove over to compare '
                               "with the previous read")
        return self


def judge(check: ChangeCheck, value_range: ValueRange | None, now: datetime, tz: Any,
          modified_time: Any, past: Past) -> CheckResult:
    current = metric_of(check.aggregate, value_range)
    shown = f"{check.aggregate} {shown_metric(current)}"
    earlier = baseline(past.series.get(check.name, ()), now, check.over)
    if earlier is None:
        return result_of(check, "ok", f"{shown}; nothing to compare with yet (first read)", current)
    at, before = earlier
    since = "the previous read" if check.over is None else f"{_ago(now - at)} ago"
    if current is None or before is None:
        if current is None and before is not None:
            return result_of(check, _most_severe(check), f"no {check.aggregate} now: the range is empty "
                                                         f"(was {shown_metric(before)} {since})", None)
        return result_of(check, "ok", f"{shown} (none {since})", current)
    change = percent_change(before, current)
    said = f"{shown}, {_signed(change)} since {since} ({shown_metric(before)})"
    if check.only_grows and current < before:
        return result_of(check, "fail", f"{said}: it should only grow", current)
    for status, condition in (("fail", check.fail), ("warn", check.warn)):
        if condition is not None and condition.holds(change):
            return result_of(check, status, f"{said}, {condition} %", current)
    return result_of(check, "ok", said, current)


def baseline(points: tuple[tuple[datetime, Any], ...], now: datetime, over: timedelta | None
             ) -> tuple[datetime, Any] | None:
    """The point to compare with: the last one (the previous read's value: points are kept only when
    the value changes), or the one in force ``over`` before ``now``, else the oldest."""
    if not points:
        return None
    if over is None:
        return points[-1]
    then = now - over
    in_force = [point for point in points if point[0] <= then]
    return in_force[-1] if in_force else points[0]


def percent_change(before: float, after: float) -> float:
    if before == 0:
        return 0.0 if after == 0 else math.copysign(math.inf, after)
    return (after - before) / abs(before) * 100


def _signed(change: float) -> str:
    if math.isinf(change):
        return "up from 0" if change > 0 else "down from 0"
    return f"{'+' if change >= 0 else ''}{format_number(round(change, 1))} %"


def _ago(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{format_number(round(hours, 1))}h" if hours < 48 else f"{format_number(round(hours / 24, 1))}d"


def _most_severe(check: ChangeCheck) -> Status:
    return "fail" if check.fail is not None or check.only_grows or check.warn is None else "warn"



def keeps(check: ChangeCheck, observed: Any, value_range: ValueRange | None) -> Keep:
    return Keep("series", observed, check.over)


KIND = Kind(ChangeCheck, judge, keeps)
