"""A metric's history one value per bucket (an hour or a day on the spreadsheet's clock), bounded:
what an anomaly check keeps, and judges each read against.

A bucket is numbered on the spreadsheet's wall clock (hours or days since 1970-01-01 00:00 there), so
"Tuesday" and "at 14:00" are the spreadsheet's own; a daylight-saving jump skips or repeats one hour
bucket, which costs one value of a baseline, never a wrong weekday. Each read writes its value into
the bucket it falls in (the last read of a bucket is the bucket's value), and marks the bucket left
out of later baselines when that read was judged anomalous or its spreadsheet was failing. Buckets
older than the check's span are dropped: the document's size is bounded by the span, whatever the
number of reads.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from typing import Literal

from monitor.core.tracking import document

BucketSize = Literal["hour", "day"]
_SECONDS = {"hour": 3600, "day": 86400}
BUCKET_LENGTH = {size: timedelta(seconds=seconds) for size, seconds in _SECONDS.items()}
_EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday is 0)


@document
class Buckets:
    """``values[i]`` is bucket ``first + i``'s value (None: no read in it, or no value then);
    ``left_out``: the bucket numbers no baseline may use (judged anomalous, or read while the
    spreadsheet was failing)."""

    first: int
    values: tuple[float | None, ...]
    left_out: tuple[int, ...] = ()

    def points(self, before: int) -> list[tuple[int, float, bool]]:
        """The buckets before ``before`` that hold a value: (number, value, left out), oldest first."""
        out = set(self.left_out)
        numbered = ((self.first + index, value) for index, value in enumerate(self.values))
        return [(number, value, number in out) for number, value in numbered
                if value is not None and number < before]

    def value_at(self, number: int) -> float | None:
        index = number - self.first
        return self.values[index] if 0 <= index < len(self.values) else None

    @property
    def last(self) -> int:
        return self.first + len(self.values) - 1


def bucket_number(moment: datetime, zone: tzinfo, size: BucketSize) -> int:
    """The bucket ``moment`` falls in on the wall clock of ``zone``."""
    wall = moment.astimezone(zone).replace(tzinfo=UTC)
    return int(wall.timestamp() // _SECONDS[size])


def bucket_start(number: int, size: BucketSize) -> datetime:
    """The bucket's first moment as a wall-clock time (naive: on the spreadsheet's clock)."""
    return datetime(1970, 1, 1) + timedelta(seconds=number * _SECONDS[size])


def weekday_of(number: int, size: BucketSize) -> int:
    day = number if size == "day" else number // 24
    return (day + _EPOCH_WEEKDAY) % 7


def hour_of(number: int, size: BucketSize) -> int:
    return number % 24 if size == "hour" else 0


def with_reading(earlier: Buckets | None, number: int, value: float | None, span: int,
                 left_out: bool) -> Buckets:
    """``earlier`` with ``value`` written into bucket ``number``, the buckets more than ``span`` back
    dropped. A reading older than the kept buckets (a clock set back) changes nothing."""
    if earlier is not None and number < earlier.first:
        return earlier
    if earlier is None or number - earlier.last >= span:
        return Buckets(number, (value,), (number,) if left_out else ())
    values = list(earlier.values)
    values.extend([None] * (number - earlier.last))
    values[number - earlier.first] = value
    first = max(earlier.first, number - span + 1)
    out = {bucket for bucket in earlier.left_out if bucket >= first}
    if left_out:
        out.add(number)
    else:
        out.discard(number)  # the bucket's last read decides, as its value is that read's
    return Buckets(first, tuple(values[first - earlier.first:]), tuple(sorted(out)))
