"""Rate conditions: a count of rows ("> 0") or a share of them ("> 5%"), as the column checks
(missing, duplicates, invalid) write their warn and fail levels.

A percentage is written after the number, inside the condition's string: a share of the table's
data rows. A bare number or a bare "5%" is refused with the form to write, at load time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import PlainSerializer, PlainValidator

from monitor.core.invalid_value import InvalidValue

from .conditions import Condition, format_number, parse_condition

RATE_FORMS = ('a comparison with a count of rows, e.g. "> 0", or with a share of them, e.g. "> 5%" '
              "(operators < <= > >= == !=)")


@dataclass(frozen=True)
class Rate:
    """``count <op> value`` or, with ``percent``, ``100 * count / total <op> value``."""

    condition: Condition
    percent: bool = False

    def holds(self, count: int, total: int) -> bool:
        if not self.percent:
            return self.condition.holds(count)
        # No rows: no share of them is missing or wrong, and 0 % is the honest measure.
        return self.condition.holds(100 * count / total if total else 0.0)

    def __str__(self) -> str:
        return f"{self.condition}%" if self.percent else str(self.condition)


def share(count: int, total: int) -> str:
    """"1.5%": how a finding shows a count's share of the rows (one decimal, none when whole)."""
    value = round(100 * count / total, 1) if total else 0.0
    return f"{format_number(value)}%"


def parse_rate(value: object) -> Rate:
    """What an admin wrote as a warn or fail level; InvalidValue with the accepted forms."""
    if isinstance(value, Rate):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise InvalidValue(f"{value!r} is a number, not a condition",
                           f'write a comparison as a string, e.g. "> {value}" or "> {value}%"')
    if not isinstance(value, str):
        raise InvalidValue(f"bad condition {value!r}", f"write {RATE_FORMS}")
    text = value.strip()
    percent = text.endswith("%")
    try:
        condition = parse_condition(text.removesuffix("%"))
    except ValueError:
        hint = f' (write "> {text}")' if percent and text[:1].isdigit() else ""
        raise InvalidValue(f"bad condition {value!r}{hint}", f"write {RATE_FORMS}") from None
    if percent and not 0 <= condition.value <= 100:
        raise InvalidValue(f"{value!r} compares with {format_number(condition.value)}%, outside 0% to 100%",
                           'write a share of the rows between 0% and 100%, e.g. "> 5%"')
    if not percent and (condition.value < 0 or not float(condition.value).is_integer()):
        raise InvalidValue(f"{value!r} compares a count of rows with {format_number(condition.value)}",
                           'write a whole number of rows, e.g. "> 0", or a share, e.g. "> 2.5%"')
    return Rate(condition, percent)


RateField = Annotated[Rate, PlainValidator(parse_rate), PlainSerializer(str, return_type=str)]
