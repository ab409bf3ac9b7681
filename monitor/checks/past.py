"""Checks judged against what earlier reads found, or against another spreadsheet: pure functions.

Evaluation stays pure: the caller hands in ``Past`` (a change check's series of earlier points, a
header row's earlier headers, the other side of a cross-sheet check as its spreadsheet's last read
found it) and each result's ``observed`` is the new point to keep: the metric, the headers, or the
keys. Keeping it, bounded, is the engine's (``monitor.engine.history``).

* ``change``: the metric (non-empty rows, or one of the threshold's aggregates) now, against the
  value in force at the previous read, or ``over`` ago (the newest point at or before then; when the
  history is younger than that, its oldest point: a drop since then happened within the window). The
  change is in percent of the earlier value; from 0 it is +/-infinity (any rise from nothing is
  "more than X %"). A metric that became undefined (the range emptied) is reported at the check's
  most severe level, as a threshold does.
* ``headers_changed``: the header row's non-empty texts, in order, against the previous read's.
* ``cross_sheet``: this range's aggregate against the other's (within ``tolerance``), or every value
  of this range among the other's. The other side unreadable is a finding at the check's level:
  agreement that cannot be seen is not agreement. Not read yet (``NOT_READ``) is no finding: the
  other's read, due in the same round, judges the check again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .cells import Values, is_number, values_of
from .conditions import format_number
from .models import ChangeCheck, Check, CrossSheetCheck, HeadersChangedCheck
from .result import MAX_CELLS, CheckResult, Status

ValueRange = Mapping[str, Any]
_KEYS_SHOWN = 3


NOT_READ = object()  # an OtherSide's value before the other spreadsheet's first read


@dataclass(frozen=True)
class OtherSide:
    """The other spreadsheet's range as its last read found it: ``value`` (an aggregate, or the sorted
    distinct keys; ``NOT_READ`` before its first read), or ``problem`` when it cannot be read now."""

    spreadsheet: str  # its name, as messages show it
    value: Any = None
    read_at: datetime | None = None
    problem: str | None = None


@dataclass(frozen=True)
class Past:
    """What a spreadsheet's checks are judged against, by check name."""

    series: Mapping[str, tuple[tuple[datetime, Any], ...]] = field(default_factory=dict)
    headers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    others: Mapping[str, OtherSide] = field(default_factory=dict)


NO_PAST = Past()


def metric_of(aggregate: str, value_range: ValueRange | None) -> float | None:
    """Non-empty rows, or the threshold's aggregate over the range (None: undefined, as there)."""
    found = values_of(value_range)
    values = found.values
    if aggregate == "row_count":
        return len(set(found.rows))
    if aggregate == "count":
        return len(values)
    if aggregate == "distinct":
        return len({value.strip() if isinstance(value, str) else value for value in values})
    numbers = [values[index] for index in found.numeric]
    if aggregate == "avg":
        return sum(numbers) / len(numbers) if numbers else None
    if aggregate == "value":
        return values[0] if values and is_number(values[0]) else None
    if aggregate == "sum":
        return sum(numbers) if numbers or len(numbers) == len(values) else None
    if aggregate in ("min", "max"):
        return (min if aggregate == "min" else max)(numbers) if numbers else None
    # An aggregate added to the threshold's list must be computed here as the threshold computes it.
    raise ValueError(f"no metric {aggregate!r} for change and cross-sheet checks")


def keys_of(value_range: ValueRange | None) -> Values:
    """The non-empty values of a key range, as text (a key 42 and "42" are one key), where each sits."""
    found = values_of(value_range)
    return found.replaced([_key(value) for value in found.values])


def _key(value: Any) -> str:
    return format_number(value) if is_number(value) else str(value).strip()


# --- change ------------------------------------------------------------------------------------


def judge_change(check: ChangeCheck, value_range: ValueRange | None, now: datetime, past: Past
                 ) -> CheckResult:
    current = metric_of(check.aggregate, value_range)
    shown = f"{check.aggregate} {_number(current)}"
    earlier = baseline(past.series.get(check.name, ()), now, check.over)
    if earlier is None:
        return _result(check, "ok", f"{shown}; nothing to compare with yet (first read)", current)
    at, before = earlier
    since = "the previous read" if check.over is None else f"{_ago(now - at)} ago"
    if current is None or before is None:
        if current is None and before is not None:
            return _result(check, _most_severe(check), f"no {check.aggregate} now: the range is empty "
                                                       f"(was {_number(before)} {since})", None)
        return _result(check, "ok", f"{shown} (none {since})", current)
    change = percent_change(before, current)
    said = f"{shown}, {_signed(change)} since {since} ({_number(before)})"
    if check.only_grows and current < before:
        return _result(check, "fail", f"{said}: it should only grow", current)
    for status, condition in (("fail", check.fail), ("warn", check.warn)):
        if condition is not None and condition.holds(change):
            return _result(check, status, f"{said}, {condition} %", current)
    return _result(check, "ok", said, current)


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


