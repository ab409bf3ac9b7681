"""A ValueRange as Google returns it, turned into cells that know their sheet reference.

Google's ValueRange: ``{"range": "Stock!A2:A500", "majorDimension": "ROWS", "values": [[...], ...]}``.
``values`` is absent for an empty range, trailing empty cells and rows are trimmed (rows may be
ragged), interior empty cells are ``""``. With ``majorDimension == "COLUMNS"`` each inner list is a
column. Positions are counted from the *echoed* range's start, which is where Google's first value
sits (Google clamps open ranges such as ``A:A`` to ``A1:A1000``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from monitor.core.a1 import CellRef, cell_ref, parse_a1, sheet_prefix

# What Google shows while IMPORTRANGE, GOOGLEFINANCE and friends are still computing (the API's
# ErrorType LOADING). Such a value says nothing about the data, so the whole read is retried later
# rather than judged. The "#LOADING" spellings are accepted defensively: no real data says that.
LOADING_VALUES = frozenset({"Loading...", "Loading…", "#LOADING", "#LOADING!"})
# What a cell shows when its formula fails (under UNFORMATTED_VALUE too): formula_errors' findings.
FORMULA_ERRORS = ("#REF!", "#N/A", "#DIV/0!", "#VALUE!", "#NAME?", "#NUM!", "#NULL!", "#ERROR!")


class ValuesStillLoading(Exception):
    """A cell still shows Google's "Loading..." placeholder: retry the read later; never a finding.
    ``cell`` is its A1 text: the exception's message is all anyone is told of it."""

    def __init__(self, cell: str) -> None:
        super().__init__(f"{cell} still shows Loading...; read it again later")
        self.cell = cell


# Not frozen: a frozen dataclass's __init__ costs three times as much, and a read yields thousands of
# cells per spreadsheet. Nothing keeps a Cell beyond the evaluation that made it.
@dataclass(slots=True)
class Cell:
    sheet: str | None  # the tab's title, as Google echoed the range (None: it named no tab)
    row: int  # 1-based sheet row
    col: int  # 1-based sheet column
    value: Any

    @property
    def prefix(self) -> str:
        """"Stock!", with the tab's title quoted the way Google echoes it."""
        return sheet_prefix(self.sheet)

    @property
    def at(self) -> CellRef:
        """Where it is, as a result keeps it. Made on demand: a check names a handful of cells out of
        thousands read."""
        return CellRef(self.sheet, self.row, self.col)

    @property
    def ref(self) -> str:
        """"Stock!B4": its A1 text, as a check's message says it."""
        return sheet_prefix(self.sheet) + cell_ref(self.row, self.col)


def is_empty(value: Any) -> bool:
    """Empty means no value, or text that is only whitespace (a cell that looks blank to people)."""
    return value is None or (isinstance(value, str) and not value.strip())


def is_number(value: Any) -> bool:
    # JSON booleans arrive as Python bools, which are ints: they are not quantities. The class tests
    # first: JSON's numbers are exactly int or float, and this runs for every value a check judges.
    kind = value.__class__
    return kind is float or kind is int or (kind is not bool and isinstance(value, int | float))


