"""Check evaluation: pure functions from a check and the values Google returned to a CheckResult.

``evaluate(check, value_range, now, tz)`` judges one check; ``evaluate_all`` judges a spreadsheet's
checks against its one batchGet answer. Neither does I/O. Both raise ``ValuesStillLoading`` when a
cell still shows "Loading...", so the caller retries the read instead of reporting anything.

Rules worth knowing (see also ``dates`` for what counts as a date):

* Empty cells (absent, ``""`` or whitespace) are ignored everywhere. Numbers are JSON numbers only:
  under UNFORMATTED_VALUE a string such as "5" is text the user typed, and booleans are not numbers.
* ``not_empty`` and ``row_count`` count sheet rows holding at least one non-empty cell, whatever
  the major dimension.
* ``threshold``: ``min``/``max``/``sum`` use the numeric cells and ignore the rest; ``count`` counts
  non-empty cells of any type; ``value`` is the range's first non-empty cell. When the aggregate is
  undefined (``min``/``max``/``value`` with no numeric cell, ``sum`` over only non-numeric cells),
  the check reports it at its most severe configured level, because silence when the data vanished
  is worse than a noisy alert. Fail wins over warn.
* ``freshness`` compares ``now`` minus the newest date in the range (or the file's modifiedTime) with
  its age conditions; a range without any date is reported like an undefined aggregate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo

from monitor.core.durations import human_duration
from monitor.core.timefmt import format_utc, parse_utc
from monitor.core.wording import counted
from monitor.core.zones import wall_clock

from .cells import FORMULA_ERRORS, Cell, ReadRange, Values, coded_cells, is_number, only_rows, values_of
from .column_evaluate import COLUMN_EVALUATORS
from .conditions import Condition, format_number
from .dates import MAX_SERIAL, date_of
from .models import Check, FormulaErrorsCheck, FreshnessCheck, NotEmptyCheck, RowCountCheck, ThresholdCheck
from .past import NO_PAST, PAST_EVALUATORS, Past
from .result import MAX_CELLS, CheckResult, Status

_REFS_IN_MESSAGE = 3  # the message names a few cells; ``cells`` carries up to MAX_CELLS

ValueRange = Mapping[str, Any]


def evaluate(
    check: Check,
    value_range: ValueRange | None,
    now: datetime,
    tz: tzinfo | str | None = None,
    modified_time: datetime | str | None = None,
    past: Past | None = None,
    others: Mapping[str, ValueRange] | None = None,
) -> CheckResult:
    """Judge one check against the ValueRange Google returned for its range.

    ``check`` is one of the check models (``models``), already validated. ``now`` must be aware.
    ``tz`` is the spreadsheet's time zone (a tzinfo or an IANA name; None means UTC): date serials
    and date strings without an offset are read in it, and a freshness message shows the newest
    moment on its clock, with the offset ("2026-01-05 14:30 UTC+3"). ``modified_time`` (aware
    datetime or Drive's RFC 3339 string) is needed only by freshness checks with
    ``source="modified_time"``. ``past``: what checks kept over time or across spreadsheets are
    judged against (``monitor.checks.past``; none: a first read). ``others`` maps the ranges of a
    row filter (``where_ranges``) to their ValueRanges; a check with a filter judges only the rows
    that pass. A check of ``severity = "warn"`` warns where it would fail; its ``owner`` goes with
    its result. Raises
    ValuesStillLoading; TypeError for anything that is not a check model; ValueError for a naive
    ``now`` or a missing ``modified_time``.
    """
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    where = getattr(check, "row_filter", None)  # anything but a check model is refused below
    if where is not None and not check.filters_in_table and check.a1 is not None:
        rows = set(values_of(value_range).rows)
        value_range = only_rows(value_range, where.passing_rows(check.a1, rows, others or {}))
    if (judge := PAST_EVALUATORS.get(type(check))) is not None:
        result = judge(check, value_range, now, past or NO_PAST)
    elif (evaluator := _EVALUATORS.get(type(check))) is not None:
        result = evaluator(check, value_range, now, _zone(tz), modified_time)
    else:
        raise TypeError(f"not a check model: {type(check).__name__} (build one of "
                        f"{', '.join(kind.__name__ for kind in _EVALUATORS)})")
    if where is None and check.severity == "fail" and check.owner is None:
        return result  # the common case, kept cheap: a round judges every check of every spreadsheet
    # A column check says its filter after the rows it counts (column_evaluate), or not at all when
    # a column is not there.
    filtered = where is not None and not check.filters_in_table
    message = f"{result.message} in rows where {where}" if filtered else result.message
    status: Status = "warn" if check.severity == "warn" and result.status == "fail" else result.status
    return replace(result, status=status, message=message, owner=check.owner)


def evaluate_all(
    checks: Sequence[Check],
    value_ranges: Mapping[str, ValueRange] | Sequence[ValueRange],
    now: datetime,
    tz: tzinfo | str | None = None,
    modified_time: datetime | str | None = None,
    past: Past | None = None,
) -> list[CheckResult]:
    """Judge every check of one spreadsheet, in order.

    ``value_ranges`` is either the batchGet's ``valueRanges`` list for the ranges
    ``ranges_of(checks)`` requested, in that order, or a mapping from each check's ``range`` *as
    written in the config* to its ValueRange (Google echoes ranges differently, so never key by the
    echo). If any range still shows "Loading...", ValuesStillLoading is raised and nothing returned.
    """
    if not isinstance(value_ranges, Mapping):
        requested = ranges_of(checks)
        if len(value_ranges) != len(requested):
            raise ValueError(
                f"{len(requested)} ranges requested (ranges_of(checks)) but "
                f"{len(value_ranges)} value ranges given"
            )
        value_ranges = dict(zip(requested, value_ranges, strict=True))
    value_ranges = {text: ReadRange(values) if values is not None else None
                    for text, values in value_ranges.items()}

    def values_for(check: Check) -> ValueRange | None:
        if check.range is None:
            return None
        for text in (check.range, *check.where_ranges):
            if text not in value_ranges:
                raise KeyError(f"no values were read for range {text!r} of {check.name!r}")
        return value_ranges[check.range]

    return [evaluate(check, values_for(check), now, tz, modified_time, past, value_ranges)
            for check in checks]


def ranges_of(checks: Sequence[Check]) -> tuple[str, ...]:
    """The ranges to read for ``checks``, each once, in first-use order: one batchGet's ``ranges``.

    Freshness checks on the file's modified time read no range (their ``range`` is None); a row
    filter reads its columns over the check's rows, after the check's own range.
    """
    return tuple(dict.fromkeys(text for check in checks if check.range is not None
                               for text in (check.range, *check.where_ranges)))


def needs_modified_time(checks: Sequence[Check]) -> bool:
    """True if a freshness check asks for the file's modified time (one Drive request)."""
    return any(isinstance(c, FreshnessCheck) and c.source == "modified_time" for c in checks)


# --- formula_errors ----------------------------------------------------------------------------


def _formula_errors(check: FormulaErrorsCheck, value_range, now, tz, modified_time) -> CheckResult:
    errors = coded_cells(value_range, _error_code)  # a whole tab's values: cells only for errors
    if not errors:
        return _result(check, "ok", "no formula errors", 0)
    by_code = Counter(_error_code(c.value) for c in errors)
    cells = counted(len(errors), "cell")
    if len(by_code) == 1:
        (code,) = by_code
        verb = "shows" if len(errors) == 1 else "show"
        message = f"{cells} {verb} {code} ({_refs(errors)})"
    else:
        counts = ", ".join(f"{code} ×{n}" for code, n in by_code.most_common())
        message = f"{cells} show formula errors: {counts} ({_refs(errors)})"
    return _result(check, "fail", message, len(errors), errors)


def _error_code(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() in FORMULA_ERRORS:
        return value.strip()
    return None


# --- not_empty, row_count ----------------------------------------------------------------------


def _non_empty_rows(value_range) -> int:
    return len(set(values_of(value_range).rows))


def _not_empty(check: NotEmptyCheck, value_range, now, tz, modified_time) -> CheckResult:
    min_rows = check.min_rows
    rows = _non_empty_rows(value_range)
    found = counted(rows, "non-empty row")
    if rows >= min_rows:
        return _result(check, "ok", found, rows)
    if rows == 0:
        return _result(check, "fail", "no non-empty rows" + _needed(min_rows), rows)
    return _result(check, "fail", f"only {found}{_needed(min_rows)}", rows)


def _needed(min_rows: int) -> str:
    return f" (at least {min_rows} required)"


def _row_count(check: RowCountCheck, value_range, now, tz, modified_time) -> CheckResult:
    low, high = check.min, check.max
    rows = _non_empty_rows(value_range)
    if low is not None and rows < low:
        return _result(check, "fail", f"{counted(rows, 'row')} < min {low}", rows)
    if high is not None and rows > high:
        return _result(check, "fail", f"{counted(rows, 'row')} > max {high}", rows)
    return _result(check, "ok", counted(rows, "row"), rows)


# --- threshold ---------------------------------------------------------------------------------


def _threshold(check: ThresholdCheck, value_range, now, tz, modified_time) -> CheckResult:
    aggregate, warn, fail = check.aggregate, check.warn, check.fail
    found = values_of(value_range)
    values, numeric = found.values, found.numeric
    others = len(values) - len(numeric)

    if aggregate == "count":
        observed: float = len(values)
    elif aggregate == "distinct":
        observed = len({_distinct_key(value) for value in values})
    elif aggregate == "value" and values and not is_number(values[0]):
        message = f"{found.cell(0).ref} is not a number: {_show(values[0])}"
        return _result(check, _most_severe(warn, fail), message, None, [found.cell(0)])
    elif aggregate == "value" and values:
        observed = values[0]
        numeric = [0]
    elif aggregate == "sum" and (numeric or not others):
        observed = sum(values[index] for index in numeric)
    elif aggregate in ("min", "max") and numeric:
        pick = min if aggregate == "min" else max
        observed = pick(values[index] for index in numeric)
    elif aggregate == "avg" and numeric:
        observed = sum(values[index] for index in numeric) / len(numeric)
    elif aggregate == "percentile" and numeric:
        observed = _percentile(sorted(values[index] for index in numeric), check.percentile or 0)
    else:
        return _undefined(check, check.label, found, _most_severe(warn, fail))

    ignored = ""
    if others and aggregate in ("min", "max", "sum", "avg", "percentile"):
        ignored = f" ({counted(others, 'non-numeric cell')} ignored)"
    shown = f"{check.label} {format_number(observed)}"
    for status, condition in (("fail", fail), ("warn", warn)):
        if condition is not None and condition.holds(observed):
            offenders: list[Cell] = []
            if aggregate in ("min", "max", "value", "percentile"):
                holding = (index for index in numeric if condition.holds(values[index]))
                offenders = found.cells(islice(holding, MAX_CELLS))
            return _result(check, status, f"{shown} {condition}{ignored}", observed, offenders)
    return _result(check, "ok", shown + ignored, observed)


def _percentile(ordered: list[float], level: float) -> float:
    """The level-th percentile, interpolated between the two nearest ranks: Sheets' PERCENTILE
    (PERCENTILE.INC), so the number matches what the spreadsheet's own formula shows."""
    position = (len(ordered) - 1) * level / 100
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _distinct_key(value: Any) -> Any:
    # "Apple " and "Apple" look the same in a cell; 5 and 5.0 are one number.
    return value.strip() if isinstance(value, str) else value


def _undefined(check: Check, aggregate: str, found: Values, status: Status) -> CheckResult:
    """No aggregate: the range holds no value, or none that is a number (the others are named)."""
    numeric = set(found.numeric)
    others = found.cells(islice((index for index in range(len(found)) if index not in numeric),
                                MAX_CELLS))
    if not others:
        return _result(check, status, f"no {aggregate}: the range is empty", None)
    message = (
        f"no {aggregate}: no numeric cells, {counted(len(found) - len(numeric), 'non-numeric cell')} "
        f"({_refs(others, len(found) - len(numeric))})"
    )
    return _result(check, status, message, None, others)


# --- freshness ---------------------------------------------------------------------------------


def _freshness(check: FreshnessCheck, value_range, now, tz, modified_time) -> CheckResult:
    if check.source == "modified_time":
        if modified_time is None:
            raise ValueError(f"{check.name!r} needs the file's modifiedTime")
        return judge_age(check, _aware(modified_time), None, now, tz)
    found = values_of(value_range)
    newest, newest_index = _newest_date(found, tz)
    if newest_index is None:
        return _undefined_date(check, found, _most_severe(check.warn, check.fail))
    return judge_age(check, newest, found.cell(newest_index).ref, now, tz)


def judge_age(check: FreshnessCheck, newest: datetime, cell: str | None, now: datetime,
              tz: tzinfo | str | None = None) -> CheckResult:
    """A freshness check's result once its newest moment is known (the newest date, found in
    ``cell``, or the file's modified time when ``cell`` is None). It depends on ``now`` alone, so a
    spreadsheet that has not changed is re-judged from the moment its last read found."""
    tz = _zone(tz)
    what = "last modified" if check.source == "modified_time" else "newest date"
    age = (now - newest).total_seconds()
    local = wall_clock(newest, tz)  # with its offset: which zone a date was read in is never a guess
    shown = (
        f"{what} {local} is {human_duration(age)} old" if age >= 0
        else f"{what} {local} is {human_duration(-age)} in the future"
    )
    observed = format_utc(newest)
    refs = (cell,) if cell else ()
    for status, condition in (("fail", check.fail), ("warn", check.warn)):
        if condition is not None and condition.holds(age):
            return CheckResult(check.name, check.kind, status, f"{shown} ({condition})", observed, refs)
    return CheckResult(check.name, check.kind, "ok", shown, observed)


def _newest_date(found: Values, tz: tzinfo) -> tuple[datetime | None, int | None]:
    """The newest moment among ``found``'s values and its index, the first in reading order on a tie.

    Equal to ``max`` over every value's ``date_of``, but serial numbers (nearly every date the monitor
    reads) order like their moments, so only the largest one, compared at ``from_serial``'s millisecond
    precision, is turned into a datetime; texts are read as dates only when the range holds some.
    """
    values, numeric = found.values, found.numeric
    dated: list[tuple[datetime, int]] = []
    serials = [index for index in numeric if 1 <= values[index] <= MAX_SERIAL]
    if serials:
        best_ms = round(max(values[index] for index in serials) * 86_400_000)
        first = next(index for index in serials if round(values[index] * 86_400_000) == best_ms)
        dated.append((date_of(values[first], tz), first))
    if len(numeric) < len(values):
        numbers = set(numeric)
        dated.extend((moment, index) for index, value in enumerate(values)
                     if index not in numbers and (moment := date_of(value, tz)) is not None)
        dated.sort(key=lambda pair: pair[1])  # back in reading order, for ties
    if not dated:
        return None, None
    return max(dated, key=lambda pair: pair[0])


def _undefined_date(check: FreshnessCheck, found: Values, status: Status) -> CheckResult:
    if not found:
        return _result(check, status, "no dates: the range is empty", None)
    cells = found.cells(range(min(len(found), MAX_CELLS)))
    message = f"no dates: {counted(len(found), 'cell')} hold no date ({_refs(cells, len(found))})"
    return _result(check, status, message, None, cells)


def format_age(seconds: float) -> str:
    """A short age for a table's column: "45s", "12m", "5h 12m", "2d", "2d 3h" (two largest units).
    Messages say it in words (``monitor.core.durations.human_duration``)."""
    total = int(seconds)
    units = ((86400, "d"), (3600, "h"), (60, "m"), (1, "s"))
    for index, (size, unit) in enumerate(units):
        if total >= size or unit == "s":
            text = f"{total // size}{unit}"
            if index + 1 < len(units):
                next_size, next_unit = units[index + 1]
                rest = (total % size) // next_size
                if rest:
                    text += f" {rest}{next_unit}"
            return text
    raise AssertionError("unreachable")


# --- shared helpers ----------------------------------------------------------------------------


def _result(check: Check, status: Status, message: str, observed: Any, offenders=()) -> CheckResult:
    refs = tuple(c.ref for c in offenders[:MAX_CELLS])
    return CheckResult(check.name, check.kind, status, message, observed, refs)


def _most_severe(warn: Condition | None, fail: Condition | None) -> Status:
    return "fail" if fail is not None or warn is None else "warn"


def _refs(cells: list[Cell], total: int | None = None) -> str:
    """The first cells' references, and how many more of ``total`` (all of ``cells`` by default)."""
    shown = ", ".join(c.ref for c in cells[:_REFS_IN_MESSAGE])
    more = (len(cells) if total is None else total) - _REFS_IN_MESSAGE
    return f"{shown} and {more} more" if more > 0 else shown


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value).lower()
    return text if len(text) <= 40 else text[:37] + "..."


def _aware(moment: datetime | str) -> datetime:
    if isinstance(moment, str):
        return parse_utc(moment)
    if moment.tzinfo is None:
        raise ValueError("modified_time must be aware (Drive reports UTC)")
    return moment


def _zone(tz: tzinfo | str | None) -> tzinfo:
    if tz is None:
        return UTC
    return ZoneInfo(tz) if isinstance(tz, str) else tz


_EVALUATORS: dict[type, Callable[..., CheckResult]] = {
    FormulaErrorsCheck: _formula_errors,
    NotEmptyCheck: _not_empty,
    RowCountCheck: _row_count,
    ThresholdCheck: _threshold,
    FreshnessCheck: _freshness,
    **COLUMN_EVALUATORS,
}
