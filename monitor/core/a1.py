"""A1 notation, parsed and printed the way the Google Sheets API does it. Pure: no I/O, no grid.

Shapes accepted (``Tab`` may be quoted as ``'It''s'``, with ``''`` for a quote inside):

    Tab            the whole tab
    Tab!A1         one cell            A1        a cell on the first tab (no tab named)
    Tab!A1:C5      a box               A1:C5
    Tab!A2:A       open below          A:C       whole columns
    Tab!2:5        whole rows          A1:1      open to the right

A bare word is a tab name unless it reads as a cell (``A1``, ``XFD7``): Google resolves ``D3`` as a
cell, which is why it quotes a tab called ``D3`` when it echoes a range. Columns run from A to ZZZ
(18,278, Google's maximum). Reversed corners (``D4:A1``) are normalised. ``$`` anchors are ignored.

Named ranges: ``MyRange``, ``Stock!MyRange`` and ``'Stock'!MyRange`` name a range by its name
(:func:`parse_named`). A bare word may be a tab or a name: Google takes the named range when the
spreadsheet has one, and ``'MyRange'`` (quoted) is always the tab (the Sheets API guide, "A1
notation"). Which one a bare word is depends on the spreadsheet, so :func:`parse_a1` still reads it
as a tab.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MAX_COLUMN = 18278  # ZZZ: the widest grid Google allows

_CELL = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]+)$")
_COLUMN = re.compile(r"^\$?([A-Za-z]{1,3})$")
_ROW = re.compile(r"^\$?([0-9]+)$")
# Names Google echoes without quotes: word characters only, not starting with a digit.
_PLAIN_NAME = re.compile(r"^[^\W\d]\w*$")
# R1C1-looking names (R, C, R1, C2, R1C1) would be read as references, so they get quotes too.
_R1C1 = re.compile(r"^[Rr][0-9]*([Cc][0-9]*)?$|^[Cc][0-9]*$")
# A range's name: letters, digits and underscores, not starting with a digit, 1 to 250 characters
# (Google's "Name a range" help, support.google.com/docs/answer/63175).
_RANGE_NAME = re.compile(r"^[^\W\d]\w{0,249}$")


class A1Error(ValueError):
    """The text is not an A1 range; str(exc) is the offending text."""


@dataclass(frozen=True)
class A1Range:
    """A range: 1-based, inclusive; None means open on that side (whole column, row or tab)."""

    sheet: str | None
    start_row: int | None = None
    start_col: int | None = None
    end_row: int | None = None
    end_col: int | None = None

    @property
    def is_whole_sheet(self) -> bool:
        return (self.start_row, self.start_col, self.end_row, self.end_col) == (None,) * 4

    def with_sheet(self, sheet: str | None) -> A1Range:
        return A1Range(sheet, self.start_row, self.start_col, self.end_row, self.end_col)

    @property
    def local(self) -> str:
        """Its cells without the tab ("1:1", "A2:A"), as the tab's own line names them; "" for a whole tab."""
        return "" if self.is_whole_sheet else _format_cells(self)

    def __str__(self) -> str:
        return format_a1(self)

    def clamp(self, rows: int, cols: int) -> A1Range:
        """Close the open sides at the grid's edges (``rows`` x ``cols``), the way Google echoes."""
        return A1Range(
            self.sheet,
            self.start_row or 1,
            self.start_col or 1,
            self.end_row if self.end_row is not None else rows,
            self.end_col if self.end_col is not None else cols,
        )


@dataclass(frozen=True, slots=True)
class CellRef:
    """One cell: its tab (None when the range named none), its 1-based row and column. It stays this
    value from the finding that names it to the line a person reads; ``str()`` is its A1 text
    ("Stock!B4", "'My tab'!C2"), ``local`` the cell alone ("B4")."""

    sheet: str | None
    row: int
    col: int

    @property
    def local(self) -> str:
        return cell_ref(self.row, self.col)

    def __str__(self) -> str:
        return sheet_prefix(self.sheet) + cell_ref(self.row, self.col)


# What a finding points at: a cell, or a range (a header row "Stock!1:1", a tab without a header row).
Ref = CellRef | A1Range


