"""Field types of the check models: an A1 range that names a tab, a condition, an age condition.

Each is an annotated type whose validator turns what an admin wrote into the value evaluation uses,
or raises ``InvalidValue`` with a problem and a fix that the config shows at the key's file:line.
Already-parsed values (a ``Condition``) pass through, so models can also be built from Python.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import PlainSerializer, PlainValidator

from monitor.core.a1 import A1Error, parse_a1, parse_named
from monitor.core.durations import DURATION_FORMS, format_duration, parse_duration
from monitor.core.invalid_value import InvalidValue

from .conditions import CONDITION_FORMS, Condition, parse_age_condition, parse_condition
from .where import WHERE_FORMS, RowFilter, parse_where

_AGE_OPS = (">", ">=")  # an age condition means "older than"; younger-than would never alert on staleness


def _condition(value: object) -> Condition:
    if isinstance(value, Condition):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise InvalidValue(f"{value!r} is a number, not a condition",
                           f'write a comparison as a string, e.g. "< {value}" ({CONDITION_FORMS})')
    try:
        return parse_condition(value)  # type: ignore[arg-type]
    except ValueError:
        raise InvalidValue(f"bad condition {value!r}", f"write {CONDITION_FORMS}") from None


def _age_condition(value: object) -> Condition:
    if isinstance(value, Condition):
        return value
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text[:1].isdigit():
        text = f"> {text}"  # a bare age means "older than"
    try:
        condition = parse_age_condition(text)  # type: ignore[arg-type]
    except ValueError:
        condition = None
    if condition is None or condition.op not in _AGE_OPS or condition.value <= 0:
        raise InvalidValue(f"bad age condition {value!r}",
                           'write "> AGE" or ">= AGE" (older than AGE), with AGE like "90s", "15m", '
                           '"2h", "1d" or "1h30m", e.g. "> 2h"')
    return condition


def _duration(value: object) -> timedelta:
    if isinstance(value, timedelta):
        return value
    try:
        return parse_duration(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidValue(f"bad duration {value!r}", f"write {DURATION_FORMS}, e.g. \"24h\"") from None


def _refuse_unquoted_bang(text: str) -> None:
    """"Stock!!A1" reads as the tab "Stock!" only by guessing which "!" ends the tab name; in A1
    notation a tab name holding "!" is quoted ('Stock!'!A1), so an unquoted one is refused rather
    than guessed (Google would read the range some other way, or not at all)."""
    if text.startswith("'") or text.count("!") < 2:
        return
    sheet, _, cells = text.rpartition("!")
    raise InvalidValue(f"range {text!r} has more than one \"!\": a tab name holding \"!\" must be quoted",
                       f"quote the tab name: \"{_quote_tab(sheet)}!{cells}\" (a ' inside it is written '')")


def _quote_tab(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


def _a1_with_tab(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidValue(f"expected an A1 range string, got {value!r}",
                           'write a range that names a tab, e.g. "Stock!A2:A"')
    text = value.strip()
    _refuse_unquoted_bang(text)
    try:
        parsed = parse_a1(text)
    except A1Error:
        # A named range on its tab ("Stock!Quantities") reads like cells to Google, which resolves
        # it; a bare name ("Quantities") already parses, as the tab it may also be.
        if parse_named(text) is not None:
            return text
        raise InvalidValue(f"malformed A1 range {value!r}",
                           'write TAB!CELLS, e.g. "Stock!A2:A", "Stock!A1:H500", "\'My tab\'!B:B", '
                           'or a named range, e.g. "Stock!Quantities"') from None
    if not parsed.sheet:
        raise InvalidValue(f"range {value!r} does not name a tab",
                           f'prefix the tab name: "TAB!{text}", e.g. "Stock!{text}" (tabs get renamed '
                           "and reordered, so the first tab is never assumed)")
    return text


def _where(value: object) -> RowFilter:
    if isinstance(value, RowFilter):
        return value
    if not isinstance(value, str):
        raise InvalidValue(f"where must be a string, got {value!r}", f"write {WHERE_FORMS}")
    try:
        return parse_where(value)
    except ValueError as error:
        raise InvalidValue(f"bad filter {value!r}: {error}", f"write {WHERE_FORMS}") from None


def _owner(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 64:
        raise InvalidValue(f"owner must be a name or a Telegram @username of at most 64 characters, "
                           f"got {value!r}", 'write owner = "@olga" (or a name: owner = "Olga P.")')
    return value.strip()


ConditionField = Annotated[
    Condition, PlainValidator(_condition), PlainSerializer(str, return_type=str)
]
AgeConditionField = Annotated[
    Condition, PlainValidator(_age_condition), PlainSerializer(str, return_type=str)
]
DurationField = Annotated[
    timedelta, PlainValidator(_duration), PlainSerializer(format_duration, return_type=str)
]
A1Text = Annotated[str, PlainValidator(_a1_with_tab)]
WhereField = Annotated[RowFilter, PlainValidator(_where), PlainSerializer(str, return_type=str)]
OwnerText = Annotated[str, PlainValidator(_owner)]