class Values:
    """The non-empty values of a range in reading order (row by row, left to right), the sheet row
    of each, and where its cells sit. Checks judge ``values``; a ``Cell`` (which knows its reference)
    is made only for a value a finding names (``cell``): a healthy spreadsheet's thousands of values
    never become objects."""

    __slots__ = ("sheet", "values", "rows", "_col", "_cols", "_numeric", "derived")

    def __init__(self, sheet: str | None, values: list[Any], rows: list[int], col: int,
                 cols: list[int] | None = None) -> None:
        self.sheet = sheet
        self.values = values
        self.rows = rows
        self._col = col  # the one column of a one-column range, the common case: no list per value
        self._cols = cols  # each value's column, for a range of several columns
        self._numeric: list[int] | None = None
        # What checks work out from these values, by what asked (a filter's clause: the rows it
        # holds in), for the next check that asks the same: filters repeat across a profile's checks.
        self.derived: dict[object, Any] = {}

    def __len__(self) -> int:
        return len(self.values)

    @property
    def prefix(self) -> str:
        return sheet_prefix(self.sheet)

    def cell(self, index: int) -> Cell:
        col = self._col if self._cols is None else self._cols[index]
        return Cell(self.sheet, self.rows[index], col, self.values[index])

    def cells(self, indexes: Iterable[int] | None = None) -> list[Cell]:
        """The cells of the values at ``indexes`` (all of them by default)."""
        return [self.cell(index) for index in (range(len(self.values)) if indexes is None else indexes)]

    @property
    def numeric(self) -> list[int]:
        """The indexes of the numeric values, in reading order (found once, shared by the checks)."""
        if self._numeric is None:
            # is_number's class tests inlined, and a text (most values that are not numbers) settled
            # by its class alone.
            self._numeric = [index for index, value in enumerate(self.values)
                             if (kind := value.__class__) is float or kind is int
                             or (kind is not str and is_number(value))]
        return self._numeric

    def replaced(self, values: list[Any]) -> Values:
        """Other ``values`` (as many, in the same order) in these values' cells."""
        return Values(self.sheet, values, self.rows, self._col, self._cols)

    def only(self, indexes: list[int]) -> Values:
        """The values at ``indexes`` (in order) alone."""
        values, rows = self.values, self.rows
        cols = None if self._cols is None else [self._cols[index] for index in indexes]
        return Values(self.sheet, [values[index] for index in indexes], [rows[index] for index in indexes],
                      self._col, cols)


class ReadRange(dict):
    """A ValueRange whose values are sorted out once for every check that reads it (``values_of``):
    a spreadsheet's checks often share a range, and a filter reads its columns once per check. A
    read's ranges are made ReadRanges once (``read_ranges``), and what the read's checks found is
    what its history keeps, without walking the values again."""

    __slots__ = ("found", "cells")

    def __init__(self, value_range: Mapping[str, Any], found: Values | None = None) -> None:
        super().__init__(value_range)
        self.found = found
        self.cells: list[Cell] | None = None


def read_ranges(value_ranges: Mapping[str, Mapping[str, Any] | None]) -> dict[str, ReadRange | None]:
    """Each range's ValueRange (by the range's text) as a ReadRange: the one form a read's values take
    for its checks, the look for codes an import shows while computing, and its history."""
    return {text: values if values is None or type(values) is ReadRange else ReadRange(values)
            for text, values in value_ranges.items()}


_NOTHING = Values(None, [], [], 1)  # every empty range's: what checks derive from no values is alike


def values_of(value_range: Mapping[str, Any] | None) -> Values:
    """The non-empty values of ``value_range``, where each sits (made once for a ``ReadRange``).
    Raises ValuesStillLoading if any cell shows the Loading... placeholder."""
    if type(value_range) is ReadRange:
        if value_range.found is None:
            value_range.found = _values(value_range)
        return value_range.found
    return _values(value_range)


def cells_of(
    value_range: Mapping[str, Any] | None, keep: Callable[[Any], object] | None = None
) -> list[Cell]:
    """Every non-empty cell of ``value_range`` in reading order (row by row, left to right).

    With ``keep``, only the values for which ``keep(value)`` is true become cells (a check that wants
    a few cells out of thousands need not pay for the rest). Raises ValuesStillLoading if any cell
    shows the Loading... placeholder, kept or not. A ``ReadRange``'s cells are made once and shared:
    callers never change the list. A check that names only a few of its cells asks ``values_of``.
    """
    if keep is not None:
        return _cells(value_range, keep)
    if type(value_range) is ReadRange:
        if value_range.cells is None:
            value_range.cells = values_of(value_range).cells()
        return value_range.cells
    return values_of(value_range).cells()