def parse_ref(text: str) -> Ref:
    """A reference's A1 text as :class:`Ref`: a cell as a CellRef, anything wider as an A1Range;
    A1Error when Google could not read it either."""
    parsed = parse_a1(text)
    if parsed.start_row is not None and parsed.start_col is not None \
            and (parsed.start_row, parsed.start_col) == (parsed.end_row, parsed.end_col):
        return CellRef(parsed.sheet, parsed.start_row, parsed.start_col)
    return parsed


def parse_cell(text: str) -> CellRef:
    """One cell's A1 text as a CellRef; A1Error for anything else."""
    ref = parse_ref(text)
    if not isinstance(ref, CellRef):
        raise A1Error(text)
    return ref


@dataclass(frozen=True)
class NamedRef:
    """A named range as a range names it: ``name``, on tab ``sheet`` when the text names one."""

    sheet: str | None
    name: str


def column_letters(index: int) -> str:
    """1 -> 'A', 26 -> 'Z', 27 -> 'AA'."""
    if index < 1:
        raise A1Error(f"column index must be >= 1, got {index}")
    letters = ""
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(ord("A") + rem) + letters
    return letters


def column_index(letters: str) -> int:
    """'A' -> 1, 'Z' -> 26, 'aa' -> 27 (case-insensitive)."""
    if not letters or not letters.isascii() or not letters.isalpha():
        raise A1Error(letters)
    index = 0
    for char in letters.upper():
        index = index * 26 + (ord(char) - ord("A") + 1)
    return index


def cell_ref(row: int, col: int) -> str:
    """(3, 2) -> 'B3'."""
    if row < 1:
        raise A1Error(f"row must be >= 1, got {row}")
    return f"{column_letters(col)}{row}"


def _looks_like_reference(name: str) -> bool:
    if _R1C1.match(name):
        return True
    cell = _CELL.match(name)
    return bool(cell) and column_index(cell.group(1)) <= MAX_COLUMN and int(cell.group(2)) >= 1


def quote_sheet_name(title: str) -> str:
    """A tab name as Google writes it in a range: bare when unambiguous, else ``'...'`` with ``''``."""
    if _PLAIN_NAME.match(title) and not _looks_like_reference(title) and title.upper() not in (
        "TRUE",
        "FALSE",
    ):
        return title
    return "'" + title.replace("'", "''") + "'"


@lru_cache(maxsize=1024)
def sheet_prefix(sheet: str | None) -> str:
    """"Stock!" (quoted as Google writes it) before a cell of tab ``sheet``; "" for no tab. A read's
    few tabs come back for every cell a message names: each is quoted once."""
    return "" if sheet is None else quote_sheet_name(sheet) + "!"


def _parse_corner(text: str) -> tuple[int | None, int | None]:
    """One side of a range: 'B3' -> (3, 2), 'B' -> (None, 2), '3' -> (3, None)."""
    if match := _CELL.match(text):
        row, col = int(match.group(2)), column_index(match.group(1))
    elif match := _COLUMN.match(text):
        row, col = None, column_index(match.group(1))
    elif match := _ROW.match(text):
        row, col = int(match.group(1)), None
    else:
        raise A1Error(text)
    if (row is not None and row < 1) or (col is not None and col > MAX_COLUMN):
        raise A1Error(text)
    return row, col


def _ordered(a: int | None, b: int | None) -> tuple[int | None, int | None]:
    if a is not None and b is not None and a > b:
        return b, a
    return a, b


def _parse_cells(text: str) -> tuple[int | None, int | None, int | None, int | None]:
    parts = text.split(":")
    if len(parts) == 1:
        match = _CELL.match(text)
        if not match:  # a lone column or row ('A', '5') is not a range
            raise A1Error(text)
        row, col = _parse_corner(text)
        return row, col, row, col
    if len(parts) != 2:
        raise A1Error(text)
    start_row, start_col = _parse_corner(parts[0])
    end_row, end_col = _parse_corner(parts[1])
    # 'A:5' mixes a whole column with a whole row: Google cannot read it either.
    if (start_row is None and end_col is None) or (start_col is None and end_row is None):
        raise A1Error(text)
    start_row, end_row = _ordered(start_row, end_row)
    start_col, end_col = _ordered(start_col, end_col)
    return start_row, start_col, end_row, end_col


