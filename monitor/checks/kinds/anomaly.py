"""``anomaly``: a metric of the range (non-empty rows, or one of the threshold's aggregates, over the
rows a ``where`` keeps) against what is normal for it at this moment, learnt from its own history.

Each read writes its metric into its bucket (a day, or an hour, on the spreadsheet's clock) of the
check's history (``monitor.checks.buckets``, kept by the engine); the bucket being judged is never
part of its own baseline, and buckets judged anomalous, or read while the spreadsheet failed, are
left out of later ones. Until ``min_history`` has been kept the check says it is learning and never
alerts. The method, robust and seasonal, is ``monitor.checks.baselines``'s.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import model_validator

from monitor.core.invalid_value import InvalidValue
from monitor.core.wording import counted

from .. import explain
from ..aggregates import Metric, ValueRange, metric_of
from ..base import CheckBase, default_name
from ..baselines import (
    BUCKET_SIZE,
    MIN_SAME_BUCKET,
    SENSITIVITY,
    SHIFT_LEAST,
    SHIFT_SHARE,
    STUCK_BUCKETS,
    Baseline,
    Point,
    Seasonality,
    Sensitivity,
    baseline,
    held_still,
    season_key,
    span_of,
)
from ..buckets import BUCKET_LENGTH, Buckets, bucket_number, bucket_start, weekday_of
from ..conditions import format_number
from ..dates import zone
from ..fields import A1Text, DurationField, WhereField
from ..kind import Keep, Kind
from ..past import Past
from ..result import CheckResult, result_of

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NOUNS = {"row_count": ("row", "rows"), "count": ("non-empty cell", "non-empty cells"),
          "distinct": ("distinct value", "distinct values")}
_METRICS = {"sum": "sum", "avg": "average", "min": "smallest number", "max": "largest number",
            "value": "first value"}
_SEASONS = {"none": "each day", "day_of_week": "each weekday", "hour_of_day": "each hour of the day",
            "hour_of_week": "each hour of each weekday"}


class AnomalyCheck(CheckBase):
    """``metric`` of ``range`` (with ``where``, over the rows it keeps) judged against its own
    history: the same weekday, hour of the day or hour of the week (``seasonality``) in earlier weeks
    or days. ``sensitivity``: how far off a value must be to alert ("high" alerts on less).
    ``min_history``: how long it learns before it may alert."""

    kind: Literal["anomaly"] = "anomaly"
    range: A1Text
    metric: Metric = "row_count"
    where: WhereField | None = None
    sensitivity: Sensitivity = "normal"
    seasonality: Seasonality = "day_of_week"
    min_history: DurationField = timedelta(days=14)
    # Days known to be unlike others (a holiday, a stocktaking): never alerted, never in a baseline.
    holidays: tuple[date, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        # Named after its metric, which is not an ``aggregate``: two anomaly checks of one range over
        # different metrics are two checks.
        if isinstance(data, dict) and not data.get("name"):
            metric = data.get("metric") or "row_count"
            data = {**data, "name": default_name("anomaly", metric, data.get("range"))}
        return data

    @model_validator(mode="after")
    def _learnable(self) -> AnomalyCheck:
        self._check_where()
        longest = kept_for(self)
        if not timedelta(days=1) <= self.min_history <= longest:
            raise InvalidValue(f"min_history must be between 1d and {longest.days}d for seasonality "
                               f"{self.seasonality!r} (the history it keeps)",
                               'write a duration in days, e.g. min_history = "14d"')
        return self

    def explain(self) -> str:
        what = f"its {self.metric.replace('_', ' ')} of {explain.scope(self)}"
        return explain.sentence(self, [(self.severity, f"{what} is unusual for {_SEASONS[self.seasonality]}, "
                                                       f"judged against its own history (sensitivity "
                                                       f"{self.sensitivity}, after {_days(self.min_history)} "
                                                       "of learning)")])

    def conditions(self) -> str:
        return f"fail {self.metric} unusual ({self.sensitivity}, {self.seasonality})"

    def as_written(self) -> dict[str, Any]:
        written = super().as_written()
        if self.name == default_name("anomaly", self.metric, self.range):
            written.pop("name", None)
        return written


def kept_for(check: AnomalyCheck) -> timedelta:
    """How far back the check's history reaches: the baseline's buckets and the one judged."""
    return BUCKET_LENGTH[BUCKET_SIZE[check.seasonality]] * (span_of(check.seasonality) - 1)


def judge(check: AnomalyCheck, value_range: ValueRange | None, now: datetime, tz: Any,
          modified_time: Any, past: Past) -> CheckResult:
    value = metric_of(check.metric, value_range)
    size = BUCKET_SIZE[check.seasonality]
    number = bucket_number(now, zone(tz), size)
    if bucket_start(number, size).date() in check.holidays:
        # No value kept: the day stays out of every baseline.
        return result_of(check, "ok", f"{shown(check, value)}; not judged on a listed holiday", None)
    kept = past.buckets.get(check.name)
    learnt = BUCKET_LENGTH[size] * (number - kept.first) if kept else timedelta(0)
    if learnt < check.min_history:
        return result_of(check, "ok", f"{shown(check, value)}; {learning(learnt, check.min_history)}", value)
    if value is None:
        return result_of(check, "fail", f"{shown(check, None)}: the range is empty", None)
    assert kept is not None  # learnt is 0 without a history, and min_history is at least a day
    points = kept.points(number)
    base = baseline(points, number, check.seasonality, SENSITIVITY[check.sensitivity])
    if base is None:
        said = f"{shown(check, value)}; learning, {_too_few(check, points, number)}"
        return result_of(check, "ok", said, value)
    said = f"{shown(check, value)}, {usually(check, base, number)}"
    if not base.low <= value <= base.high:
        return result_of(check, "fail", f"{said}: {_how_far(value, base)}", value)
    if _shifted(check, kept, points, number, value, base):
        return result_of(check, "fail", f"{said}: {_how_far(value, base)}, the second {size} in a row", value)
    recent = [kept.value_at(at) for at in range(number - STUCK_BUCKETS + 1, number)] + [value]
    if held_still(recent, [point for point in points if point[0] <= number - STUCK_BUCKETS]):
        return result_of(check, "fail", f"{said}: the same value {STUCK_BUCKETS} {size}s in a row, "
                                        "where it always moved before", value)
    return result_of(check, "ok", said, value)


def _shifted(check: AnomalyCheck, kept: Buckets, points: list[Point], number: int, value: float,
             base: Baseline) -> bool:
    """A level shift: this bucket and the one before are off the same way, each by ``SHIFT_LEAST``
    of the band at least and by ``SHIFT_SHARE`` of it on average."""
    before = kept.value_at(number - 1)
    if before is None or (number - 1) in kept.left_out:
        return False
    band = SENSITIVITY[check.sensitivity]
    now_off = base.off_by(value)
    if abs(now_off) <= band * SHIFT_LEAST:
        return False
    earlier = baseline(points, number - 1, check.seasonality, band)
    if earlier is None:
        return False
    then_off = earlier.off_by(before)
    return then_off * now_off > 0 and abs(then_off) > band * SHIFT_LEAST \
        and abs(then_off + now_off) / 2 > band * SHIFT_SHARE


def shown(check: AnomalyCheck, value: float | None) -> str:
    """The metric and its range as the finding says them: "47 rows in Orders!A2:A", "the sum of
    Orders!C2:C is 1,204.5"."""
    if value is None:
        return f"no {check.metric} in {check.range}"
    if check.metric in _NOUNS:
        one, many = _NOUNS[check.metric]
        return f"{counted(int(value), one, many)} in {check.range}"
    return f"the {_METRICS[check.metric]} of {check.range} is {format_number(value)}"


