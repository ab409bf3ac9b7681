"""Comparison conditions ("< 5", ">= 0") and age conditions ("> 2h") as small pure values.

These are the parsed forms of the strings admins write in a check's ``warn`` and ``fail``; the check
models (``models``) parse them when a check is built, so evaluation only ever sees ``Condition``
objects. Both parsers raise ``ValueError`` with a message that shows the accepted forms. Ages use the
project's one duration grammar, ``monitor.core.durations``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from monitor.core.durations import DURATION_FORMS, parse_duration

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_OP_ALIASES = {"=": "==", "≤": "<=", "≥": ">=", "<>": "!="}

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_CONDITION_RE = re.compile(rf"^\s*(<=|>=|==|!=|<>|<|>|=|≤|≥)\s*({_NUMBER})\s*$")

_AGE_CONDITION_RE = re.compile(r"^\s*(<=|>=|==|!=|<>|<|>|=|≤|≥)\s*(.+?)\s*$")

CONDITION_FORMS = 'an operator and a number, e.g. "< 5", ">= 0", "== 1" (operators < <= > >= == !=)'


@dataclass(frozen=True)
class Condition:
    """``x <op> value``; ``label`` is how the condition is shown to people (e.g. "> 2h")."""

    op: str
    value: float
    label: str = ""

    def __post_init__(self) -> None:
        if self.op not in _OPERATORS:
            raise ValueError(f"unknown operator {self.op!r}: use one of {' '.join(_OPERATORS)}")
        if not self.label:
            object.__setattr__(self, "label", f"{self.op} {format_number(self.value)}")

    def holds(self, x: float) -> bool:
        return _OPERATORS[self.op](x, self.value)

    def __str__(self) -> str:
        return self.label


def parse_condition(text: str) -> Condition:
    """Parse "< 5", ">=0", "== 1.5" into a Condition; raises ValueError naming the accepted forms."""
    match = _CONDITION_RE.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"bad condition {text!r}: expected {CONDITION_FORMS}")
    op = _OP_ALIASES.get(match.group(1), match.group(1))
    value = float(match.group(2))
    return Condition(op, value, f"{op} {format_number(value)}")


def parse_age_condition(text: str) -> Condition:
    """Parse an age condition like "> 2h" into a Condition over seconds, labelled as written."""
    match = _AGE_CONDITION_RE.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"bad age condition {text!r}: expected an operator and {DURATION_FORMS}")
    op = _OP_ALIASES.get(match.group(1), match.group(1))
    age = parse_duration(match.group(2))
    return Condition(op, age.total_seconds(), f"{op} {match.group(2).replace(' ', '')}")


def format_number(x: float) -> str:
    """Show numbers the way a spreadsheet user writes them: 3, 2.5, -0.125 (no trailing .0)."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return format(x, ".10g") if isinstance(x, float) else str(x)
