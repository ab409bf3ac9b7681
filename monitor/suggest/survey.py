"""What one workbook shows, kept small: per tab its used width, its header row, and per column of
its table the kind of values, their bounds, the newest date's age and whether they repeat.

A tab's header row is the first of its first few rows with a value that is at least two distinct
texts side by side with at least two rows with a value below it (a tab of notes, "Manager |
A. Ivanova" over one more row, is no table). The table's rows are the rows below it holding a
value, as the column checks count them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo
from typing import Any

from monitor.checks.cells import FORMULA_ERRORS, is_number
from monitor.checks.dates import from_serial
from monitor.core.a1 import cell_ref

from .workbook import Dated, TabValues, Workbook

_ERRORS = frozenset(FORMULA_ERRORS)
# Texts people type for "no value", which a missing check counts as blank (compared ignoring case).
MISSING_WORDS = ("-", "n/a")
_LEAST_TABLE_ROWS = 2
_HEADER_SEARCH = 5  # rows with a value a header row may come after (a title, a date, a note)
_ERRORS_KEPT = 3  # cells named in a comment


@dataclass(frozen=True)
class ColumnSurvey:
    """One column of a table, over its rows."""

    index: int  # 0-based, A = 0
    header: str
    rows: int  # the table's rows
    blanks: int  # rows without a value in this column (the most of any spreadsheet, when merged)
    kinds: frozenset[str]  # of its values: "number", "date", "text", "bool", "error"
    low: float | None = None  # its numbers' bounds
    high: float | None = None
    integral: bool = False  # every number a whole number
    # The newest date's age (the largest over spreadsheets, when merged); negative: it is ahead of now.
    oldest_newest: timedelta | None = None
    unique: bool = False  # no value twice (text or whole numbers, at least two)
    missing_words: bool = False  # holds "-" or "n/a"
    # A key's values as a cross-sheet check compares them (as written: 42 and "42" are one), when
    # unique; merged, every spreadsheet's together.
    keys: frozenset[str] | None = None

    @property
    def complete(self) -> bool:
        return self.rows > 0 and self.blanks == 0

    def merged(self, other: ColumnSurvey) -> ColumnSurvey:
        """What both spreadsheets' columns show together: the wider bounds, the older newest date."""
        return replace(
            self, rows=min(self.rows, other.rows), blanks=max(self.blanks, other.blanks),
            kinds=self.kinds | other.kinds,
            low=_either(min, self.low, other.low), high=_either(max, self.high, other.high),
            integral=self.integral and other.integral,
            oldest_newest=_either(max, self.oldest_newest, other.oldest_newest),
            unique=self.unique and other.unique, missing_words=self.missing_words or other.missing_words,
            keys=self.keys | other.keys if self.keys is not None and other.keys is not None else None)


@dataclass(frozen=True)
class TabSurvey:
    title: str
    width: int  # columns used, from A
    rows: int  # rows used, from 1
    header_row: int | None = None  # 1-based; None: no table
    first_column: int = 0  # the header's first column, 0-based
    columns: tuple[ColumnSurvey, ...] = ()
    errors: int = 0  # cells showing a formula error
    error_cells: tuple[str, ...] = ()  # the first few, as A1 references

    @property
    def headers(self) -> tuple[str, ...]:
        return tuple(column.header for column in self.columns)

    @property
    def table_rows(self) -> int:
        return self.columns[0].rows if self.columns else 0

    def merged(self, other: TabSurvey) -> TabSurvey:
        columns = tuple(a.merged(b) for a, b in zip(self.columns, other.columns, strict=True))
        return replace(self, width=max(self.width, other.width), rows=max(self.rows, other.rows),
                       columns=columns, errors=self.errors + other.errors,
                       error_cells=(self.error_cells + other.error_cells)[:_ERRORS_KEPT])


@dataclass(frozen=True)
class SheetSurvey:
    id: str
    title: str
    tabs: tuple[TabSurvey, ...]

    @property
    def template(self) -> tuple:
        """What spreadsheets of one template share: their tabs' titles and header rows."""
        return tuple((tab.title, tab.header_row, tab.headers) for tab in self.tabs)