def _is_cells(text: str) -> bool:
    try:
        _parse_cells(text)
    except A1Error:
        return False
    return True


def _split_quoted(text: str) -> tuple[str, str | None]:
    """"'It''s'!A1" -> ("It's", "A1"); "'Tab'" -> ("Tab", None)."""
    name: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if char == "'":
            if text[i + 1 : i + 2] == "'":
                name.append("'")
                i += 2
                continue
            rest = text[i + 1 :]
            if not name:
                raise A1Error(text)
            if rest == "":
                return "".join(name), None
            if rest.startswith("!"):
                return "".join(name), rest[1:]
            raise A1Error(text)
        name.append(char)
        i += 1
    raise A1Error(text)  # no closing quote


def parse_a1(text: str) -> A1Range:
    """Parse ``text`` into an A1Range; raises A1Error (message = the text) if Google could not."""
    if not isinstance(text, str) or not text.strip():
        raise A1Error(str(text))
    return _parsed(text)


# A run parses the same few ranges for every spreadsheet (its checks' and Google's echoes of them),
# thousands of times: each text is parsed once. An A1Range is frozen, so sharing it is safe.
@lru_cache(maxsize=4096)
def _parsed(text: str) -> A1Range:
    stripped = text.strip()
    try:
        if stripped.startswith("'"):
            sheet, cells = _split_quoted(stripped)
        elif "!" in stripped:
            sheet, cells = stripped.rsplit("!", 1)
            if not sheet:
                raise A1Error(text)
        elif _is_cells(stripped):
            sheet, cells = None, stripped
        else:
            sheet, cells = stripped, None
    except A1Error:
        raise A1Error(text) from None
    if cells is None:
        return A1Range(sheet)
    try:
        start_row, start_col, end_row, end_col = _parse_cells(cells)
    except A1Error:
        raise A1Error(text) from None
    return A1Range(sheet, start_row, start_col, end_row, end_col)


def is_range_name(text: str) -> bool:
    """Could ``text`` name a range? Not TRUE or FALSE, nor anything that reads as a reference in
    A1 or R1C1 notation (``A1``, ``R1C1``), which Google refuses as names."""
    return (bool(_RANGE_NAME.match(text)) and not _looks_like_reference(text)
            and text.upper() not in ("TRUE", "FALSE"))


def parse_named(text: str) -> NamedRef | None:
    """``MyRange``, ``Tab!MyRange`` or ``'Tab'!MyRange`` as a named range; None for anything else
    (cells, a quoted tab alone, a name Google would refuse)."""
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    try:
        if stripped.startswith("'"):
            sheet, name = _split_quoted(stripped)  # "'Tab'" alone (name None) is the tab
        elif "!" in stripped:
            sheet, name = stripped.rsplit("!", 1)
            if not sheet:
                return None
        else:
            sheet, name = None, stripped
    except A1Error:
        return None
    if name is None or not is_range_name(name) or _is_cells(name):
        return None
    return NamedRef(sheet, name)


def _format_cells(r: A1Range) -> str:
    start = (column_letters(r.start_col) if r.start_col else "") + (
        str(r.start_row) if r.start_row else ""
    )
    end = (column_letters(r.end_col) if r.end_col else "") + (str(r.end_row) if r.end_row else "")
    if start == end and r.start_row and r.start_col:
        return start
    if r.start_row is None and r.start_col is None:
        start = "A1" if r.end_row and r.end_col else ("A" if r.end_col else "1")
    return f"{start}:{end}"


def format_a1(r: A1Range) -> str:
    """Google's echo form: ``Sheet1!A1:B2``, ``'My tab'!A1``, ``Sheet1`` for a whole tab."""
    sheet = quote_sheet_name(r.sheet) if r.sheet is not None else None
    if r.is_whole_sheet:
        if sheet is None:
            raise A1Error("a whole-tab range needs a tab name")
        return sheet
    cells = _format_cells(r)
    return f"{sheet}!{cells}" if sheet is not None else cells