def coded_cells(value_range: Mapping[str, Any] | None, keep: Callable[[Any], object]) -> list[Cell]:
    """``cells_of(value_range, keep)`` for a ``keep`` that accepts only texts holding a "#" (every
    formula error's code does): a row is looked at closely only when one of its texts holds "#" or
    "Loading", so a whole tab costs little more than walking its values once. Raises
    ValuesStillLoading as ``cells_of`` does."""
    if not value_range or str(value_range.get("majorDimension", "ROWS")).upper() == "COLUMNS":
        return _cells(value_range, keep)
    lines = value_range.get("values") or []
    marked = []
    for offset, line in enumerate(lines):
        for value in line or ():
            # Every Loading... placeholder holds "Loading" or "#" (LOADING_VALUES).
            if isinstance(value, str) and ("#" in value or "Loading" in value):
                marked.append(offset)
                break
    if not marked:
        return []
    sheet, start_row, start_col = _origin(str(value_range.get("range", "")))
    cells = []
    for offset in marked:
        for index, value in enumerate(lines[offset]):
            if isinstance(value, str):
                stripped = value.strip()
                if stripped in LOADING_VALUES:
                    raise ValuesStillLoading(Cell(sheet, start_row + offset, start_col + index, value).ref)
                if stripped and keep(value):
                    cells.append(Cell(sheet, start_row + offset, start_col + index, value))
    return cells


def _values(value_range: Mapping[str, Any] | None) -> Values:
    if not value_range or not (lines := value_range.get("values")):
        return _NOTHING
    sheet, start_row, start_col = _origin(str(value_range.get("range", "")))
    if (max(map(len, filter(None, lines)), default=0) > 1
            or str(value_range.get("majorDimension", "ROWS")).upper() == "COLUMNS"):
        # Several columns (a header row, a table's formula_errors read elsewhere): few, through cells.
        cells = _cells(value_range, None)
        return Values(sheet, [c.value for c in cells], [c.row for c in cells], start_col,
                      [c.col for c in cells])
    # One column, nearly every range a check reads: no column per value, no inner loop.
    values: list[Any] = []
    rows: list[int] = []
    for offset, line in enumerate(lines):
        if not line:
            continue
        value = line[0]
        # is_empty() and the Loading... test, inlined: this loop runs for every value read.
        if isinstance(value, str):
            stripped = value.strip()
            if not stripped:
                continue
            if stripped in LOADING_VALUES:
                raise ValuesStillLoading(Cell(sheet, start_row + offset, start_col, value).ref)
        elif value is None:
            continue
        values.append(value)
        rows.append(start_row + offset)
    return Values(sheet, values, rows, start_col)


def _cells(value_range: Mapping[str, Any] | None, keep: Callable[[Any], object] | None) -> list[Cell]:
    if not value_range:
        return []
    values = value_range.get("values") or []
    if not values:
        return []
    sheet, start_row, start_col = _origin(str(value_range.get("range", "")))
    by_columns = str(value_range.get("majorDimension", "ROWS")).upper() == "COLUMNS"
    cells = []
    for outer, line in enumerate(values):
        for inner, value in enumerate(line or ()):
            if isinstance(value, str):
                stripped = value.strip()
                if not stripped:
                    continue
                if stripped in LOADING_VALUES:
                    row_offset, col_offset = (inner, outer) if by_columns else (outer, inner)
                    raise ValuesStillLoading(Cell(sheet, start_row + row_offset, start_col + col_offset,
                                                  value).ref)
            elif value is None:
                continue
            if keep is not None and not keep(value):
                continue
            row_offset, col_offset = (inner, outer) if by_columns else (outer, inner)
            cells.append(Cell(sheet, start_row + row_offset, start_col + col_offset, value))
    if by_columns:
        cells.sort(key=lambda c: (c.row, c.col))
    return cells


def only_rows(value_range: Mapping[str, Any] | None, rows: set[int]) -> ReadRange:
    """``value_range`` seen through a row filter: its values in the sheet rows ``rows`` only."""
    found = values_of(value_range)
    return ReadRange(value_range or {}, found.only([index for index, row in enumerate(found.rows)
                                                    if row in rows]))


def _origin(echoed: str) -> tuple[str | None, int, int]:
    """(tab, start_row, start_col) of an echoed range; open starts count from row/column 1."""
    parsed = parse_a1(echoed)
    return parsed.sheet, parsed.start_row or 1, parsed.start_col or 1


REFS_IN_MESSAGE = 3  # a message names a few cells; a result's ``cells`` carries up to MAX_CELLS


def refs_text(cells: list[Cell], total: int | None = None) -> str:
    """The first cells' references, and how many more of ``total`` (all of ``cells`` by default)."""
    shown = ", ".join(c.ref for c in cells[:REFS_IN_MESSAGE])
    more = (len(cells) if total is None else total) - REFS_IN_MESSAGE
    return f"{shown} and {more} more" if more > 0 else shown
