"""The read path's cache of rendered shared rows (a batchGet's values, a grid answer's cells): same
answers as made afresh, never stale."""

from datetime import UTC, datetime

import pytest

from monitor.core.clock import ManualClock
from sheet_sandbox import values
from sheet_sandbox.cells import (
    ERRORS,
    FORMATTED_STRING,
    FORMATTED_VALUE,
    FORMULA,
    SERIAL_NUMBER,
    UNFORMATTED_VALUE,
    Formatted,
    Formula,
    render,
    render_cells,
)
from sheet_sandbox.rendered_rows import RenderedRows
from sheet_sandbox.store import SpreadsheetStore

ROW = ("SKU-1", 2, 2.0, 1.5, True, None, ERRORS["#N/A"], Formatted(46351.5, "datetime"),
       Formatted(1234.5, "grouped", 2), "")
OPTIONS = [(v, d) for v in (FORMATTED_VALUE, UNFORMATTED_VALUE, FORMULA)
           for d in (SERIAL_NUMBER, FORMATTED_STRING)]


@pytest.mark.parametrize(("value_option", "date_option"), OPTIONS)
def test_cached_rows_render_as_each_cell_would(value_option, date_option):
    table = RenderedRows().table(value_option, date_option)
    expected = [render(cell, value_option, date_option) for cell in ROW]
    assert table.cells(ROW, 0, len(ROW)) == expected
    assert table.cells(ROW, 0, len(ROW)) == expected  # the second time from the cache
    assert table.cells(ROW, 2, 5) == expected[2:5]
    assert render_cells(list(ROW), value_option, date_option) == expected


def test_a_caller_changing_its_slice_leaves_the_cache_intact():
    table = RenderedRows().table(UNFORMATTED_VALUE, SERIAL_NUMBER)
    first = table.cells(ROW, 0, 3)
    first.clear()
    assert table.cells(ROW, 0, 3) == ["SKU-1", 2, 2]


def test_a_row_holding_a_formula_shows_its_current_value():
    formula = Formula("=A1*2", 4)
    row = ("x", formula)
    table = RenderedRows().table(UNFORMATTED_VALUE, SERIAL_NUMBER)
    assert table.cells(row, 0, 2) == ["x", 4]
    formula.value = 6  # what recalculate() does in place
    assert table.cells(row, 0, 2) == ["x", 6]


def test_the_cache_is_dropped_when_full_and_keeps_answering():
    rendered = RenderedRows(limit=2)
    table = rendered.table(UNFORMATTED_VALUE, SERIAL_NUMBER)
    rows = [(f"r{n}", n) for n in range(5)]
    for row in rows:
        table.cells(row, 0, 2)
    assert rendered.size() <= 2
    assert [table.cells(row, 0, 2) for row in rows] == [[f"r{n}", n] for n in range(5)]


def test_a_limit_of_zero_caches_nothing():
    rendered = RenderedRows(limit=0)
    rendered.table(UNFORMATTED_VALUE, SERIAL_NUMBER).cells(ROW, 0, 2)
    assert rendered.size() == 0


def _store_with(rows: list) -> SpreadsheetStore:
    store = SpreadsheetStore(ManualClock(datetime(2026, 1, 5, tzinfo=UTC)))
    store.put_control("s1", {"title": "T", "tabs": {"Stock": rows}})
    store.put_control("s2", {"title": "U", "tabs": {"Stock": rows}})  # shares the same row tuples
    return store


def test_a_write_to_a_shared_row_shows_in_the_next_read_and_not_in_the_other_spreadsheet():
    store = _store_with([["SKU", "Qty"], ["a", 5], ["b", 7]])
    first, second = store.get("s1"), store.get("s2")
    args = (UNFORMATTED_VALUE, SERIAL_NUMBER, "ROWS", store.rendered)
    assert values.read(first, "Stock!A1:B3", *args)["values"] == [["SKU", "Qty"], ["a", 5], ["b", 7]]
    assert values.read(second, "Stock!A1:B3", *args)["values"] == [["SKU", "Qty"], ["a", 5], ["b", 7]]
    values.write(first, "Stock!B2", [[-1]], "RAW")
    assert values.read(first, "Stock!A1:B3", *args)["values"] == [["SKU", "Qty"], ["a", -1], ["b", 7]]
    assert values.read(second, "Stock!A1:B3", *args)["values"] == [["SKU", "Qty"], ["a", 5], ["b", 7]]


