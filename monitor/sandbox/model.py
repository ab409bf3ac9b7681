"""The sandbox's spreadsheets: tabs, grids and cells, read and written the way the Sheets API does.

One ``SpreadsheetStore`` holds every spreadsheet. The HTTP server is threaded, so every public
method takes the store's one lock; handlers that need several steps to be atomic (a batch) hold
``store.lock`` (re-entrant) around them.

Memory: a row holds only the cells up to its last non-empty one. Rows seeded through the control
API are tuples shared between every spreadsheet holding the same row (generated datasets draw rows
from a pool), and equal date cells are one object; a write copies the row it touches into a list
first. 5,000 generated spreadsheets of a few hundred rows then cost tens of MB, not GBs.

Errors a request can cause are raised as ``RequestError(message)``: the handlers turn them into
Google's 400 with exactly that message.
"""

from __future__ import annotations

import json
import random
import string
import threading
import zlib
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache

from monitor.core.a1 import A1Error, A1Range, column_letters, format_a1, parse_a1

from . import formulas
from .cells import (
    ERRORS,
    SERIAL_NUMBER,
    ErrorValue,
    Formatted,
    Formula,
    date_to_serial,
    datetime_to_serial,
    raw_cell,
    serial_to_datetime,
    user_entered_cell,
)
from .rendered_rows import RenderedRows

DEFAULT_ROWS = 1000
DEFAULT_COLS = 26
MAX_CELLS = 10_000_000  # Google's per-spreadsheet limit
SPREADSHEET_MIME = "application/vnd.google-apps.spreadsheet"
_ID_ALPHABET = string.ascii_letters + string.digits + "-_"
_SHARED_ROWS_LIMIT = 500_000  # beyond this many distinct rows, sharing stops paying for its dict
_DEFAULT_PROPERTIES = {"locale": "en_US", "autoRecalc": "ON_CHANGE", "timeZone": "Etc/GMT"}


class RequestError(ValueError):
    """A request the Sheets API would refuse with 400; str(exc) is Google's message."""


def rfc3339(moment: datetime) -> str:
    """Drive's timestamp form: 2026-01-05T03:00:00.000Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_rfc3339(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} needs a time zone (e.g. a trailing Z)")
    return moment.astimezone(UTC)


@dataclass
class Written:
    """What one write touched: the UpdateValuesResponse, and sets for a batch's totals."""

    sheet_id: int
    range_text: str
    rows: set[int] = field(default_factory=set)
    cols: set[int] = field(default_factory=set)
    cells: int = 0

    def as_json(self) -> dict:
        if not self.cells:
            return {"updatedRange": self.range_text}
        return {
            "updatedRange": self.range_text,
            "updatedRows": len(self.rows),
            "updatedColumns": len(self.cols),
            "updatedCells": self.cells,
        }


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


