"""The column checks in one sentence, for `check-config`: "fails when Price of Stock!A1:H500 is not a
number or is below 0 in any row". A check of ``severity = "warn"`` says "warns" where it would fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .conditions import format_number
from .formats import FORMATS
from .rates import Rate

_RATE_WORDS = {">": "more than", ">=": "at least", "<": "fewer than", "<=": "at most", "==": "exactly",
               "!=": "other than"}


def rate_words(rate: Rate) -> str:
    """"any row", "more than 3 rows", "at least 5% of the rows"."""
    op, value = rate.condition.op, rate.condition.value
    if op == ">" and value == 0:
        return "any row"
    shown = format_number(value)
    if rate.percent:
        return f"{_RATE_WORDS[op]} {shown}% of the rows"
    return f"{_RATE_WORDS[op]} {shown} row{'s' * (value != 1)}"


def sentence(check: Any, subject: str) -> str:
    """Each of the check's levels (fail first) as "<verb> when <subject> in <rate>", the rate's rows
    those of its row filter when it has one: "in any row where Status = 'active'"."""
    where = getattr(check, "where", None)
    rows = f" where {where}" if where is not None else ""
    parts = []
    for status, rate in check.levels:
        verb = "warns" if status == "warn" or getattr(check, "severity", "fail") == "warn" else "fails"
        parts.append(f"{verb} when {subject} in {rate_words(rate)}{rows}")
    return "; ".join(parts)


def missing_words(check: Any) -> str:
    return _either(["blank", *(f'"{text}"' for text in check.missing_values)])


def invalid_rules(check: Any) -> str:
    """What a value breaking the check's rules is: "is not a number or is below 0"."""
    rules: list[str] = []
    if check.valid_values:
        rules.append("is not one of " + ", ".join(_shown(value) for value in check.valid_values))
    if check.format is not None:
        rules.append(f"is not {FORMATS[check.format][1]}")
    if check.regex is not None:
        rules.append(f"does not match {check.regex}")
    if check.min is not None:
        rules.append(f"is below {format_number(check.min)}")
    if check.max is not None:
        rules.append(f"is above {format_number(check.max)}")
    if check.min_length is not None:
        rules.append(f"is shorter than {check.min_length} characters")
    if check.max_length is not None:
        rules.append(f"is longer than {check.max_length} characters")
    return _either(rules)


def header_problems(check: Any) -> str:
    """What the header row of a headers check must not do: "lacks SKU or Qty, or has Notes"."""
    problems: list[str] = []
    if check.required:
        problems.append(f"lacks {_either(check.required)}")
    if check.forbidden:
        problems.append(f"has {_either(check.forbidden)}")
    if check.order:
        problems.append(f"does not have {', '.join(check.order)} in this order")
    problems += [f"does not have {header} in column {letter}" for header, letter in check.positions]
    return _either(problems, ", or ")


def _either(items: Sequence[str], last: str = " or ") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + last + items[-1]


def _shown(value: Any) -> str:
    return format_number(value) if isinstance(value, int | float) else f'"{value}"'