def test_reads_trim_trailing_empty_cells_of_cached_rows_every_time():
    store = _store_with([["a", None, "c"], ["d"]])
    sheet = store.get("s1")
    args = (UNFORMATTED_VALUE, SERIAL_NUMBER, "ROWS", store.rendered)
    for _ in range(2):
        assert values.read(sheet, "Stock!A1:B2", *args)["values"] == [["a"], ["d"]]
        assert values.read(sheet, "Stock!A1:C2", *args)["values"] == [["a", "", "c"], ["d"]]
        assert values.read(sheet, "Stock!A1:C2", *args[:2], "COLUMNS", store.rendered)["values"] == [
            ["a", "d"], [], ["c"]]


def test_a_reset_store_forgets_its_rendered_rows():
    store = _store_with([["a", 1]])
    values.read(store.get("s1"), "Stock!A1:B1", UNFORMATTED_VALUE, SERIAL_NUMBER, "ROWS", store.rendered)
    assert store.rendered.size() > 0
    store.reset()
    assert store.rendered.size() == 0


# -- grid answers (spreadsheets.get with grid data) ----------------------------------------------

GRID = {"fields": "sheets.data.rowData.values(effectiveValue)"}
FULL_GRID = {"fields": "sheets.data.rowData.values(effectiveValue,userEnteredValue(formulaValue))"}


def _grid(store: SpreadsheetStore, sheet_id: str, ranges: list[str], fields: dict) -> list:
    from sheet_sandbox.fieldmask import apply_mask, parse_mask
    from sheet_sandbox.sheets_api import _cell_fields, spreadsheet_json

    mask = parse_mask(fields["fields"])
    body = spreadsheet_json(store.get(sheet_id), True, ranges, _cell_fields(mask), store.rendered)
    return [data.get("rowData") for data in apply_mask(body, mask)["sheets"][0]["data"]]


@pytest.mark.parametrize("fields", [GRID, FULL_GRID])
def test_a_grid_answer_is_the_same_made_afresh_from_the_cache_and_for_each_range_alone(fields):
    store = _store_with([["SKU", "Qty"], ["a", 5], ["b", "#N/A"]])
    ranges = ["Stock!A1:B3", "Stock!B2:B3", "Stock!A2:A"]
    alone = [_grid(store, "s1", [text], fields)[0] for text in ranges]
    fresh = SpreadsheetStore(ManualClock(datetime(2026, 1, 5, tzinfo=UTC)))
    fresh.rendered = RenderedRows(limit=0)
    fresh.put_control("s1", {"title": "T", "tabs": {"Stock": [["SKU", "Qty"], ["a", 5], ["b", "#N/A"]]}})
    for _ in range(2):  # the second time from the cache, the other spreadsheet's shared rows too
        assert _grid(store, "s1", ranges, fields) == alone
        assert _grid(store, "s2", ranges, fields) == alone
        assert _grid(fresh, "s1", ranges, fields) == alone
    if fields is GRID:
        assert alone[1] == [{"values": [{"effectiveValue": {"numberValue": 5}}]},
                            {"values": [{"effectiveValue": {"errorValue": {"type": "N_A",
                                                                           "message": "#N/A"}}}]}]


def test_a_grid_answer_after_a_write_shows_it_and_the_other_spreadsheet_keeps_its_own():
    store = _store_with([["SKU", "Qty"], ["a", 5]])
    assert _grid(store, "s1", ["Stock!B2"], GRID) == [[{"values": [{"effectiveValue": {"numberValue": 5}}]}]]
    values.write(store.get("s1"), "Stock!B2", [[-1]], "RAW")
    assert _grid(store, "s1", ["Stock!B2"], GRID) == [[{"values": [{"effectiveValue": {"numberValue": -1}}]}]]
    assert _grid(store, "s2", ["Stock!B2"], GRID) == [[{"values": [{"effectiveValue": {"numberValue": 5}}]}]]


def test_a_grid_answer_shows_a_formula_s_current_value():
    store = SpreadsheetStore(ManualClock(datetime(2026, 1, 5, tzinfo=UTC)))
    store.put_control("s1", {"title": "T", "tabs": {"Stock": [[2, "=A1*2"]]}})
    assert _grid(store, "s1", ["Stock!B1"], GRID) == [[{"values": [{"effectiveValue": {"numberValue": 4}}]}]]
    values.write(store.get("s1"), "Stock!A1", [[3]], "RAW")
    assert _grid(store, "s1", ["Stock!B1"], GRID) == [[{"values": [{"effectiveValue": {"numberValue": 6}}]}]]


def test_made_rows_are_kept_per_key_and_dropped_when_full():
    rendered = RenderedRows(limit=2)
    rows = [(f"r{n}", n) for n in range(5)]
    for key in ("upper", "length"):
        table = rendered.made(key)
        make = (lambda row: [str(c).upper() for c in row]) if key == "upper" else (lambda row: [len(row)])
        for _ in range(2):
            assert [table.cells(row, 0, len(row), make) for row in rows] == [make(row) for row in rows]
    assert rendered.size() <= 4