# --- headers_changed ---------------------------------------------------------------------------


def judge_headers(check: HeadersChangedCheck, value_range: ValueRange | None, now: datetime, past: Past
                  ) -> CheckResult:
    headers = [str(value).strip() for value in values_of(value_range).values]
    before = past.headers.get(check.name)
    if before is None or list(before) == headers:
        note = "first read" if before is None else "unchanged since the previous read"
        return _result(check, "ok", f"{len(headers)} headers ({note})", headers)
    removed = [h for h in before if h not in headers]
    added = [h for h in headers if h not in before]
    parts = [f"removed {_list(removed)}" if removed else "", f"added {_list(added)}" if added else ""]
    what = "; ".join(part for part in parts if part) or "reordered"
    message = (f"headers changed since the last read ({what}): was {_list(before)}, now {_list(headers)}")
    return _result(check, check.level, message, headers)


def _list(texts) -> str:
    return "[" + ", ".join(repr(text) for text in texts) + "]"


# --- cross_sheet -------------------------------------------------------------------------------


def judge_cross(check: CrossSheetCheck, value_range: ValueRange | None, now: datetime, past: Past
                ) -> CheckResult:
    mine = keys_of(value_range) if check.match == "keys" else metric_of(check.aggregate, value_range)
    return compare_cross(check, mine, past.others.get(check.name))


def compare_cross(check: CrossSheetCheck, mine: Any, other: OtherSide | None) -> CheckResult:
    """A cross-sheet check's result from this side (an aggregate, or the key cells: ``keys_of``) and
    the other: a read judges it, and so does the other side's read (``monitor.engine.history``)."""
    if other is None or other.value is NOT_READ:
        # Not a finding: the other spreadsheet is read in the same round, and its read judges this
        # check again (monitor.engine.history); telling it would alert on every first round.
        name = other.spreadsheet if other is not None else check.other
        return _result(check, "ok", f"{name} {check.other_range} not read yet: compared once it is", None)
    if other.problem is not None:
        return _result(check, check.level, f"cannot compare with {other.spreadsheet} {check.other_range}: "
                                           f"{other.problem}", None)
    if check.match == "keys":
        return _judge_keys(check, mine, other)
    said = f"{check.aggregate} {_number(mine)} here, {_number(other.value)} in {other.spreadsheet} " \
           f"{check.other_range}"
    if mine is None or other.value is None:
        return _result(check, check.level, f"{said}: one side has no {check.aggregate}", mine)
    gap = abs(mine - other.value)
    if gap > check.tolerance:
        allowed = f" (tolerance {format_number(check.tolerance)})" if check.tolerance else ""
        return _result(check, check.level, f"{said}: they differ by {format_number(gap)}{allowed}", mine)
    return _result(check, "ok", f"{said}: they agree", mine)


def _judge_keys(check: CrossSheetCheck, keys: Values, other: OtherSide) -> CheckResult:
    known = set(other.value or ())
    missing = keys.cells(index for index, key in enumerate(keys.values) if key not in known)
    if not missing:
        return _result(check, "ok", f"all {len(keys)} keys are in {other.spreadsheet} {check.other_range}",
                       len(keys))
    shown = ", ".join(f"{c.value!r} ({c.ref})" for c in missing[:_KEYS_SHOWN])
    more = f" and {len(missing) - _KEYS_SHOWN} more" if len(missing) > _KEYS_SHOWN else ""
    message = (f"{len(missing)} of {len(keys)} keys are not in {other.spreadsheet} "
               f"{check.other_range}: {shown}{more}")
    return CheckResult(check.name, check.kind, check.level, message, len(keys),
                       tuple(c.ref for c in missing[:MAX_CELLS]))


# --- shared ------------------------------------------------------------------------------------


def _result(check: Check, status: Status, message: str, observed: Any) -> CheckResult:
    return CheckResult(check.name, check.kind, status, message, observed)


def _most_severe(check: ChangeCheck) -> Status:
    return "fail" if check.fail is not None or check.only_grows or check.warn is None else "warn"


def _number(value: Any) -> str:
    return "none" if value is None else format_number(value)


PAST_EVALUATORS: dict[type, Callable[[Any, ValueRange | None, datetime, Past], CheckResult]] = {
    ChangeCheck: judge_change,
    HeadersChangedCheck: judge_headers,
    CrossSheetCheck: judge_cross,
}