def survey(workbook: Workbook, now: datetime, zone: tzinfo) -> SheetSurvey:
    """What ``workbook`` shows at ``now``, its dates read in ``zone`` (the spreadsheet's own)."""
    return SheetSurvey(workbook.id, workbook.title, tuple(_tab(tab, now, zone) for tab in workbook.tabs))


def templates(surveys: Iterable[SheetSurvey]) -> list[list[SheetSurvey]]:
    """The surveys grouped by template, groups and their members in the order first seen."""
    groups: dict[tuple, list[SheetSurvey]] = {}
    for one in surveys:
        groups.setdefault(one.template, []).append(one)
    return list(groups.values())


def _tab(tab: TabValues, now: datetime, zone: tzinfo) -> TabSurvey:
    rows = tab.rows
    width = max((len(row) for row in rows), default=0)
    errors = [cell_ref(r + 1, c + 1) for r, row in enumerate(rows) for c, value in enumerate(row)
              if isinstance(value, str) and value in _ERRORS]
    found = TabSurvey(tab.title, width, len(rows), errors=len(errors),
                      error_cells=tuple(errors[:_ERRORS_KEPT]))
    header = _header(rows)
    if header is None:
        return found
    position, first, texts = header
    body = [row for row in rows[position + 1:] if any(not _blank(value) for value in row)]
    columns = tuple(_column(first + offset, text, [_at(row, first + offset) for row in body], now, zone)
                    for offset, text in enumerate(texts))
    return replace(found, header_row=position + 1, first_column=first, columns=columns)


def _header(rows: Sequence[Sequence[Any]]) -> tuple[int, int, tuple[str, ...]] | None:
    """(row index, first column, its texts) of the header row, or None: the first of the tab's first
    few rows with a value that is at least two distinct texts side by side with at least two rows
    with a value below it (rows above it are a title, a date, a note)."""
    filled = [position for position, row in enumerate(rows) if any(not _blank(v) for v in row)]
    for rank, position in enumerate(filled[:_HEADER_SEARCH]):
        row = rows[position]
        used = [c for c, value in enumerate(row) if not _blank(value)]
        first, last = used[0], used[-1]
        texts = tuple(row[first:last + 1])
        distinct = {text.strip().casefold() for text in texts if isinstance(text, str)}
        if (len(texts) >= 2 and len(distinct) == len(texts) and "" not in distinct
                and all(isinstance(t, str) and t not in _ERRORS for t in texts)
                and len(filled) - rank - 1 >= _LEAST_TABLE_ROWS):
            return position, first, tuple(t.strip() for t in texts)
    return None


def _column(index: int, header: str, values: list[Any], now: datetime, zone: tzinfo) -> ColumnSurvey:
    filled = [value for value in values if not _blank(value)]
    kinds = frozenset(_kind(value) for value in filled)
    numbers = [float(value) for value in filled if is_number(value) and not isinstance(value, Dated)]
    dates = [from_serial(value, zone) for value in filled if isinstance(value, Dated)]
    newest = max((moment for moment in dates if moment is not None), default=None)
    keys = [_key(value) for value in filled]
    unique = len(keys) >= 2 and None not in keys and len(set(keys)) == len(keys)
    return ColumnSurvey(
        index, header, len(values), len(values) - len(filled), kinds,
        low=min(numbers, default=None), high=max(numbers, default=None),
        integral=bool(numbers) and all(number.is_integer() for number in numbers),
        oldest_newest=None if newest is None else now - newest,
        unique=unique,
        missing_words=any(isinstance(v, str) and v.strip().casefold() in MISSING_WORDS for v in filled),
        keys=frozenset(str(key) for key in keys) if unique and len(filled) == len(values) else None)


def _kind(value: Any) -> str:
    if isinstance(value, Dated):
        return "date"
    if isinstance(value, bool):
        return "bool"
    if is_number(value):
        return "number"
    return "error" if value in _ERRORS else "text"


def _key(value: Any) -> Any:
    """A value as a key: text trimmed, a whole number as itself; None for what makes no key (a
    fraction, a date, a boolean, an error)."""
    kind = _kind(value)
    if kind == "text":
        return value.strip()
    if kind == "number" and float(value).is_integer():
        return int(value)
    return None


def _at(row: Sequence[Any], index: int) -> Any:
    return row[index] if index < len(row) else ""


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _either(pick, a, b):
    if a is None or b is None:
        return a if b is None else b
    return pick(a, b)