class Spreadsheet:
    __slots__ = ("id", "properties", "tabs", "created", "modified")

    def __init__(self, spreadsheet_id: str, title: str, now: datetime) -> None:
        self.id = spreadsheet_id
        self.properties: dict = {"title": title, **_DEFAULT_PROPERTIES}
        self.tabs: list[Tab] = []
        self.created = now
        self.modified = now

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

    # -- ranges ------------------------------------------------------------------------------

    def resolve(self, text: str) -> tuple[Tab, A1Range]:
        """The tab and the grid-clamped range ``text`` names; RequestError if Google could not."""
        try:
            parsed = parse_a1(text)
        except A1Error:
            raise RequestError(f"Unable to parse range: {text}") from None
        if parsed.sheet is None:
            tab = self.tabs[0]
        else:
            tab = self.tab_named(parsed.sheet)
            if tab is None:
                raise RequestError(f"Unable to parse range: {text}")
        clamped = parsed.with_sheet(tab.title).clamp(tab.row_count, tab.col_count)
        if max(clamped.start_row, clamped.end_row) > tab.row_count or max(
            clamped.start_col, clamped.end_col
        ) > tab.col_count:
            # Google names the range as asked (open sides stay open), e.g. "Mass!151154:151354".
            raise RequestError(
                f"Range ({format_a1(parsed.with_sheet(tab.title))}) exceeds grid limits. "
                f"Max rows: {tab.row_count}, max columns: {tab.col_count}"
            )
        return tab, clamped

    # -- values ------------------------------------------------------------------------------

    def read(
        self,
        text: str,
        value_option: str = "FORMATTED_VALUE",
        date_option: str = SERIAL_NUMBER,
        major: str = "ROWS",
        rendered: RenderedRows | None = None,
    ) -> dict:
        """A ValueRange: ``range`` and ``majorDimension`` always, ``values`` only if not empty.

        ``rendered`` (the store's) saves rendering shared rows again; results are the same without.
        """
        tab, r = self.resolve(text)
        table = (rendered or RenderedRows(limit=0)).table(value_option, date_option)
        rows, start, stop = tab.rows, r.start_col - 1, r.end_col
        grid = [table.cells(rows[i], start, stop) for i in range(r.start_row - 1, min(r.end_row, len(rows)))]
        if major == "COLUMNS":
            width = max((len(cells) for cells in grid), default=0)
            grid = [[cells[i] if i < len(cells) else "" for cells in grid] for i in range(width)]
        values = _trimmed(grid)
        result: dict = {"range": format_a1(r), "majorDimension": major}
        if values:
            result["values"] = values
        return result

    def write(self, text: str, values: object, input_option: str, major: str = "ROWS") -> Written:
        """Write ``values`` from the range's top-left corner (null cells are left alone)."""
        tab, r = self.resolve(text)
        grid = checked_values(values)
        if major == "COLUMNS":
            width = max((len(cells) for cells in grid), default=0)
            grid = [[col[i] if i < len(col) else None for col in grid] for i in range(width)]
        height = len(grid)
        width = max((len(cells) for cells in grid), default=0)
        if height == 0 or width == 0:
            return Written(tab.sheet_id, format_a1(r))
        parsed = parse_a1(text)
        if (parsed.start_row, parsed.start_col) == (parsed.end_row, parsed.end_col):
            # One cell only anchors the write: Google extends it to fit the values.
            parsed = A1Range(None, parsed.start_row, parsed.start_col, None, None)
        last_row, last_col = r.start_row + height - 1, r.start_col + width - 1
        if parsed.end_row is not None and last_row > r.end_row:
            raise RequestError(
                f"Requested writing within range [{format_a1(r)}], but tried writing to row "
                f"[{last_row}]"
            )
        if parsed.end_col is not None and last_col > r.end_col:
            raise RequestError(
                f"Requested writing within range [{format_a1(r)}], but tried writing to column "
                f"[{column_letters(last_col)}]"
            )
        if last_row > tab.row_count or last_col > tab.col_count:
            box = A1Range(tab.title, r.start_row, r.start_col, last_row, last_col)
            raise RequestError(
                f"Range ({format_a1(box)}) exceeds grid limits. "
                f"Max rows: {tab.row_count}, max columns: {tab.col_count}"
            )
        written = Written(tab.sheet_id, format_a1(A1Range(tab.title, r.start_row, r.start_col,
                                                          last_row, last_col)))
        user_entered = input_option == "USER_ENTERED"
        for i, row_values in enumerate(grid):
            for j, value in enumerate(row_values):
                if value is None:  # null means "leave this cell alone"
                    continue
                cell = user_entered_cell(value, _pending) if user_entered else raw_cell(value)
                tab.set_cell(r.start_row + i, r.start_col + j, cell)
                written.rows.add(r.start_row + i)
                written.cols.add(r.start_col + j)
                written.cells += 1
        tab.trim()
        self.recalculate()
        return written

    def clear(self, text: str) -> str:
        """Empty every cell of the range; the cleared range in Google's echo form."""
        tab, r = self.resolve(text)
        for row in range(r.start_row, min(r.end_row, len(tab.rows)) + 1):
            if len(tab.rows[row - 1]) < r.start_col:
                continue
            cells = tab.writable_row(row)
            for col in range(r.start_col, min(r.end_col, len(cells)) + 1):
                cells[col - 1] = None
        tab.trim()
        self.recalculate()
        return format_a1(r)

    def recalculate(self) -> None:
        """Recompute every formula, in row-major order per tab (Google's ON_CHANGE recalc)."""
        for tab in self.tabs:
            if not tab.has_formulas:
                continue
            lookup = self._lookup_for(tab)
            for cells in tab.rows:
                for cell in cells:
                    if type(cell) is Formula:  # not _FixedFormula: seed data states those
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


def _pending(text: str) -> object:
    return None  # formula values are filled in by recalculate() once the whole write is placed


def _trimmed(grid: list[list]) -> list[list]:
    for cells in grid:
        while cells and cells[-1] == "" and not isinstance(cells[-1], bool):
            cells.pop()
    while grid and not grid[-1]:
        grid.pop()
    return grid


