"""The fake Sheets v4 read endpoints (values, batchGet, spreadsheets.get) and how any request
is refused, through real HTTP with ``requests``."""

from __future__ import annotations

import pytest
from sheets_api_fixtures import SPREADSHEET_ID, google_error


def test_values_are_trimmed_and_the_range_echoed_in_googles_form(api):
    body = api.values("Stock!A1:E6").json()
    assert body == {
        "range": "Stock!A1:E6",
        "majorDimension": "ROWS",
        "values": [
            ["SKU", "Qty", "Price", "Updated", "Value"],
            ["A-1", "5", "2.5", "2020-01-01", "12.5"],
            ["A-2"],
            [],
            ["A-4", "-3", "#REF!", "2026-01-05 02:30:00", "TRUE"],
        ],
    }


def test_an_empty_range_has_range_and_major_dimension_but_no_values(api):
    assert api.values("Stock!G1:H3").json() == {"range": "Stock!G1:H3", "majorDimension": "ROWS"}


@pytest.mark.parametrize(
    ("asked", "echoed"),
    [
        ("Stock!B2:B", "Stock!B2:B1000"),
        ("Stock!2:3", "Stock!A2:Z3"),
        ("Stock!C:D", "Stock!C1:D1000"),
        ("Stock", "Stock!A1:Z1000"),
        ("'Stock'!E5:A1", "Stock!A1:E5"),
        ("stock!A1:A1", "Stock!A1"),
        ("A1:B2", "Stock!A1:B2"),
        ("My tab!A1", "'My tab'!A1"),
    ],
)
def test_open_and_odd_ranges_are_normalised_and_clamped_to_the_grid(api, asked, echoed):
    response = api.values(asked)
    assert response.status_code == 200
    assert response.json()["range"] == echoed


def test_unknown_tab_or_unparseable_range_is_unable_to_parse(api):
    for text in ["Nope!A1:B2", "Stock!A1:B2:C3", "Stock!NamedRange"]:
        assert google_error(api.values(text)) == (400, "INVALID_ARGUMENT",
                                            f"Unable to parse range: {text}")


@pytest.mark.parametrize(
    ("asked", "named"),
    [("Stock!A1:A1001", "Stock!A1:A1001"), ("Stock!1001:1002", "Stock!1001:1002"),
     ("Stock!AA1:AA", "Stock!AA1:AA"), ("'My tab'!A1001", "'My tab'!A1001")],
)
def test_a_range_past_the_grid_is_refused_naming_the_range_as_asked(api, asked, named):
    status, _, message = google_error(api.values(asked))
    assert status == 400
    assert message == f"Range ({named}) exceeds grid limits. Max rows: 1000, max columns: 26"


def test_unknown_spreadsheet_is_googles_404(api):
    assert google_error(api.values("Stock!A1", spreadsheet="1nope")) == (
        404, "NOT_FOUND", "Requested entity was not found.")
    assert google_error(api.sheets("GET", "1nope")) == (
        404, "NOT_FOUND", "Requested entity was not found.")


@pytest.mark.parametrize(
    ("params", "row"),
    [
        ({"valueRenderOption": "UNFORMATTED_VALUE"}, ["A-1", 5, 2.5, 43831, 12.5]),
        ({"valueRenderOption": "UNFORMATTED_VALUE", "dateTimeRenderOption": "FORMATTED_STRING"},
         ["A-1", 5, 2.5, "2020-01-01", 12.5]),
        ({"valueRenderOption": "FORMULA"}, ["A-1", 5, 2.5, 43831, "=B2*C2"]),
        ({}, ["A-1", "5", "2.5", "2020-01-01", "12.5"]),
    ],
)
def test_value_render_options(api, params, row):
    assert api.values("Stock!A2:E2", **params).json()["values"] == [row]


def test_bad_render_option_names_the_field(api):
    status, _, message = google_error(api.values("Stock!A1", valueRenderOption="PRETTY"))
    assert status == 400
    assert "value_render_option" in message and '"PRETTY"' in message


