"""Grid data -> the ValueRanges a batchGet gives, and the error cells (monitor.google.grid). Pure."""

from __future__ import annotations

import pytest

from monitor.checks.imports import CellError
from monitor.google.grid import UnreadableGrid, value_ranges_of

IMPORT = '=IMPORTRANGE("https://docs.google.com/spreadsheets/d/1src", "A1:A9")'


def meta(rows: int, cols: int) -> dict:
    return {"rowMetadata": [{"pixelSize": 21}] * rows, "columnMetadata": [{"pixelSize": 100}] * cols}


def cell(**effective) -> dict:
    return {"effectiveValue": effective}


BODY = {
    "namedRanges": [{"name": "Quantities", "range": {"sheetId": 7}}],
    "sheets": [
        {"properties": {"title": "Stock", "index": 0},  # sheetId 0 left out, as proto3 JSON does
         "data": [{"startRow": 1, **meta(3, 2), "rowData": [
             {"values": [cell(stringValue="A-1"), cell(numberValue=5)]},
             {"values": [cell(stringValue="A-2"), {"userEnteredValue": {"formulaValue": IMPORT},
                                                    "effectiveValue": {"errorValue": {
                                                        "type": "LOADING", "message": "Loading..."}}}]},
             {"values": [cell(boolValue=False), {}]},
         ]}]},
        {"properties": {"sheetId": 7, "title": "Sales Log", "index": 1},
         "data": [{**meta(2, 1), "rowData": [{"values": [cell(numberValue=46027.125)]}, {}]},
                  {"startColumn": 2, **meta(1000, 1)}]},
    ],
}


def test_each_range_gets_its_grid_in_the_order_asked_whatever_the_tabs_order():
    asked = ["'Sales Log'!A1:A2", "Stock!A2:B4", "Quantities"]
    value_ranges, errors, formula_ranges = value_ranges_of(BODY, asked)
    assert value_ranges == [
        {"range": "'Sales Log'!A1:A2", "majorDimension": "ROWS", "values": [[46027.125]]},
        {"range": "Stock!A2:B4", "majorDimension": "ROWS",
         "values": [["A-1", 5], ["A-2", "Loading..."], [False]]},
        {"range": "'Sales Log'!C1:C1000", "majorDimension": "ROWS"},
    ]
    assert errors == (CellError("Stock!B3", "LOADING", "Loading...", IMPORT),)
    # As FORMULA renders them: a formula cell shows its formula, the others their values.
    assert formula_ranges[1]["values"] == [["A-1", 5], ["A-2", IMPORT], [False]]
    assert formula_ranges[0] == value_ranges[0]


def test_a_range_without_a_tab_is_on_the_first():
    body = {"sheets": [BODY["sheets"][0]]}
    value_ranges, _, _ = value_ranges_of(body, ["A2:B4"])
    assert value_ranges[0]["range"] == "Stock!A2:B4"


@pytest.mark.parametrize("asked", [["Stock!A2:B4", "Stock!C1"], ["Nope!A1"]])
def test_grids_that_do_not_match_the_ranges_are_unreadable(asked):
    with pytest.raises(UnreadableGrid):
        value_ranges_of({"sheets": [BODY["sheets"][0]]}, asked)
