"""A table read in one ValueRange, its columns found by header text or by letter.

Every column-aware check reads its whole table (``range = "Stock!A1:Z"``) in the spreadsheet's one
batchGet, names the sheet row that holds the headers (``header_row = 1``) and refers to columns by
their header text (``column = "Qty"``), so inserting, moving or deleting other columns breaks
nothing. A table without a header row refers to columns by letter (``column = "F"``) only: with a
header row a short header such as "ID" must never fall back to column ID when it disappears.

Usage::

    table = Table.read(value_range, header_row=1)
    qty = table.column("Qty")         # Column: its letter, header cell, one cell per data row
    for cell in qty.cells: ...        # cell.value is None where the row has no value in that column

``column`` raises ``ColumnError`` when the header is not there (or is there twice); its message is
the finding: "column 'Qty' not found in the header row (Stock!1:1); found: SKU, Name, Price".

Data rows are the sheet rows below the header row (all rows of the range without one) that hold at
least one non-empty cell of the table, like ``row_count`` counts them: Google trims trailing empty
rows and cells, and an interior empty row is a gap in the data, not a record.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any

from monitor.core.a1 import A1Range, column_index, column_letters, parse_a1

from .cells import LOADING_VALUES, Cell, ValuesStillLoading, is_empty

_LETTERS = re.compile(r"^[A-Z]{1,3}$")
_HEADERS_SHOWN = 12  # a "found: ..." list names this many headers, then "and N more"


def is_column_letter(text: str) -> bool:
    """"F", "AA": what a column reference is when a table has no header row. Upper case only, as
    the grid shows them: "Qty" or "id" is a header's text, never column QTY or ID."""
    return bool(_LETTERS.match(text.strip()))


def normalized(header: Any) -> str:
    """How headers compare: text trimmed, inner runs of whitespace as one space, case folded, so
    "Qty ", "qty" and "QTY" name one column (people retype headers with such differences)."""
    return " ".join(str(header).split()).casefold()