def usually(check: AnomalyCheck, base: Baseline, number: int) -> str:
    """"usually 140–162 on a Tuesday at this hour (4 Tuesdays)": the same bucket's past values, and
    how many they are."""
    low, high = (format_number(round(bound, 2)) for bound in base.usual)
    usual = low if low == high else f"{low}–{high}"
    return f"usually {usual}{_when(check, number)} ({_samples(check, number, base.samples)})"


def _when(check: AnomalyCheck, number: int) -> str:
    return {"none": "", "day_of_week": f" on a {_weekday(check, number)}", "hour_of_day": " at this hour",
            "hour_of_week": f" on a {_weekday(check, number)} at this hour"}[check.seasonality]


def _samples(check: AnomalyCheck, number: int, count: int) -> str:
    if check.seasonality in ("none", "hour_of_day"):
        return counted(count, "day")
    return f"{count} {_weekday(check, number)}" + ("" if count == 1 else "s")


def _weekday(check: AnomalyCheck, number: int) -> str:
    return _WEEKDAYS[weekday_of(number, BUCKET_SIZE[check.seasonality])]


def still_learning(check: AnomalyCheck, kept: Buckets | None) -> str | None:
    """"learning, 3 of 14 days" as the last read left the check; None once ``min_history`` is kept."""
    size = BUCKET_SIZE[check.seasonality]
    learnt = BUCKET_LENGTH[size] * (kept.last - kept.first) if kept else timedelta(0)
    return learning(learnt, check.min_history) if learnt < check.min_history else None


