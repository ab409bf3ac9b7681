"""What is normal for a metric at a moment, from its own history: a robust seasonal baseline.

The method (docs/configuration.md, "anomaly"): the **center** is the median of the same seasonal
bucket's past values (the last Tuesdays, the last days at 14:00); the **spread** is the median
absolute deviation (MAD) of every past value from the median of its own seasonal bucket without it,
in percent of that median, pooled over all buckets. Medians, because one bad day moves a mean and a
standard deviation as far as it likes and a median not at all; the spread pooled over every bucket,
because two or three Tuesdays say little of how much a Tuesday varies, while fifty-odd days of all
weekdays do; in percent, because a quiet Sunday varies less in rows than a busy Monday, not less in
share. A value is anomalous when it lies farther from the center than ``sensitivity`` times the
spread (a MAD scaled to a standard deviation), or when it and the bucket before are off the same
way by ``SHIFT_SHARE`` of that on average (a level shift), or when it has not moved for ``STUCK_BUCKETS``
buckets in a row although the metric never held still before. The center follows the trend of the
last ``LEVEL_BUCKETS`` buckets, and the band widens while the center stands on few values.

Only the buckets before the judged one are used (a bucket is never in its own baseline), and the
buckets judged anomalous and those read while the spreadsheet failed are left out (``Buckets``
marks them): a past incident does not widen tomorrow's band. Unless they are most of the latest
values of their seasonal bucket: a change that lasts that long is the metric's new normal.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Literal

from .buckets import BucketSize, hour_of, weekday_of

Seasonality = Literal["none", "day_of_week", "hour_of_day", "hour_of_week"]
Sensitivity = Literal["low", "normal", "high"]

# How far from the center, in spreads (a MAD scaled to a standard deviation), a value is anomalous.
# Chosen on bench/anomaly_eval.py's generated series: "normal" keeps false alarms under 1 per 1,000
# spreadsheet-days there.
SENSITIVITY: dict[str, float] = {"low": 7.0, "normal": 5.0, "high": 3.5}
MAD_TO_SIGMA = 1.4826  # a normal distribution's standard deviation is 1.4826 MADs
MIN_SPREAD = 0.01  # 1 % of the center: a metric that never moved still tolerates a rounding
STUCK_BUCKETS = 4  # the same value this many buckets in a row, where it never held still before
# Past values of each seasonal bucket a baseline looks at: enough for a median that one or two odd
# values do not move, few enough that a trend does not leave the center behind.
SAME_BUCKET_VALUES = {"none": 14, "day_of_week": 8, "hour_of_day": 14, "hour_of_week": 4}
BUCKET_SIZE: dict[str, BucketSize] = {"none": "day", "day_of_week": "day", "hour_of_day": "hour",
                                      "hour_of_week": "hour"}
SEASON_BUCKETS = {"none": 1, "day_of_week": 7, "hour_of_day": 24, "hour_of_week": 168}
# Values of the same seasonal bucket a center needs: a median of three outvotes one odd day (a holiday
# kept while the check was learning), a median of two is their midpoint.
MIN_SAME_BUCKET = 3
CENTER_ERROR = math.pi / 2  # a median's variance over n values, in the values' own: pi / 2n
# The buckets that tell the level now (a trend's): at least the last two weeks of daily buckets, as the
# median of fewer ratios is noisy enough to move the center by more than the trend it corrects.
LEVEL_BUCKETS = 14
# A level shift: this bucket and the one before off the same way by this share of the band on average,
# each by SHIFT_LEAST of it at least. An average of two spreads' worth is twice as sure as either
# (its own spread is 0.71 of theirs), so it tells a lasting shift of 30 % in a noisy metric more
# often than "both beyond" would at the same rate of false alarms.
SHIFT_SHARE = 0.6
SHIFT_LEAST = 0.3


def span_of(seasonality: str) -> int:
    """The buckets a check keeps: each seasonal bucket's values a baseline looks at, and the one judged."""
    return SEASON_BUCKETS[seasonality] * SAME_BUCKET_VALUES[seasonality] + 1


def season_key(number: int, seasonality: str) -> int:
    """Which seasonal bucket bucket ``number`` is: its weekday, its hour, its hour of the week, or one."""
    size = BUCKET_SIZE[seasonality]
    if seasonality == "day_of_week":
        return weekday_of(number, size)
    if seasonality == "hour_of_day":
        return hour_of(number, size)
    if seasonality == "hour_of_week":
        return weekday_of(number, size) * 24 + hour_of(number, size)
    return 0


@dataclass(frozen=True)
class Baseline:
    """What is normal for one bucket: its ``center``, the band a value may lie in (``low``-``high``),
    and the same seasonal bucket's past values it stands on (``usual``: their smallest and largest)."""

    center: float
    spread: float  # as a share of the center
    low: float
    high: float
    usual: tuple[float, float]
    samples: int

    def off_by(self, value: float) -> float:
        """How many spreads ``value`` lies from the center (signed)."""
        return (value - self.center) / (self.spread * max(abs(self.center), _TINY))


