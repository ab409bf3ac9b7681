"""Grid data -> the ValueRanges a batchGet gives, and the error cells (monitor.google.grid). Pure."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.checks.imports import CellError
from monitor.google.grid import UnreadableGrid, parse, value_ranges_of

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


# -- the answer parsed compactly (grid.parse) reads as the answer parsed plainly ------------------------

_EFFECTIVE = st.one_of(
    st.builds(lambda n: {"numberValue": n}, st.one_of(st.integers(-5, 5), st.floats(allow_nan=False))),
    st.builds(lambda s: {"stringValue": s}, st.sampled_from(["", "A-1", "#N/A", "0"])),
    st.builds(lambda b: {"boolValue": b}, st.booleans()),
    st.builds(lambda kind, message: {"errorValue": {"type": kind, "message": message}},
              st.sampled_from(["N_A", "REF", "LOADING", "ERROR", "NOPE"]), st.sampled_from(["", "why"])),
    st.builds(lambda kind: {"errorValue": {"type": kind}}, st.sampled_from(["N_A", "DIVIDE_BY_ZERO"])),
    st.just({}),
)
_CELL = st.one_of(
    st.just({}),
    st.builds(lambda effective: {"effectiveValue": effective}, _EFFECTIVE),
    st.builds(lambda effective, formula: {"effectiveValue": effective,
                                          "userEnteredValue": {"formulaValue": formula}},
              _EFFECTIVE, st.sampled_from(["", "=1+1", IMPORT, "=NOW()"])),
    st.builds(lambda formula: {"userEnteredValue": {"formulaValue": formula}}, st.sampled_from(["", "=A1"])),
    st.just({"userEnteredValue": {}}),
)
_ROW = st.one_of(st.just({}), st.builds(lambda cells: {"values": cells}, st.lists(_CELL, max_size=4)))
_GRID = st.builds(lambda rows, start: {"startRow": start, **meta(len(rows), 4), "rowData": rows},
                  st.lists(_ROW, max_size=5), st.integers(0, 3))


@settings(max_examples=300, deadline=None)
@given(st.lists(_GRID, min_size=1, max_size=3), st.booleans())
def test_an_answer_parsed_compactly_reads_as_the_same_answer_parsed_plainly(grids, formulas):
    body = {"properties": {"timeZone": "Europe/Moscow"},
            "sheets": [{"properties": {"title": "Stock", "index": 0}, "data": grids}]}
    asked = [f"Stock!A{n + 1}:D{n + 5}" for n in range(len(grids))]
    text = json.dumps(body)
    assert value_ranges_of(parse(text), asked, formulas=formulas) == value_ranges_of(json.loads(text), asked,
                                                                                     formulas=formulas)


def test_a_compact_answer_keeps_everything_but_plain_cells_and_metadata_as_parsed():
    compact = parse(json.dumps(BODY).encode())
    stock = compact["sheets"][0]
    assert stock["properties"] == {"title": "Stock", "index": 0}
    rows = stock["data"][0]["rowData"]
    assert rows[0]["values"] == ["A-1", 5]  # plain cells are their values
    assert rows[1]["values"][1] == BODY["sheets"][0]["data"][0]["rowData"][1]["values"][1]  # error, formula
    assert rows[2]["values"] == [False, {}]
    assert stock["data"][0]["rowMetadata"] == [None, None, None]  # only counted
    assert compact["namedRanges"] == BODY["namedRanges"]