def learning(learnt: timedelta, needed: timedelta) -> str:
    """"learning, 3 of 14 days": how much of ``min_history`` is kept."""
    return f"learning, {format_number(int(learnt / timedelta(days=1)))} of {_days(needed)}"


def _too_few(check: AnomalyCheck, points: list[Point], number: int) -> str:
    """Why a check past ``min_history`` still learns: its bucket's earlier values were missing or
    left out ("only 1 Tuesday to judge by, 3 needed")."""
    key = season_key(number, check.seasonality)
    usable = sum(1 for at, _, out in points if not out and season_key(at, check.seasonality) == key)
    hour = " at this hour" if BUCKET_SIZE[check.seasonality] == "hour" else ""
    return f"only {_samples(check, number, usable)}{hour} to judge by, {MIN_SAME_BUCKET} needed"


def _how_far(value: float, base: Baseline) -> str:
    if base.center == 0:
        return "the usual is 0"
    change = (value - base.center) / abs(base.center) * 100
    return f"{format_number(round(abs(change)))} % {'below' if change < 0 else 'above'} the usual " \
           f"{format_number(round(base.center, 2))}"


def _days(length: timedelta) -> str:
    number = format_number(round(length / timedelta(days=1), 1))
    return f"{number} day" if number == "1" else f"{number} days"


def banded(check: AnomalyCheck, kept: Buckets, count: int) -> list[tuple[datetime, float | None, float | None,
                                                                         float | None]]:
    """The last ``count`` buckets as the status page draws them: each bucket's start (on the
    spreadsheet's clock), its value, and the band its baseline allowed (None before there was one)."""
    size = BUCKET_SIZE[check.seasonality]
    points = kept.points(kept.last + 1)
    drawn = []
    for number in range(max(kept.first, kept.last - count + 1), kept.last + 1):
        base = baseline(points, number, check.seasonality, SENSITIVITY[check.sensitivity])
        drawn.append((bucket_start(number, size), kept.value_at(number),
                      base.low if base else None, base.high if base else None))
    return drawn


def keeps(check: AnomalyCheck, observed: Any, value_range: ValueRange | None) -> Keep:
    size = BUCKET_SIZE[check.seasonality]
    return Keep("buckets", observed, BUCKET_LENGTH[size] * span_of(check.seasonality), every=size)


KIND = Kind(AnomalyCheck, judge, keeps)
