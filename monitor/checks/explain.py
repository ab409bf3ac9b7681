"""A check in one sentence, from its parsed conditions: "fails when Stock!F2:F has a value below 0".

Each check model's ``explain()`` builds its sentence from these pieces; `check-config` prints them
and docs/configuration.md shows them beside each example. A check of ``severity = "warn"`` says
"warns" where it would fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .conditions import Condition, format_number

_WORDS = {"<": "is below", "<=": "is at most", ">": "is above", ">=": "is at least", "==": "is",
          "!=": "is not"}
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


def percentile_label(level: float) -> str:
    """95 -> "p95", 99.9 -> "p99.9"."""
    return f"p{format_number(float(level))}"


def scope(check: Any) -> str:
    """The check's range, and its row filter when it has one: "Stock!F2:F (rows where C = 'active')"."""
    where = getattr(check, "where", None)
    return f"{check.range} (rows where {where})" if where is not None else str(check.range)


def condition_words(condition: Condition, unit: str = "") -> str:
    """"is below 5", "is at least 2h"."""
    return f"{_WORDS[condition.op]} {condition.label.split(' ', 1)[1]}{unit}"


def threshold_clause(check: Any, condition: Condition) -> str:
    shown = condition.label.split(" ", 1)[1]
    plain = _ANY_VALUE.get((check.aggregate, condition.op))
    if plain is not None:
        return f"{scope(check)} has a value {plain} {shown}"
    if check.aggregate == "percentile":
        noun = f"the {_ordinal(check.percentile)} percentile of the numbers in {{}}"
    else:
        noun = _NOUNS[check.aggregate]
    return f"{noun.format(scope(check))} {condition_words(condition)}"


def age_clause(check: Any, condition: Condition) -> str:
    age = condition.label.split(" ", 1)[1]
    older = "older than" if condition.op == ">" else "at least as old as"
    if check.source == "modified_time":
        return f"the file was last modified {'more than' if condition.op == '>' else 'at least'} {age} ago"
    return f"the newest date in {scope(check)} is {older} {age}"


def sentence(check: Any, clauses: Sequence[tuple[str, str]]) -> str:
    """"fails when A; warns when B": each clause under its status, a fail capped to a warning by the
    check's severity."""
    parts: list[str] = []
    previous = ""
    for status, text in clauses:
        verb = "warns" if status == "warn" or check.severity == "warn" else "fails"
        parts.append(f"or when {text}" if verb == previous else f"{verb} when {text}")
        previous = verb
    return "; ".join(parts).replace("; or when", ", or when")


def _ordinal(level: float | None) -> str:
    number = format_number(float(level or 0))
    if not number.isdigit():
        return number + "th"
    last_two = int(number) % 100
    suffix = "th" if 10 <= last_two <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(last_two % 10, "th")
    return number + suffix


def condition_text(check: Any) -> str:
    """The check's conditions in short, for a table's column: "fail p95 > 100; warn p95 > 50"."""
    kind = check.kind
    if kind == "formula_errors":
        text = "fail on any formula error"
    elif kind == "not_empty":
        text = f"fail rows < {check.min_rows}"
    elif kind == "row_count":
        bounds = [f"rows < {check.min}" if check.min is not None else "",
                  f"rows > {check.max}" if check.max is not None else ""]
        text = "fail " + " or ".join(bound for bound in bounds if bound)
    else:  # threshold and freshness, and a kind with fail / warn conditions of its own
        what = check.label if kind == "threshold" else "age" if kind == "freshness" else kind
        text = "; ".join(f"{status} {what} {condition}" for status, condition
                         in (("fail", getattr(check, "fail", None)), ("warn", getattr(check, "warn", None)))
                         if condition is not None) or kind
    return text + " (severity warn: never fails)" if check.severity == "warn" else text
