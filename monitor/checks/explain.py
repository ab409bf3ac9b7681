"""A check in one sentence, from its parsed conditions: "fails when Stock!F2:F has a value below 0".

Each check model's ``explain()`` builds its sentence from these pieces (each kind's own words are in
its module, ``monitor.checks.kinds``); `check-config` prints them and docs/configuration.md shows them
beside each example. A check of ``severity = "warn"`` says "warns" where it would fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .conditions import Condition, format_number

_WORDS = {"<": "is below", "<=": "is at most", ">": "is above", ">=": "is at least", "==": "is",
          "!=": "is not"}


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


def condition_text(check: Any) -> str:
    """The check's conditions in short, for a table's column: "fail p95 > 100; warn p95 > 50" (each
    kind's ``conditions()``), and what a severity of "warn" means."""
    text = check.conditions()
    return text + " (severity warn: never fails)" if check.severity == "warn" else text