class ColumnError(LookupError):
    """A column the check names is not in the table (or is ambiguous): ``message`` is the finding,
    ``where`` the header row ("Stock!1:1") or the table it was looked for in (None: a table whose
    tab Google did not name)."""

    def __init__(self, message: str, where: A1Range | None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the table: ``name`` as the check wrote it, ``header`` the header cell found
    (None when named by letter), ``col`` its 1-based sheet column; ``rows`` the table's data rows
    and ``values`` this column's value in each (None where Google trimmed it)."""

    name: str
    col: int
    header: Cell | None
    sheet: str | None
    rows: tuple[int, ...]
    values: tuple[Any, ...]

    @property
    def cells(self) -> tuple[Cell, ...]:
        """One cell per data row. Built on each call: a check that wants a few refs out of
        thousands of rows walks ``rows`` and ``values`` and asks ``cell`` for those."""
        return tuple(Cell(self.sheet, row, self.col, value)
                     for row, value in zip(self.rows, self.values, strict=True))

    def only(self, rows: set[int]) -> Column:
        """The column in the data rows ``rows`` alone (those a row filter passes)."""
        kept = [index for index, row in enumerate(self.rows) if row in rows]
        return replace(self, rows=tuple(self.rows[index] for index in kept),
                       values=tuple(self.values[index] for index in kept))

    def cell(self, index: int) -> Cell:
        """The cell of the ``index``-th data row."""
        return Cell(self.sheet, self.rows[index], self.col, self.values[index])

    @property
    def letter(self) -> str:
        return column_letters(self.col)

    @property
    def label(self) -> str:
        """How findings name the column: its header text, or "column F"."""
        return str(self.header.value).strip() if self.header is not None else f"column {self.letter}"


class Table:
    """A ValueRange seen as a table: rows of the sheet, an optional header row, columns by name."""

    __slots__ = ("sheet", "header_row", "data_rows", "_rows", "_start_row", "_start_col",
                 "_end_col", "_headers", "_columns")

    def __init__(self, sheet: str | None, rows: dict[int, list[Any]], start_row: int,
                 start_col: int, end_col: int | None, header_row: int | None) -> None:
        self.sheet = sheet
        self.header_row = header_row
        self._rows = rows
        self._start_row = start_row
        self._start_col = start_col
        self._end_col = end_col
        first_data = header_row + 1 if header_row is not None else start_row
        self.data_rows: tuple[int, ...] = tuple(
            row for row in sorted(rows) if row >= first_data and _holds_a_value(rows[row])
        )
        self._headers: tuple[Cell, ...] | None = None
        self._columns: dict[int, tuple[Any, ...]] = {}  # values by sheet column, made once for all checks

    @classmethod
    def read(cls, value_range: Mapping[str, Any] | None, header_row: int | None = None,
             range_text: str = "") -> Table:
        """The table Google returned; ``range_text`` (the range as configured) names it when Google
        returned nothing at all. Raises ValuesStillLoading if a cell shows "Loading...", like
        ``cells_of``."""
        echoed = str((value_range or {}).get("range") or range_text)
        parsed = parse_a1(echoed)
        start_row, start_col = parsed.start_row or 1, parsed.start_col or 1
        values = (value_range or {}).get("values") or []
        if str((value_range or {}).get("majorDimension", "ROWS")).upper() == "COLUMNS":
            values = _transposed(values)
        rows: dict[int, list[Any]] = dict(enumerate((line or [] for line in values), start_row))
        # Google shows the placeholder exactly as "Loading..."; one set test over every value read
        # keeps the look in C, and only a table that shows it is walked to name the first cell.
        if not LOADING_VALUES.isdisjoint(chain.from_iterable(rows.values())):
            row, line = next((row, line) for row, line in rows.items() if not LOADING_VALUES.isdisjoint(line))
            index = next(i for i, value in enumerate(line) if value in LOADING_VALUES)
            raise ValuesStillLoading(Cell(parsed.sheet, row, start_col + index, line[index]).ref)
        return cls(parsed.sheet, rows, start_row, start_col, parsed.end_col, header_row)

    @property
    def header_at(self) -> A1Range | None:
        """Where the headers are read: the header row (the table's tab when it has no header row;
        None when Google named no tab)."""
        if self.header_row is None:
            return A1Range(self.sheet) if self.sheet is not None else None
        return A1Range(self.sheet, self.header_row, None, self.header_row, None)

    @property
    def header_ref(self) -> str:
        """"Stock!1:1": :attr:`header_at` as findings' messages say it."""
        where = self.header_at
        return str(where) if where is not None else "the range"

    @property
    def headers(self) -> tuple[Cell, ...]:
        """The non-empty cells of the header row, left to right (none without a header row)."""
        if self._headers is None:
            line = self._rows.get(self.header_row, []) if self.header_row is not None else []
            self._headers = tuple(
                Cell(self.sheet, self.header_row, self._start_col + index, value)
                for index, value in enumerate(line) if not is_empty(value)
            )
        return self._headers

    def value(self, row: int, col: int) -> Any:
        """The value at a sheet row and column, None where Google trimmed it or it lies outside."""
        line = self._rows.get(row)
        index = col - self._start_col
        return line[index] if line is not None and 0 <= index < len(line) else None

    def column(self, name: str) -> Column:
        """The column ``name`` refers to: header text with a header row, else a column letter.
        Raises ColumnError with the finding's words when it is not there."""
        col, header = self._locate(name)
        values = self._columns.get(col)
        if values is None:
            index, rows = col - self._start_col, self._rows
            lines = [rows[row] for row in self.data_rows]
            values = self._columns[col] = tuple([line[index] if index < len(line) else None
                                                 for line in lines])
        return Column(name, col, header, self.sheet, self.data_rows, values)

    def _locate(self, name: str) -> tuple[int, Cell | None]:
        if self.header_row is None:
            if not is_column_letter(name):
                raise ColumnError(f"column {name!r} is not a column letter, and without a header row "
                                  "columns are named by letter", self.header_at)
            col = column_index(name.strip())
            if col < self._start_col or (self._end_col is not None and col > self._end_col):
                raise ColumnError(f"column {name.strip()} is outside the range read",
                                  self.header_at)
            return col, None
        matches = [cell for cell in self.headers if str(cell.value).strip() == name.strip()]
        if not matches:
            wanted = normalized(name)
            matches = [cell for cell in self.headers if normalized(cell.value) == wanted]
        if len(matches) > 1:
            where = ", ".join(cell.at.local for cell in matches)
            raise ColumnError(f"column {name!r} appears {len(matches)} times in {self.header_ref} "
                              f"({where})", self.header_at)
        if not matches:
            raise ColumnError(self._not_found(name), self.header_at)
        return matches[0].col, matches[0]

    def _not_found(self, name: str) -> str:
        found = [str(cell.value).strip() for cell in self.headers]
        if not found:
            return f"column {name!r} not found: {self.header_ref} is empty"
        shown = ", ".join(found[:_HEADERS_SHOWN])
        if len(found) > _HEADERS_SHOWN:
            shown += f" and {len(found) - _HEADERS_SHOWN} more"
        message = f"column {name!r} not found in the header row ({self.header_ref}); found: {shown}"
        close = difflib.get_close_matches(name, found, n=1, cutoff=0.75)
        return message + (f" (renamed to {close[0]!r}?)" if close else "")


def _holds_a_value(line: list[Any]) -> bool:
    # Nearly always decided by the first cell; a loop, not any() over a generator: it runs per row.
    for value in line:  # noqa: SIM110
        if value is not None and (value.__class__ is not str or value.strip()):
            return True
    return False


def _transposed(columns: list[list[Any]]) -> list[list[Any]]:
    """COLUMNS-major values as rows; the ragged ends Google trims become None, then trimmed again."""
    height = max((len(column or ()) for column in columns), default=0)
    rows = [[(column[i] if column and i < len(column) else None) for column in columns]
            for i in range(height)]
    for row in rows:
        while row and row[-1] is None:
            row.pop()
    return rows
