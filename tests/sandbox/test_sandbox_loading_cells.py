"""Cells Google shows while IMPORTRANGE and GOOGLEFINANCE compute, and the errors they end in,
through the fake Sheets API: values as every render option gives them, details in grid data."""

from __future__ import annotations

import pytest
from sheets_api_fixtures import SPREADSHEET_ID

IMPORT = '=IMPORTRANGE("https://docs.google.com/spreadsheets/d/1src", "Stock!A1:B9")'
CONNECT = "You need to connect these sheets."
DETAILS = "sheets.data.rowData.values(effectiveValue,formattedValue,userEnteredValue)"


@pytest.fixture
def computing(sandbox):
    sandbox.store.put_control(SPREADSHEET_ID, {"title": "Store 7", "tabs": {"Stock": [
        ["SKU", "Qty", "Total"],
        [{"formula": IMPORT, "value": {"loading": True}}, {"loading": True}, "=B2*2"],
        [{"formula": IMPORT, "value": {"error": "#REF!", "message": CONNECT}}],
    ]}})
    return sandbox


@pytest.mark.parametrize("option", ["FORMATTED_VALUE", "UNFORMATTED_VALUE"])
def test_a_cell_still_computing_reads_as_loading_in_every_value_option(api, computing, option):
    # The API's ErrorType LOADING ("Corresponds to the Loading... state"); reads of such sheets
    # return "Loading..." (github.com/tidyverse/googlesheets4/issues/258, jsoma/tabletop/issues/60).
    values = api.values("Stock!A2:C3", valueRenderOption=option).json()["values"]
    assert values == [["Loading...", "Loading...", "Loading..."], ["#REF!"]]  # C2 depends on B2


def test_the_formula_option_shows_the_formulas_not_their_state(api, computing):
    values = api.values("Stock!A2:C3", valueRenderOption="FORMULA").json()["values"]
    assert values == [[IMPORT, "Loading...", "=B2*2"], [IMPORT]]


def test_grid_data_says_which_error_and_why(api, computing):
    body = api.sheets("GET", SPREADSHEET_ID, params={"ranges": "Stock!A2:A3", "fields": DETAILS}).json()
    [loading], [refused] = (row["values"] for row in body["sheets"][0]["data"][0]["rowData"])
    assert loading == {"userEnteredValue": {"formulaValue": IMPORT}, "formattedValue": "Loading...",
                       "effectiveValue": {"errorValue": {"type": "LOADING", "message": "Loading..."}}}
    assert refused["effectiveValue"] == {"errorValue": {"type": "REF", "message": CONNECT}}
    assert refused["formattedValue"] == "#REF!"


def test_loading_and_detailed_errors_round_trip_through_the_control_api(computing):
    row = computing.store.get_control(SPREADSHEET_ID)["tabs"]["Stock"][2]
    assert row == [{"formula": IMPORT, "value": {"error": "#REF!", "message": CONNECT}}]
    computing.store.put_control("copy", computing.store.get_control(SPREADSHEET_ID))
    assert computing.store.get_control("copy")["tabs"] == computing.store.get_control(SPREADSHEET_ID)["tabs"]


@pytest.mark.parametrize("cell", [{"loading": False}, {"error": "#OOPS", "message": "x"},
                                  {"error": "#REF!", "message": ""}])
def test_malformed_states_are_refused(sandbox, cell):
    with pytest.raises(ValueError, match="row 1 column 1"):
        sandbox.store.put_control("bad", {"title": "T", "tabs": {"A": [[cell]]}})
