"""The values API over one spreadsheet: A1 ranges resolved against its tabs, then read, written
and cleared with Google's rules (echo form, trimming, spill checks, protobuf validation).

The caller holds ``store.lock``. Errors a request can cause are raised as
``RequestError(message)``: the handlers turn them into Google's 400 with exactly that message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from monitor.core.a1 import A1Error, A1Range, column_letters, format_a1, parse_a1, parse_named

from .cells import SERIAL_NUMBER, raw_cell, user_entered_cell
from .model import Spreadsheet, Tab
from .rendered_rows import RenderedRows


class RequestError(ValueError):
    """A request the Sheets API would refuse with 400; str(exc) is Google's message."""


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


def resolve(spreadsheet: Spreadsheet, text: str) -> tuple[Tab, A1Range]:
    """The tab and the grid-clamped range ``text`` names; RequestError if Google could not."""
    parsed = _named(spreadsheet, text)
    if parsed is None:
        try:
            parsed = parse_a1(text)
        except A1Error:
            raise RequestError(f"Unable to parse range: {text}") from None
    if parsed.sheet is None:
        tab = spreadsheet.tabs[0]
    else:
        tab = spreadsheet.tab_named(parsed.sheet)
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


def _named(spreadsheet: Spreadsheet, text: str) -> A1Range | None:
    """The box a named range names, as an A1Range on its tab; None when ``text`` names none.

    ``MyRange`` is the named range when there is one (else the tab of that name); ``'MyRange'``,
    quoted, is always the tab; ``Tab!MyRange`` names the range on its own tab (the Sheets API
    guide, "A1 notation"; the recorded read of ``'Sheet1'!NamedRange`` echoed ``Sheet1!B1:C3``). A
    name on another tab than the one written cannot be resolved: 400, as for an unknown range."""
    ref = parse_named(text)
    named = spreadsheet.named_range(ref.name) if ref is not None else None
    if named is None:
        if ref is not None and ref.sheet is not None:
            raise RequestError(f"Unable to parse range: {text}")
        return None
    tab = spreadsheet.tab_with_id(named.sheet_id)
    if tab is None or (ref.sheet is not None and spreadsheet.tab_named(ref.sheet) is not tab):
        raise RequestError(f"Unable to parse range: {text}")
    return A1Range(tab.title, _one_based(named.start_row), _one_based(named.start_col),
                   named.end_row, named.end_col)


def _one_based(index: int | None) -> int | None:
    return None if index is None else index + 1


def read(
    spreadsheet: Spreadsheet,
    text: str,
    value_option: str = "FORMATTED_VALUE",
    date_option: str = SERIAL_NUMBER,
    major: str = "ROWS",
    rendered: RenderedRows | None = None,
) -> dict:
    """A ValueRange: ``range`` and ``majorDimension`` always, ``values`` only if not empty.

    ``rendered`` (the store's) saves rendering shared rows again; results are the same without.
    """
    tab, r = resolve(spreadsheet, text)
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


def write(spreadsheet: Spreadsheet, text: str, values: object, input_option: str,
          major: str = "ROWS") -> Written:
    """Write ``values`` from the range's top-left corner (null cells are left alone)."""
    tab, r = resolve(spreadsheet, text)
    grid = checked_values(values)
    if major == "COLUMNS":
        width = max((len(cells) for cells in grid), default=0)
        grid = [[col[i] if i < len(col) else None for col in grid] for i in range(width)]
    height = len(grid)
    width = max((len(cells) for cells in grid), default=0)
    if height == 0 or width == 0:
        return Written(tab.sheet_id, format_a1(r))
    box = _box_to_write(tab, r, _named(spreadsheet, text) or parse_a1(text), height, width)
    written = Written(tab.sheet_id, format_a1(box))
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
    spreadsheet.recalculate()
    return written


def _box_to_write(tab: Tab, r: A1Range, parsed: A1Range, height: int, width: int) -> A1Range:
    """The box ``height`` x ``width`` values fill from the corner of ``r`` (``parsed``, the range
    as asked, resolved); RequestError if they spill out of the range asked for or out of the grid."""
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
    box = A1Range(tab.title, r.start_row, r.start_col, last_row, last_col)
    if last_row > tab.row_count or last_col > tab.col_count:
        raise RequestError(
            f"Range ({format_a1(box)}) exceeds grid limits. "
            f"Max rows: {tab.row_count}, max columns: {tab.col_count}"
        )
    return box


def clear(spreadsheet: Spreadsheet, text: str) -> str:
    """Empty every cell of the range; the cleared range in Google's echo form."""
    tab, r = resolve(spreadsheet, text)
    for row in range(r.start_row, min(r.end_row, len(tab.rows)) + 1):
        if len(tab.rows[row - 1]) < r.start_col:
            continue
        cells = tab.writable_row(row)
        for col in range(r.start_col, min(r.end_col, len(cells)) + 1):
            cells[col - 1] = None
    tab.trim()
    spreadsheet.recalculate()
    return format_a1(r)


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
