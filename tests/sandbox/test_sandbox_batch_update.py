"""The fake ``spreadsheets:batchUpdate`` (tabs and spreadsheet properties), through real HTTP
with ``requests``."""

from __future__ import annotations

from sheets_api_fixtures import SPREADSHEET_ID, google_error


def _batch(api, *requests_):
    return api.sheets("POST", f"{SPREADSHEET_ID}:batchUpdate",
                      json={"requests": list(requests_)})


def test_add_rename_resize_and_delete_a_tab(api):
    reply = _batch(api, {"addSheet": {"properties": {"title": "Log", "gridProperties": {
        "rowCount": 10, "columnCount": 3}}}}).json()
    props = reply["replies"][0]["addSheet"]["properties"]
    assert (props["title"], props["index"], props["gridProperties"]) == (
        "Log", 2, {"rowCount": 10, "columnCount": 3})
    sheet_id = props["sheetId"]
    assert 0 < sheet_id < 2**31
    assert api.values("Log").json()["range"] == "Log!A1:C10"
    _batch(api, {"updateSheetProperties": {"properties": {"sheetId": sheet_id, "title": "Log 2"},
                                           "fields": "title"}})
    assert api.values("'Log 2'!A1").status_code == 200
    assert _batch(api, {"deleteSheet": {"sheetId": sheet_id}}).json()["replies"] == [{}]
    assert api.values("'Log 2'!A1").status_code == 400


def test_shrinking_a_grid_drops_the_cells_outside_it(api):
    _batch(api, {"updateSheetProperties": {
        "properties": {"sheetId": 0, "gridProperties": {"rowCount": 2, "columnCount": 2}},
        "fields": "gridProperties/rowCount,gridProperties/columnCount"}})
    assert api.values("Stock").json() == {"range": "Stock!A1:B2", "majorDimension": "ROWS",
                                          "values": [["SKU", "Qty"], ["A-1", "5"]]}


def test_formulas_see_a_deleted_tab_as_refgoogle_error(api, sandbox):
    sandbox.store.put_control("f", {"title": "F", "tabs": {"Main": [["=Other!A1*2"]],
                                                           "Other": [[21]]}})
    assert api.values("Main!A1", spreadsheet="f").json()["values"] == [["42"]]
    other = sandbox.store.get("f").tabs[1].sheet_id
    api.sheets("POST", "f:batchUpdate", json={"requests": [{"deleteSheet": {"sheetId": other}}]})
    assert api.values("Main!A1", spreadsheet="f").json()["values"] == [["#REF!"]]


def test_unsupported_and_unknown_request_kinds_are_400_and_change_nothing(api):
    rename = {"updateSpreadsheetProperties": {"properties": {"title": "Renamed"},
                                              "fields": "title"}}
    unsupported = _batch(api, rename, {"mergeCells": {}})
    assert google_error(unsupported)[0] == 400
    assert "mergeCells" in google_error(unsupported)[2]
    unknown = _batch(api, rename, {"frobnicate": {}})
    assert google_error(unknown)[2] == ('Invalid JSON payload received. Unknown name "frobnicate" at '
                                  "'requests[1]': Cannot find field.")
    title = api.sheets("GET", SPREADSHEET_ID).json()["properties"]["title"]
    assert title == "Store 7"


def test_hiding_every_tab_is_refused_like_google(api):
    response = _batch(api, {"updateSheetProperties": {"properties": {"sheetId": 0, "hidden": True},
                                                      "fields": "hidden"}})
    assert response.status_code == 200
    my_tab = api.sheets("GET", SPREADSHEET_ID).json()["sheets"][1]["properties"]["sheetId"]
    refused = _batch(api, {"updateSheetProperties": {
        "properties": {"sheetId": my_tab, "hidden": True}, "fields": "hidden"}})
    assert google_error(refused)[2] == ("Invalid requests[0].updateSheetProperties: "
                                  "You can't hide all the sheets in a document.")
