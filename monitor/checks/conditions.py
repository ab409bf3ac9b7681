"""Comparison conditions ("< 5", ">= 0") and durations ("90s", "2h", "1d") as small pure values.

These are the parsed forms of the strings admins write in the config. The config loader can call
``parse_condition``, ``parse_age_condition`` and ``parse_duration`` at load time so that mistakes are
reported with their file position; check evaluation also accepts the raw strings and parses them here.
Both parsers raise ``ValueError`` with a message that shows the accepted forms.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

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

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION_PART_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_DURATION_RE = re.compile(r"^\s*(?:\d+(?:\.\d+)?\s*[smhdw]\s*)+$")
_AGE_CONDITION_RE = re.compile(r"^\s*(<=|>=|==|!=|<>|<|>|=|≤|≥)\s*(.+?)\s*$")

CONDITION_FORMS = 'an operator and a number, e.g. "< 5", ">= 0", "== 1" (operators < <= > >= == !=)'
DURATION_FORMS = 'a number and a unit s, m, h, d or w, e.g. "90s", "15m", "2h", "1d", "1h30m"'


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


def parse_duration(text: str) -> timedelta:
    """Parse "90s", "15m", "2h", "1d", "1w" or compounds like "1h30m" into a timedelta."""
    if not isinstance(text, str) or _DURATION_RE.match(text) is None:
        raise ValueError(f"bad duration {text!r}: expected {DURATION_FORMS}")
    seconds = sum(
        float(amount) * _UNIT_SECONDS[unit] for amount, unit in _DURATION_PART_RE.findall(text)
    )
    return timedelta(seconds=seconds)


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
