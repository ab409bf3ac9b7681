"""The sandbox's spreadsheets: a spreadsheet, its tabs and their rows of cells, as the Sheets API
models them.

Memory: a row holds only the cells up to its last non-empty one. Rows seeded through the control
API are tuples shared between every spreadsheet holding the same row (generated datasets draw rows
from a pool, see ``store``), and equal date cells are one object; a write copies the row it touches
into a list first. 5,000 generated spreadsheets of a few hundred rows then cost tens of MB, not GBs.

Neighbours: ``values`` reads and writes A1 ranges of a spreadsheet, ``control_format`` converts the
control API's JSON, ``store`` holds every spreadsheet under one lock.
"""

from __future__ import annotations

from datetime import UTC, datetime

from . import formulas
from .cells import Formula

DEFAULT_ROWS = 1000
DEFAULT_COLS = 26
MAX_CELLS = 10_000_000  # Google's per-spreadsheet limit
SPREADSHEET_MIME = "application/vnd.google-apps.spreadsheet"
# An Excel file kept in Drive as it was uploaded: Drive shows it, the Sheets API refuses it.
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_DEFAULT_PROPERTIES = {"locale": "en_US", "autoRecalc": "ON_CHANGE", "timeZone": "Etc/GMT"}


def rfc3339(moment: datetime) -> str:
    """Drive's timestamp form: 2026-01-05T03:00:00.000Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_rfc3339(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} needs a time zone (e.g. a trailing Z)")
    return moment.astimezone(UTC)


class Tab:
    """One sheet: its Google-shaped properties (without ``index``) and its rows of cells."""

    __slots__ = ("props", "rows", "has_formulas")

    def __init__(self, sheet_id: int, title: str, rows: int, cols: int) -> None:
        self.props: dict = {
            "sheetId": sheet_id,
            "title": title,
            "sheetType": "GRID",
            "gridProperties": {"rowCount": rows, "columnCount": cols},
        }
        self.rows: list[list | tuple] = []  # tuples are shared, read-only rows (see module doc)
        self.has_formulas = False

    @property
    def sheet_id(self) -> int:
        return self.props["sheetId"]

    @property
    def title(self) -> str:
        return self.props["title"]

    @property
    def row_count(self) -> int:
        return self.props["gridProperties"]["rowCount"]

    @property
    def col_count(self) -> int:
        return self.props["gridProperties"]["columnCount"]

    @property
    def hidden(self) -> bool:
        return bool(self.props.get("hidden"))

    def cell(self, row: int, col: int) -> object:
        """The cell at 1-based (row, col); None when empty or outside the data."""
        if row <= len(self.rows):
            cells = self.rows[row - 1]
            if col <= len(cells):
                return cells[col - 1]
        return None

    def writable_row(self, row: int) -> list:
        """Row ``row`` as this tab's own list (copy-on-write of a shared row)."""
        while len(self.rows) < row:
            self.rows.append([])
        cells = self.rows[row - 1]
        if isinstance(cells, tuple):
            cells = self.rows[row - 1] = list(cells)
        return cells

    def set_cell(self, row: int, col: int, value: object) -> None:
        cells = self.writable_row(row)
        if len(cells) < col:
            if value is None:
                return
            cells.extend([None] * (col - len(cells)))
        cells[col - 1] = value
        if isinstance(value, Formula):
            self.has_formulas = True

    def trim(self) -> None:
        """Drop trailing empty cells and rows, so storage follows the data, not the grid."""
        for index, cells in enumerate(self.rows):
            if cells and cells[-1] is None:
                cells = self.writable_row(index + 1)
                while cells and cells[-1] is None:
                    cells.pop()
        while self.rows and not self.rows[-1]:
            self.rows.pop()

    def resize(self, rows: int, cols: int) -> None:
        grid = self.props["gridProperties"]
        grid["rowCount"], grid["columnCount"] = rows, cols
        # New lists rather than in-place cuts: a batchUpdate keeps the old ones to undo with.
        self.rows = [cells[:cols] for cells in self.rows[:rows]]
        self.trim()


