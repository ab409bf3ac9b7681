"""A ValueRange as Google returns it, turned into cells that know their sheet reference.

Google's ValueRange: ``{"range": "Stock!A2:A500", "majorDimension": "ROWS", "values": [[...], ...]}``.
``values`` is absent for an empty range, trailing empty cells and rows are trimmed (rows may be
ragged), interior empty cells are ``""``. With ``majorDimension == "COLUMNS"`` each inner list is a
column. Positions are counted from the *echoed* range's start, which is where Google's first value
sits (Google clamps open ranges such as ``A:A`` to ``A1:A1000``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from monitor.core.a1 import cell_ref, parse_a1, quote_sheet_name

# What Google shows while IMPORTRANGE, GOOGLEFINANCE and friends are still computing (the API's
# ErrorType LOADING). Such a value says nothing about the data, so the whole read is retried later
# rather than judged. The "#LOADING" spellings are accepted defensively: no real data says that.
LOADING_VALUES = frozenset({"Loading...", "Loading…", "#LOADING", "#LOADING!"})


class ValuesStillLoading(Exception):
    """A cell still shows Google's "Loading..." placeholder: retry the read later; never a finding."""

    def __init__(self, cell: str) -> None:
        super().__init__(f"{cell} still shows Loading...; read it again later")
        self.cell = cell


# Not frozen: a frozen dataclass's __init__ costs three times as much, and a read yields thousands of
# cells per spreadsheet. Nothing keeps a Cell beyond the evaluation that made it.
@dataclass(slots=True)
class Cell:
    prefix: str  # "Stock!", with the sheet name quoted the way Google echoes it
    row: int  # 1-based sheet row
    col: int  # 1-based sheet column
    value: Any

    @property
    def ref(self) -> str:
        """"Stock!B4". Computed on demand: a check names a handful of cells out of thousands read."""
        return self.prefix + cell_ref(self.row, self.col)


def is_empty(value: Any) -> bool:
    """Empty means no value, or text that is only whitespace (a cell that looks blank to people)."""
    return value is None or (isinstance(value, str) and not value.strip())


def is_number(value: Any) -> bool:
    # JSON booleans arrive as Python bools, which are ints: they are not quantities.
    return isinstance(value, int | float) and not isinstance(value, bool)


class ReadRange(dict):
    """A ValueRange whose cells are made once for every check that reads it (``cells_of``): a
    spreadsheet's checks often share a range, and a filter reads its columns once per check."""

    __slots__ = ("cells", "split")

    def __init__(self, value_range: Mapping[str, Any], cells: list[Cell] | None = None) -> None:
        super().__init__(value_range)
        self.cells = cells
        self.split: tuple[list[Cell], list[Cell]] | None = None


def numbers_and_others(value_range: Mapping[str, Any] | None) -> tuple[list[Cell], list[Cell]]:
    """The numeric cells and the rest, in reading order (made once for a ``ReadRange``)."""
    if type(value_range) is ReadRange and value_range.split is not None:
        return value_range.split
    cells = cells_of(value_range)
    split = ([c for c in cells if is_number(c.value)], [c for c in cells if not is_number(c.value)])
    if type(value_range) is ReadRange:
        value_range.split = split
    return split


def cells_of(
    value_range: Mapping[str, Any] | None, keep: Callable[[Any], object] | None = None
) -> list[Cell]:
    """Every non-empty cell of ``value_range`` in reading order (row by row, left to right).

    With ``keep``, only the values for which ``keep(value)`` is true become cells (a check that wants
    a few cells out of thousands need not pay for the rest). Raises ValuesStillLoading if any cell
    shows the Loading... placeholder, kept or not. A ``ReadRange``'s cells are made once and shared:
    callers never change the list.
    """
    if keep is None and type(value_range) is ReadRange:
        if value_range.cells is None:
            value_range.cells = _cells(value_range, None)
        return value_range.cells
    return _cells(value_range, keep)


def _cells(value_range: Mapping[str, Any] | None, keep: Callable[[Any], object] | None) -> list[Cell]:
    if not value_range:
        return []
    values = value_range.get("values") or []
    if not values:
        return []
    prefix, start_row, start_col = _origin(str(value_range.get("range", "")))
    by_columns = str(value_range.get("majorDimension", "ROWS")).upper() == "COLUMNS"
    cells = []
    for outer, line in enumerate(values):
        for inner, value in enumerate(line or ()):
            # is_empty() and the Loading... test, inlined: this loop runs for every value read.
            if isinstance(value, str):
                stripped = value.strip()
                if not stripped:
                    continue
                if stripped in LOADING_VALUES:
                    row_offset, col_offset = (inner, outer) if by_columns else (outer, inner)
                    raise ValuesStillLoading(Cell(prefix, start_row + row_offset, start_col + col_offset,
                                                  value).ref)
            elif value is None:
                continue
            if keep is not None and not keep(value):
                continue
            row_offset, col_offset = (inner, outer) if by_columns else (outer, inner)
            cells.append(Cell(prefix, start_row + row_offset, start_col + col_offset, value))
    if by_columns:
        cells.sort(key=lambda c: (c.row, c.col))
    return cells


def only_rows(value_range: Mapping[str, Any] | None, rows: set[int]) -> ReadRange:
    """``value_range`` seen through a row filter: its cells in the sheet rows ``rows`` only."""
    return ReadRange(value_range or {}, [cell for cell in cells_of(value_range) if cell.row in rows])


def _origin(echoed: str) -> tuple[str, int, int]:
    """("Stock!", start_row, start_col) of an echoed range; open starts count from row/column 1."""
    parsed = parse_a1(echoed)
    prefix = quote_sheet_name(parsed.sheet) + "!" if parsed.sheet is not None else ""
    return prefix, parsed.start_row or 1, parsed.start_col or 1
