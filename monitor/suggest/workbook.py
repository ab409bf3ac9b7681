"""What one read of a whole spreadsheet gives: its title, time zone and every tab's values.

Values are as the values API renders them unformatted (numbers, text, booleans, an error cell as its
code, ``""`` for a blank), except that a number the spreadsheet shows as a date or a time is a
``Dated``: the values alone cannot tell a date serial from a quantity, and a freshness check must
know which columns hold dates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Dated(float):
    """A date serial (days since 1899-12-30, in the spreadsheet's time zone) shown as a date."""

    __slots__ = ()


@dataclass(frozen=True)
class TabValues:
    """One tab: its title and its rows from A1 (a row's trailing blanks left out, as Google does)."""

    title: str
    rows: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class Workbook:
    id: str
    title: str
    time_zone: str  # as Google names it (properties.timeZone)
    tabs: tuple[TabValues, ...]