def test_columns_major_dimension_transposes_and_trims(api):
    body = api.values("Stock!A1:C3", majorDimension="COLUMNS").json()
    assert body["majorDimension"] == "COLUMNS"
    assert body["values"] == [["SKU", "A-1", "A-2"], ["Qty", "5"], ["Price", "2.5"]]


def test_batch_get_answers_each_range_in_order(api):
    body = api.sheets("GET", f"{SPREADSHEET_ID}/values:batchGet",
                      params=[("ranges", "Stock!A1"), ("ranges", "'My tab'!A1:B2"),
                              ("valueRenderOption", "UNFORMATTED_VALUE")]).json()
    assert body == {"spreadsheetId": SPREADSHEET_ID, "valueRanges": [
        {"range": "Stock!A1", "majorDimension": "ROWS", "values": [["SKU"]]},
        {"range": "'My tab'!A1:B2", "majorDimension": "ROWS", "values": [["x"]]},
    ]}


def test_spreadsheet_metadata_looks_like_googles(api):
    body = api.sheets("GET", SPREADSHEET_ID, params={"includeGridData": "false"}).json()
    assert body["spreadsheetId"] == SPREADSHEET_ID
    assert body["properties"]["title"] == "Store 7"
    assert body["properties"]["timeZone"] == "Etc/GMT"
    assert body["properties"]["defaultFormat"]["textFormat"]["fontFamily"] == "arial,sans,sans-serif"
    first, second = body["sheets"]
    assert first["properties"] == {"sheetId": 0, "title": "Stock", "index": 0, "sheetType": "GRID",
                                   "gridProperties": {"rowCount": 1000, "columnCount": 26}}
    assert second["properties"]["index"] == 1 and second["properties"]["sheetId"] > 0
    assert body["spreadsheetUrl"].endswith(f"/d/{SPREADSHEET_ID}/edit")


def test_spreadsheet_fields_mask_and_grid_data(api):
    masked = api.sheets("GET", SPREADSHEET_ID, params={"fields": "sheets.properties.title"}).json()
    assert masked == {"sheets": [{"properties": {"title": "Stock"}},
                                 {"properties": {"title": "My tab"}}]}
    data = api.sheets("GET", SPREADSHEET_ID, params={"ranges": "Stock!B2:C2",
                                                     "includeGridData": "true"}).json()
    assert len(data["sheets"]) == 1  # only the tabs the ranges name
    grid = data["sheets"][0]["data"][0]
    assert (grid["startRow"], grid["startColumn"]) == (1, 1)
    assert grid["rowData"] == [{"values": [
        {"userEnteredValue": {"numberValue": 5}, "effectiveValue": {"numberValue": 5},
         "formattedValue": "5"},
        {"userEnteredValue": {"numberValue": 2.5}, "effectiveValue": {"numberValue": 2.5},
         "formattedValue": "2.5"},
    ]}]


# -- request hygiene -------------------------------------------------------------------------


def test_malformed_json_body_gets_googles_400(api):
    response = api.sheets("PUT", f"{SPREADSHEET_ID}/values/Stock%21A1",
                          params={"valueInputOption": "RAW"}, data=b"{not json",
                          headers={"Content-Type": "application/json"})
    status, state, message = google_error(response)
    assert (status, state) == (400, "INVALID_ARGUMENT")
    assert message.startswith("Invalid JSON payload received.")


def test_unknown_path_and_wrong_method_are_google_shaped(api):
    assert google_error(api.sheets("GET", f"{SPREADSHEET_ID}/frobnicate"))[:2] == (404, "NOT_FOUND")
    assert google_error(api.sheets("DELETE", SPREADSHEET_ID))[:2] == (405, "METHOD_NOT_ALLOWED")
    assert google_error(api.session.get(f"{api.base}/nothing/here", timeout=5))[:2] == (404,
                                                                                    "NOT_FOUND")