_TINY = 1e-9


def mad(values: Sequence[float]) -> float:
    """The median absolute deviation from the median, unscaled."""
    middle = median(values)
    return median(abs(value - middle) for value in values)


Point = tuple[int, float, bool]  # a bucket's number, its value, whether it is left out of baselines


def baseline(points: Sequence[Point], number: int, seasonality: str, sensitivity: float) -> Baseline | None:
    """The baseline of bucket ``number`` from ``points`` (oldest first; only those before ``number``
    are used); None while its seasonal bucket has fewer than ``MIN_SAME_BUCKET`` usable past values."""
    groups = _groups([point for point in points if point[0] < number], seasonality)
    same = [value for _, value in groups.get(season_key(number, seasonality), [])]
    if len(same) < MIN_SAME_BUCKET:
        return None
    center = median(same) * _level(groups, number, seasonality)
    # A new value's spread around a median of n values, itself off by about 1.25 / sqrt(n) spreads:
    # a center learnt from two Tuesdays is less sure than one from eight, and the band says so.
    sureness = math.sqrt(1 + CENTER_ERROR / len(same))
    spread = max(_pooled_spread(groups), MIN_SPREAD, _one_unit(groups, center)) * sureness
    width = sensitivity * spread * max(abs(center), _TINY)
    return Baseline(center, spread, center - width, center + width, (min(same), max(same)), len(same))


def _groups(points: Sequence[Point], seasonality: str) -> dict[int, list[tuple[int, float]]]:
    """Each seasonal bucket's latest ``SAME_BUCKET_VALUES`` values a baseline may use, oldest first.

    The values left out are used again when they are most of the latest: a change that lasts that long
    is the metric's new normal, not an incident, and a baseline that kept refusing it would alert on
    every bucket for as long as the history reaches back."""
    groups: dict[int, list[Point]] = defaultdict(list)
    for point in points:
        groups[season_key(point[0], seasonality)].append(point)
    keep = SAME_BUCKET_VALUES[seasonality]
    usable: dict[int, list[tuple[int, float]]] = {}
    for key, latest in groups.items():
        latest = latest[-keep:]
        left_out = sum(1 for point in latest if point[2])
        usable[key] = [(at, value) for at, value, out in latest if not out or 2 * left_out > len(latest)]
    return usable


def _one_unit(groups: dict[int, list[tuple[int, float]]], center: float) -> float:
    """A whole-number metric (rows, a count of units) moves by one at least: a spread of one unit, as
    a share of the center, keeps a Sunday of 10 rows from alerting at 9."""
    whole = all(float(value).is_integer() for values in groups.values() for _, value in values)
    return 1 / abs(center) if whole and center else 0.0


def _level(groups: dict[int, list[tuple[int, float]]], number: int, seasonality: str) -> float:
    """How far the metric's level moved since the middle of the baseline's weeks (a trend): the median
    ratio of the last season's values to the median of the rest of their own seasonal bucket. A center
    of eight Tuesdays otherwise lags a growing metric by four weeks of its growth."""
    recent = number - max(SEASON_BUCKETS[seasonality], LEVEL_BUCKETS)
    ratios = []
    for values in groups.values():
        for index, (at, value) in enumerate(values):
            if at < recent or len(values) < 3:
                continue
            rest = median(v for n, (_, v) in enumerate(values) if n != index)
            if rest > 0 and value >= 0:
                ratios.append(value / rest)
    return median(ratios) if len(ratios) >= 3 else 1.0


def _pooled_spread(groups: dict[int, list[tuple[int, float]]]) -> float:
    """The MAD, scaled to a standard deviation, of each value's deviation from the median of the rest
    of its seasonal bucket, in shares of that median: leaving the value out keeps a group of two from
    looking twice as steady as it is."""
    deviations: list[float] = []
    for values in groups.values():
        if len(values) < 2:
            continue
        for index, (_, value) in enumerate(values):
            rest = median(v for n, (_, v) in enumerate(values) if n != index)
            deviations.append((value - rest) / max(abs(rest), _TINY))
    if not deviations:
        return 0.0
    return MAD_TO_SIGMA * median(abs(deviation) for deviation in deviations)


def held_still(recent: Sequence[float | None], points: Sequence[Point]) -> bool:
    """The last ``STUCK_BUCKETS`` buckets (the judged one last, none missing) hold one value, and no
    two consecutive buckets of ``points`` (those before them) ever held one: a metric that always
    moved stopped."""
    if len(recent) < STUCK_BUCKETS or None in recent or len(set(recent[-STUCK_BUCKETS:])) != 1:
        return False
    pairs = [(x, y) for (a, x, _), (b, y, _) in zip(points, points[1:], strict=False) if b == a + 1]
    return len(pairs) >= 2 * STUCK_BUCKETS and all(x != y for x, y in pairs)