class NamedRange:
    """A name for a box of one tab, as Google's NamedRange holds it: the tab's sheetId (so the name
    follows a renamed tab) and 0-based, half-open indexes, None where the box is open."""

    __slots__ = ("id", "name", "sheet_id", "start_row", "end_row", "start_col", "end_col")

    def __init__(self, range_id: str, name: str, sheet_id: int, box: tuple) -> None:
        self.id = range_id
        self.name = name
        self.sheet_id = sheet_id
        self.start_row, self.end_row, self.start_col, self.end_col = box

    def grid_range(self) -> dict:
        """The GridRange Google shows: defaults (sheetId 0, an open side) are left out."""
        grid: dict = {"sheetId": self.sheet_id} if self.sheet_id else {}
        for key, value in (("startRowIndex", self.start_row), ("endRowIndex", self.end_row),
                           ("startColumnIndex", self.start_col), ("endColumnIndex", self.end_col)):
            if value is not None:
                grid[key] = value
        return grid


class Spreadsheet:
    """A file of the sandbox's Drive: a Google Sheets spreadsheet, or (``mime_type`` another type)
    a file Drive holds that the Sheets API refuses, such as an uploaded .xlsx."""

    __slots__ = ("id", "properties", "tabs", "created", "modified", "mime_type", "trashed",
                 "named_ranges")

    def __init__(self, spreadsheet_id: str, title: str, now: datetime) -> None:
        self.id = spreadsheet_id
        self.properties: dict = {"title": title, **_DEFAULT_PROPERTIES}
        self.tabs: list[Tab] = []
        self.created = now
        self.modified = now
        self.mime_type = SPREADSHEET_MIME
        self.trashed = False  # in Drive's trash: Drive says so, the Sheets API still serves it
        self.named_ranges: list[NamedRange] = []

    @property
    def is_google_sheet(self) -> bool:
        return self.mime_type == SPREADSHEET_MIME

    @property
    def title(self) -> str:
        return self.properties["title"]

    def tab_named(self, title: str) -> Tab | None:
        for tab in self.tabs:
            if tab.title == title:
                return tab
        folded = title.casefold()  # Sheets resolves tab names case-insensitively
        for tab in self.tabs:
            if tab.title.casefold() == folded:
                return tab
        return None

    def tab_with_id(self, sheet_id: int) -> Tab | None:
        for tab in self.tabs:
            if tab.sheet_id == sheet_id:
                return tab
        return None

    def named_range(self, name: str) -> NamedRange | None:
        for named in self.named_ranges:
            if named.name == name:
                return named
        folded = name.casefold()  # like tab names, a name is found whatever its case
        for named in self.named_ranges:
            if named.name.casefold() == folded:
                return named
        return None

    # -- formulas ----------------------------------------------------------------------------

    def recalculate(self) -> None:
        """Recompute every formula, in row-major order per tab (Google's ON_CHANGE recalc)."""
        for tab in self.tabs:
            if not tab.has_formulas:
                continue
            lookup = self._lookup_for(tab)
            for cells in tab.rows:
                for cell in cells:
                    # Exactly Formula: the subclass control_format makes for formulas whose value
                    # the seed data states (VLOOKUP, IMPORTRANGE) is never recomputed.
                    if type(cell) is Formula:
                        cell.value = formulas.evaluate(cell.text, lookup)

    def _lookup_for(self, tab: Tab):
        def lookup(sheet: str | None, row: int, col: int) -> object:
            target = tab if sheet is None else self.tab_named(sheet)
            if target is None:
                raise KeyError(sheet)
            return target.cell(row, col)

        return lookup

    # -- tabs --------------------------------------------------------------------------------

    def add_tab(self, tab: Tab, index: int | None = None) -> None:
        if index is None or index > len(self.tabs):
            index = len(self.tabs)
        self.tabs.insert(index, tab)

    def move_tab(self, tab: Tab, index: int) -> None:
        # Google's index is the position before the move: moving right lands one short.
        old = self.tabs.index(tab)
        self.tabs.pop(old)
        if index > old:
            index -= 1
        self.tabs.insert(max(0, min(index, len(self.tabs))), tab)


__all__ = [
    "DEFAULT_COLS",
    "DEFAULT_ROWS",
    "MAX_CELLS",
    "SPREADSHEET_MIME",
    "XLSX_MIME",
    "NamedRange",
    "Spreadsheet",
    "Tab",
    "parse_rfc3339",
    "rfc3339",
]