def checked_values(values: object) -> list[list]:
    """The ``values`` of a ValueRange, validated the way Google's protobuf decoding does."""
    if values is None:
        return []
    if not isinstance(values, list):
        raise RequestError(_invalid_list("data.values", values))
    for i, row in enumerate(values):
        if not isinstance(row, list):
            raise RequestError(_invalid_list(f"data.values[{i}]", row))
        for j, value in enumerate(row):
            if value is not None and not isinstance(value, str | bool | int | float):
                raise RequestError(
                    f"Invalid value at 'data.values[{i}].values[{j}]' "
                    f"(type.googleapis.com/google.protobuf.Value), {_json_repr(value)}"
                )
    return values


def _invalid_list(field: str, value: object) -> str:
    return (
        f"Invalid value at '{field}' (type.googleapis.com/google.protobuf.ListValue), "
        f"{_json_repr(value)}"
    )


def _json_repr(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- control format --------------------------------------------------------------------------


def _control_row(row: list, where: str, number: int) -> tuple[list, bool]:
    """The cells of one control row, and whether it holds a formula. Plain text and numbers,
    nearly all cells, take a fast path: 5,000 generated spreadsheets hold millions of them."""
    cells = []
    has_formula = False
    for column, value in enumerate(row, start=1):
        kind = type(value)
        if (kind is str and value and value[0] not in "#=") or kind in (int, float, bool):
            cells.append(value)
        else:
            cell = control_cell(value, f"{where} row {number} column {column}")
            has_formula = has_formula or isinstance(cell, Formula)
            cells.append(cell)
    return cells, has_formula


def control_cell(value: object, where: str) -> object:
    """A cell from the control API's JSON (see SpreadsheetStore.put_control)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        if value in ERRORS:
            return ERRORS[value]
        if value.startswith("=") and len(value) > 1:
            return Formula(value)
        return value
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict):
        try:
            if set(value) == {"date"}:
                return _date_cell(value["date"], "date")
            if set(value) == {"datetime"}:
                return _date_cell(value["datetime"], "datetime")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: bad date {value!r} ({exc})") from None
        if "formula" in value and set(value) <= {"formula", "value"}:
            text = value["formula"]
            if not isinstance(text, str) or not text.startswith("="):
                raise ValueError(f"{where}: a formula must be a string starting with '='")
            if "value" not in value:
                return Formula(text)
            return _FixedFormula(text, control_cell(value["value"], where))
    raise ValueError(
        f"{where}: a cell must be a string, number, boolean, null, {{\"date\": \"YYYY-MM-DD\"}}, "
        f"{{\"datetime\": \"RFC 3339\"}} or {{\"formula\": \"=...\", \"value\": ...}}; got {value!r}"
    )


@lru_cache(maxsize=65536)
def _date_cell(text: str, kind: str) -> Formatted:
    """Equal dates are one (never mutated) object: generated sheets repeat them a lot."""
    if kind == "date":
        return Formatted(date_to_serial(date.fromisoformat(text)), "date")
    return Formatted(datetime_to_serial(parse_rfc3339(text)), "datetime")


class _FixedFormula(Formula):
    """A formula whose value the seed data states (VLOOKUP, IMPORTRANGE): never recomputed."""

    __slots__ = ()


def control_json(cell: object) -> object:
    if cell is None or isinstance(cell, str | bool | int | float):
        return cell
    if isinstance(cell, ErrorValue):
        return cell.code
    if isinstance(cell, Formatted):
        if cell.kind in ("date", "us_date"):
            return {"date": serial_to_datetime(cell.number).date().isoformat()}
        if cell.kind == "datetime":
            return {"datetime": serial_to_datetime(cell.number).isoformat() + "Z"}
        return cell.number
    if isinstance(cell, Formula):
        return {"formula": cell.text, "value": control_json(cell.value)}
    raise TypeError(cell)


class SpreadsheetStore:
    """Every spreadsheet of the sandbox, by id. Thread-safe; ``clock.now()`` stamps changes."""

    def __init__(self, clock, seed: int = 0) -> None:
        self.clock = clock
        self.lock = threading.RLock()
        self._random = random.Random(seed)
        self._sheets: dict[str, Spreadsheet] = {}
        self._rows: dict[tuple, tuple] = {}  # shared read-only rows, see _shared
        self.rendered = RenderedRows()  # their rendered forms, for reads (see rendered_rows.py)

    # -- lifecycle ---------------------------------------------------------------------------

    def create(self, title: str) -> Spreadsheet:
        """A new spreadsheet with one empty 1000 x 26 tab "Sheet1" (sheetId 0), like Drive's."""
        with self.lock:
            spreadsheet = Spreadsheet(self._new_id(), title, self.clock.now())
            spreadsheet.tabs.append(Tab(0, "Sheet1", DEFAULT_ROWS, DEFAULT_COLS))
            self._sheets[spreadsheet.id] = spreadsheet
            return spreadsheet

    def get(self, spreadsheet_id: str) -> Spreadsheet | None:
        with self.lock:
            return self._sheets.get(spreadsheet_id)

    def all(self) -> list[Spreadsheet]:
        with self.lock:
            return list(self._sheets.values())

    def ids(self) -> list[str]:
        with self.lock:
            return list(self._sheets)

    def delete(self, spreadsheet_id: str) -> bool:
        with self.lock:
            return self._sheets.pop(spreadsheet_id, None) is not None

    def reset(self) -> None:
        with self.lock:
            self._sheets.clear()
            self._rows.clear()
            self.rendered.clear()

    def touch(self, spreadsheet: Spreadsheet) -> None:
        """Record a change: Drive's modifiedTime moves on every write."""
        spreadsheet.modified = self.clock.now()

    def new_sheet_id(self, spreadsheet: Spreadsheet) -> int:
        with self.lock:
            taken = {tab.sheet_id for tab in spreadsheet.tabs}
            while True:
                candidate = self._random.randrange(1, 2**31 - 1)
                if candidate not in taken:
                    return candidate

    def _new_id(self) -> str:
        while True:  # Google's shape: 44 characters of [A-Za-z0-9_-], starting with "1"
            candidate = "1" + "".join(self._random.choice(_ID_ALPHABET) for _ in range(43))
            if candidate not in self._sheets:
                return candidate

    # -- control format ----------------------------------------------------------------------

    def put_control(self, spreadsheet_id: str, payload: dict) -> None:
        """Create or replace a spreadsheet from the control API's JSON; ValueError if malformed.

        ``{"title": str, "tabs": {"Name": TAB, ...}, "modifiedTime": RFC 3339 (optional),
        "createdTime": RFC 3339 (optional)}``, tabs in order, the first getting sheetId 0 and the
        others ids derived from the spreadsheet id and the tab name (stable for a dataset).
        TAB is a list of rows, or ``{"rows": [...], "rowCount": N, "columnCount": M,
        "hidden": bool}``; the grid is at least 1000 x 26 and at least the data. A row is a list
        of cells: string, number, boolean or null; a string naming an error ("#REF!", "#N/A",
        "#DIV/0!", "#VALUE!", "#NAME?", "#NUM!", "#NULL!", "#ERROR!") is that error value; a
        string starting with "=" is a formula computed by the sandbox's small evaluator;
        ``{"formula": "=VLOOKUP(...)", "value": 12}`` is a formula with a stated value;
        ``{"date": "2026-01-05"}`` and ``{"datetime": "2026-01-05T03:00:00Z"}`` are dates (a
        serial number unformatted, "2026-01-05" / "2026-01-05 03:00:00" formatted).
        """
        if not isinstance(spreadsheet_id, str) or not spreadsheet_id or "/" in spreadsheet_id:
            raise ValueError(f"spreadsheet id must be a non-empty string without '/', got "
                             f"{spreadsheet_id!r}")
        if not isinstance(payload, dict):
            raise ValueError("a spreadsheet must be a JSON object")
        unknown = set(payload) - {"title", "tabs", "modifiedTime", "createdTime"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}; allowed: title, tabs, "
                             "modifiedTime, createdTime")
        title = payload.get("title")
        if not isinstance(title, str) or not title:
            raise ValueError('"title" must be a non-empty string')
        tabs = payload.get("tabs")
        if not isinstance(tabs, dict) or not tabs:
            raise ValueError('"tabs" must be an object mapping tab names to rows, with at least '
                             "one tab")
        now = self.clock.now()
        times = {}
        for key in ("modifiedTime", "createdTime"):
            if payload.get(key) is not None:
                if not isinstance(payload[key], str):
                    raise ValueError(f'"{key}" must be an RFC 3339 string')
                try:
                    times[key] = parse_rfc3339(payload[key])
                except ValueError as exc:
                    raise ValueError(f'"{key}": {exc}') from None
        spreadsheet = Spreadsheet(spreadsheet_id, title, times.get("createdTime", now))
        used_ids: set[int] = set()
        for position, (name, spec) in enumerate(tabs.items()):
            spreadsheet.tabs.append(self._control_tab(spreadsheet_id, position, name, spec,
                                                      used_ids))
        if all(tab.hidden for tab in spreadsheet.tabs):
            raise ValueError("at least one tab must be visible")
        spreadsheet.recalculate()
        spreadsheet.modified = times.get("modifiedTime", now)
        with self.lock:
            self._sheets[spreadsheet_id] = spreadsheet

    def _control_tab(self, spreadsheet_id: str, position: int, name: str, spec: object,
                     used_ids: set[int]) -> Tab:
        where = f"tabs[{name!r}]"
        if not name or len(name) > 100:
            raise ValueError(f"{where}: a tab name must have 1 to 100 characters")
        if isinstance(spec, list):
            spec = {"rows": spec}
        if not isinstance(spec, dict) or not isinstance(spec.get("rows", []), list):
            raise ValueError(f"{where} must be a list of rows or an object with \"rows\"")
        unknown = set(spec) - {"rows", "rowCount", "columnCount", "hidden"}
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}; allowed: rows, rowCount, "
                             "columnCount, hidden")
        rows_in = spec.get("rows", [])
        rows: list[list | tuple] = []
        has_formulas = False
        for r, row in enumerate(rows_in, start=1):
            if not isinstance(row, list):
                raise ValueError(f"{where} row {r}: a row must be a list of cells")
            cells, formulas_here = _control_row(row, where, r)
            while cells and cells[-1] is None:
                cells.pop()
            # Rows with formulas stay this tab's own: their values depend on the tab.
            rows.append(cells if formulas_here else self._shared(cells))
            has_formulas = has_formulas or formulas_here
        width = max((len(row) for row in rows), default=0)
        row_count = _positive(spec.get("rowCount", max(DEFAULT_ROWS, len(rows))), where, "rowCount")
        col_count = _positive(spec.get("columnCount", max(DEFAULT_COLS, width)), where,
                              "columnCount")
        if row_count < len(rows) or col_count < width:
            raise ValueError(f"{where}: the data ({len(rows)} x {width}) does not fit the grid "
                             f"({row_count} x {col_count})")
        if position == 0:
            sheet_id = 0
        else:
            sheet_id = zlib.crc32(f"{spreadsheet_id}/{name}".encode()) & 0x7FFFFFFF or 1
            while sheet_id in used_ids:
                sheet_id = (sheet_id + 1) & 0x7FFFFFFF or 1
        used_ids.add(sheet_id)
        tab = Tab(sheet_id, name, row_count, col_count)
        if spec.get("hidden"):
            tab.props["hidden"] = True
        tab.rows = rows
        tab.has_formulas = has_formulas
        tab.trim()
        return tab

    def _shared(self, cells: list) -> tuple:
        """One tuple for every equal (formula-free) row the store holds."""
        row = tuple(cells)
        with self.lock:
            shared = self._rows.get(row)
            if shared is not None:
                return shared
            if len(self._rows) < _SHARED_ROWS_LIMIT:
                self._rows[row] = row
        return row

    def get_control(self, spreadsheet_id: str) -> dict | None:
        """The spreadsheet in put_control's shape (formulas as {"formula", "value"}), or None."""
        with self.lock:
            spreadsheet = self._sheets.get(spreadsheet_id)
            if spreadsheet is None:
                return None
            tabs: dict = {}
            for tab in spreadsheet.tabs:
                rows = [[control_json(c) for c in cells] for cells in tab.rows]
                width = max((len(cells) for cells in rows), default=0)
                inferred = (max(DEFAULT_ROWS, len(rows)), max(DEFAULT_COLS, width))
                if (tab.row_count, tab.col_count) == inferred and not tab.hidden:
                    tabs[tab.title] = rows
                else:
                    tabs[tab.title] = {"rows": rows, "rowCount": tab.row_count,
                                       "columnCount": tab.col_count}
                    if tab.hidden:
                        tabs[tab.title]["hidden"] = True
            return {
                "title": spreadsheet.title,
                "tabs": tabs,
                "createdTime": rfc3339(spreadsheet.created),
                "modifiedTime": rfc3339(spreadsheet.modified),
            }


def _positive(value: object, where: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: {key} must be a positive integer, got {value!r}")
    return value


__all__ = [
    "DEFAULT_COLS",
    "DEFAULT_ROWS",
    "RequestError",
    "SPREADSHEET_MIME",
    "Spreadsheet",
    "SpreadsheetStore",
    "Tab",
    "rfc3339",
]
