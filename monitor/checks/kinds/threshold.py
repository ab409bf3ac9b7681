"""``threshold``: an aggregate of the range (``min``, ``max``, ``sum``, ``count``, ``value``, ``avg``,
``distinct``, ``percentile``) against ``warn`` / ``fail`` conditions.

``min``/``max``/``sum``/``avg``/``percentile`` use the numeric cells and ignore the rest; ``count``
counts non-empty cells of any type; ``value`` is the range's first non-empty cell. When the aggregate
is undefined (``min``/``max``/``value`` with no numeric cell, ``sum`` over only non-numeric cells),
the check reports it at its most severe configured level, because silence when the data vanished is
worse than a noisy alert. Fail wins over warn.
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Literal

from pydantic import Field, model_validator

from monitor.core.invalid_value import InvalidValue
from monitor.core.wording import counted

from .. import explain
from ..aggregates import Aggregate
from ..base import CheckBase
from ..cells import Cell, Values, is_number, refs_text, values_of
from ..conditions import Condition, format_number
from ..fields import A1Text, ConditionField, WhereField
from ..kind import Kind
from ..result import MAX_CELLS, CheckResult, Status, most_severe, result_of

_NOUNS = {
    "min": "the smallest number in {}",
    "max": "the largest number in {}",
    "sum": "the sum of {}",
    "count": "the number of non-empty cells in {}",
    "value": "the first value of {}",
    "avg": "the average of the numbers in {}",
    "distinct": "the number of distinct values in {}",
}
# "the smallest number is below 0" is "some number is below 0", which people say more plainly.
_ANY_VALUE = {("min", "<"): "below", ("min", "<="): "at most",
              ("max", ">"): "above", ("max", ">="): "at least"}


class ThresholdCheck(CheckBase):
    kind: Literal["threshold"] = "threshold"
    range: A1Text
    aggregate: Aggregate
    percentile: float | None = Field(default=None, gt=0, le=100)  # with aggregate = "percentile"
    where: WhereField | None = None
    warn: ConditionField | None = None
    fail: ConditionField | None = None

    @model_validator(mode="after")
    def _some_condition(self) -> ThresholdCheck:
        if self.warn is None and self.fail is None:
            raise InvalidValue("threshold needs a condition", 'add warn = "< 5", fail = "< 0" or both')
        if self.aggregate == "percentile" and self.percentile is None:
            raise InvalidValue('aggregate = "percentile" needs its level',
                               "add percentile = 95 (a number above 0, up to 100; 50 is the median)")
        if self.aggregate != "percentile" and self.percentile is not None:
            raise InvalidValue(f"percentile is set but aggregate is {self.aggregate!r}",
                               'write aggregate = "percentile", or remove percentile')
        self._check_where()
        return self

    @property
    def label(self) -> str:
        """The aggregate as messages show it: "min", "avg", "p95"."""
        if self.percentile is not None:
            return explain.percentile_label(self.percentile)
        return self.aggregate

    def explain(self) -> str:
        return explain.sentence(self, [(status, _clause(self, condition))
                                       for status, condition in (("fail", self.fail), ("warn", self.warn))
                                       if condition is not None])

    def conditions(self) -> str:
        return self._named_conditions(self.label)


def _clause(check: ThresholdCheck, condition: Condition) -> str:
    shown = condition.label.split(" ", 1)[1]
    plain = _ANY_VALUE.get((check.aggregate, condition.op))
    if plain is not None:
        return f"{explain.scope(check)} has a value {plain} {shown}"
    if check.aggregate == "percentile":
        noun = f"the {_ordinal(check.percentile)} percentile of the numbers in {{}}"
    else:
        noun = _NOUNS[check.aggregate]
    return f"{noun.format(explain.scope(check))} {explain.condition_words(condition)}"


def _ordinal(level: float | None) -> str:
    number = format_number(float(level or 0))
    if not number.isdigit():
        return number + "th"
    last_two = int(number) % 100
    suffix = "th" if 10 <= last_two <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(last_two % 10, "th")
    return number + suffix


def judge(check: ThresholdCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    aggregate, warn, fail = check.aggregate, check.warn, check.fail
    found = values_of(value_range)
    values, numeric = found.values, found.numeric
    others = len(values) - len(numeric)
    if aggregate == "value" and values and not is_number(values[0]):
        message = f"{found.cell(0).ref} is not a number: {_show(values[0])}"
        return result_of(check, most_severe(warn, fail), message, None, [found.cell(0)])
    if aggregate == "value" and values:
        numeric = [0]
    observed = _aggregate(check, found, others)
    if observed is None:
        return _undefined(check, check.label, found, most_severe(warn, fail))

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
            return result_of(check, status, f"{shown} {condition}{ignored}", observed, offenders)
    return result_of(check, "ok", shown + ignored, observed)


def _aggregate(check: ThresholdCheck, found: Values, others: int) -> float | None:
    """The check's aggregate of the range's values; None when there is none (no value, or no number
    among them). ``value``'s first cell is known to be a number here."""
    aggregate, values = check.aggregate, found.values
    numbers = [values[index] for index in found.numeric]
    if aggregate == "count":
        return len(values)
    if aggregate == "distinct":
        return len({_distinct_key(value) for value in values})
    if aggregate == "value":
        return values[0] if values else None
    if aggregate == "sum":
        return sum(numbers) if numbers or not others else None
    if not numbers:
        return None
    if aggregate in ("min", "max"):
        return min(numbers) if aggregate == "min" else max(numbers)
    if aggregate == "avg":
        return sum(numbers) / len(numbers)
    if aggregate == "percentile":
        return _percentile(sorted(numbers), check.percentile or 0)
    return None


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


def _undefined(check: ThresholdCheck, aggregate: str, found: Values, status: Status) -> CheckResult:
    """No aggregate: the range holds no value, or none that is a number (the others are named)."""
    numeric = set(found.numeric)
    others = found.cells(islice((index for index in range(len(found)) if index not in numeric),
                                MAX_CELLS))
    if not others:
        return result_of(check, status, f"no {aggregate}: the range is empty", None)
    message = (
        f"no {aggregate}: no numeric cells, {counted(len(found) - len(numeric), 'non-numeric cell')} "
        f"({refs_text(others, len(found) - len(numeric))})"
    )
    return result_of(check, status, message, None, others)


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value).lower()
    return text if len(text) <= 40 else text[:37] + "..."


KIND = Kind(ThresholdCheck, judge)
