"""``invalid``: counts the rows whose ``column`` breaks a rule (a list of valid values, a regex the
whole value matches, a format, min/max for numbers, min_length/max_length in characters), against the
check's levels. Only values that are not missing are judged, nor a formula's error code
(formula_errors tells those)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from monitor.core.invalid_value import InvalidValue

from .. import column_explain
from ..cells import FORMULA_ERRORS, Cell, is_number
from ..column_evaluate import SHOWN, column_not_found, columns_in_rows, is_missing, judged, table_of
from ..column_models import ColumnCheck
from ..columns import ColumnError
from ..conditions import format_number
from ..formats import FORMATS
from ..kind import Kind
from ..result import MAX_CELLS, CheckResult


class InvalidCheck(ColumnCheck):
    """Values that break a rule: a list of valid values, a regex the whole value matches, a format,
    min/max (numbers), min_length/max_length (characters). Missing values are not judged here."""

    kind: Literal["invalid"] = "invalid"
    column: str
    valid_values: tuple[str | int | float, ...] = ()
    regex: str | None = None
    format: str | None = None
    min: int | float | None = None
    max: int | float | None = None
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=1)

    def explain(self) -> str:
        rules = _rules_words(self)
        return column_explain.levels_sentence(self, f"{self.column} of {self.range} {rules}")

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise InvalidValue(f"regex {value!r} does not compile: {exc}",
                                   "write a Python regular expression the whole value must match, "
                                   r'e.g. regex = "SKU-\\d{4}" (in TOML, double the backslashes)'
                                   ) from None
        return value

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is not None and value not in FORMATS:
            close = difflib.get_close_matches(str(value), FORMATS, n=1)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise InvalidValue(f"unknown format {value!r}",
                               f"{hint}write one of: {', '.join(FORMATS)}")
        return value

    @model_validator(mode="after")
    def _some_rule(self) -> InvalidCheck:
        self._check_column(self.column, "column")
        rules = (self.valid_values, self.regex, self.format, self.min, self.max, self.min_length,
                 self.max_length)
        if not any(rule not in (None, ()) for rule in rules):
            raise InvalidValue("invalid needs a rule", 'add valid_values = [...], regex = "...", '
                               'format = "email", min/max or min_length/max_length')
        for low, high in (("min", "max"), ("min_length", "max_length")):
            if getattr(self, low) is not None and getattr(self, high) is not None \
                    and getattr(self, low) > getattr(self, high):
                raise InvalidValue(f"{low} ({getattr(self, low)}) is greater than {high} "
                                   f"({getattr(self, high)})", "swap them")
        return self


def _rules_words(check: InvalidCheck) -> str:
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
    return column_explain.either(rules)


def _shown(value: Any) -> str:
    return format_number(value) if isinstance(value, int | float) else f'"{value}"'


def judge(check: InvalidCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    table = table_of(check, value_range)
    try:
        (column,) = columns_in_rows(check, table, (check.column,))
    except ColumnError as error:
        return column_not_found(check, error)
    rules = _rules(check)
    texts = check.missing_texts
    offenders: list[Cell] = []
    count = 0
    shown: list[str] = []
    for index, value in enumerate(column.values):
        if value is None or value.__class__ is str and (is_missing(value, texts) or _shows_error(value)):
            continue
        for test, reason in rules:
            if not test(value):
                count += 1
                if len(offenders) < MAX_CELLS:
                    offenders.append(column.cell(index))
                if len(shown) < SHOWN:
                    shown.append(f"{offenders[-1].ref} {_show(value)} ({reason})")
                break
    return judged(check, count, len(column.rows), f"{column.label} invalid", offenders, shown)


def _shows_error(text: str) -> bool:
    # A cell showing #N/A or #REF! is formula_errors' finding (and the import check's): judged here
    # too, it would be told twice, as a value breaking every rule.
    return "#" in text and text.strip() in FORMULA_ERRORS


Rule = tuple[Callable[[Any], bool], str]


def _numeric(value: Any) -> bool:
    # is_number, spelled for the loop over every value: bools are ints but not quantities.
    return (value.__class__ is int or value.__class__ is float) or (
        isinstance(value, int | float) and not isinstance(value, bool))


def _rules(check: InvalidCheck) -> list[Rule]:
    """Each rule as (test, what a value breaking it is), in the order findings explain them."""
    rules: list[Rule] = []
    if check.valid_values:
        allowed = frozenset(_key_text(value) for value in check.valid_values)
        # Most values are written exactly as listed (5, "active"): a set test, before the spelling.
        written = frozenset(check.valid_values)
        rules.append((lambda v: v in written or _key_text(v) in allowed, "not a valid value"))
    if check.format == "number":
        rules.append((_numeric, "not a number"))
    elif check.format is not None:
        test, noun = FORMATS[check.format]
        rules.append((test, f"not {noun}"))
    if check.regex is not None:
        pattern = re.compile(check.regex)
        rules.append((lambda v: pattern.fullmatch(_key_text(v)) is not None, "does not match regex"))
    if check.min is not None or check.max is not None:
        rules.append((_numeric, "not a number"))
    if check.min is not None:
        low = check.min
        rules.append((lambda v: v >= low, f"below min {format_number(low)}"))
    if check.max is not None:
        high = check.max
        rules.append((lambda v: v <= high, f"above max {format_number(high)}"))
    if check.min_length is not None:
        shortest = check.min_length
        rules.append((lambda v: len(_key_text(v)) >= shortest, f"shorter than {shortest}"))
    if check.max_length is not None:
        longest = check.max_length
        rules.append((lambda v: len(_key_text(v)) <= longest, f"longer than {longest}"))
    return rules


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else format_number(value) if is_number(value) else str(value)
    return text if len(text) <= 30 else text[:27] + "..."


def _key_text(value: Any) -> str:
    """How keys compare: numbers as a spreadsheet shows them (5 and 5.0 are one), text trimmed."""
    if is_number(value):
        return format_number(value)
    return "" if value is None else " ".join(str(value).split())


KIND = Kind(InvalidCheck, judge)
