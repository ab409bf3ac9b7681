"""The column checks' sentences, for `check-config`: each kind (``monitor.checks.kinds``) says what
it finds, and these pieces say it under its levels: "fails when Price of Stock!A1:H500 is not a number
or is below 0 in any row". A check of ``severity = "warn"`` says "warns" where it would fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .conditions import format_number
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


def levels_sentence(check: Any, subject: str) -> str:
    """Each of the check's levels (fail first) as "<verb> when <subject> in <rate>", the rate's rows
    those of its row filter when it has one: "in any row where Status = 'active'"."""
    where = getattr(check, "where", None)
    rows = f" where {where}" if where is not None else ""
    parts = []
    for status, rate in check.levels:
        verb = "warns" if status == "warn" or getattr(check, "severity", "fail") == "warn" else "fails"
        parts.append(f"{verb} when {subject} in {rate_words(rate)}{rows}")
    return "; ".join(parts)


def either(items: Sequence[str], last: str = " or ") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + last + items[-1]
