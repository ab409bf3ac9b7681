"""The fake Sheets v4 / Drive v3 data endpoints, through real HTTP with ``requests``."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from urllib.parse import quote

import pytest
import requests
from gspread.auth import DEFAULT_SCOPES

from monitor.core.clock import ManualClock
from monitor.google.reader import build_gspread_client
from monitor.sandbox import running_sandbox
from monitor.sandbox.google import GoogleSandbox
from monitor.sandbox.http import HTTPServerThread

SPREADSHEET_ID = "1StockSheetForTestsxxxxxxxxxxxxxxxxxxxxxxxxx"[:44]
BIG = 10**9


@pytest.fixture
def clock():
    return ManualClock(datetime(2026, 1, 5, 3, 0, tzinfo=UTC))


@pytest.fixture
def sandbox(clock):
    sandbox = GoogleSandbox(clock=clock, require_auth=False, read_per_user=BIG,
                            read_per_project=BIG, write_per_user=BIG, write_per_project=BIG)
    sandbox.store.put_control(SPREADSHEET_ID, {
        "title": "Store 7",
        "tabs": {
            "Stock": [
                ["SKU", "Qty", "Price", "Updated", "Value"],
                ["A-1", 5, 2.5, {"date": "2020-01-01"}, "=B2*C2"],
                ["A-2", None, None, None, None],
                [],
                ["A-4", -3, "#REF!", {"datetime": "2026-01-05T02:30:00Z"}, True],
            ],
            "My tab": [["x"]],
        },
    })
    return sandbox


@pytest.fixture
def api(sandbox):
    with HTTPServerThread(sandbox) as server, requests.Session() as session:
        session.trust_env = False
        yield _Api(server.base_url, session)


class _Api:
    def __init__(self, base_url: str, session: requests.Session) -> None:
        self.base = base_url
        self.session = session

    def sheets(self, method: str, tail: str, **kwargs) -> requests.Response:
        return self.session.request(method, f"{self.base}/v4/spreadsheets/{tail}", timeout=5,
                                    **kwargs)

    def values(self, text: str, spreadsheet: str = SPREADSHEET_ID, **params) -> requests.Response:
        return self.sheets("GET", f"{spreadsheet}/values/{quote(text, safe='')}", params=params)

    def put(self, text: str, values, option: str = "RAW") -> requests.Response:
        return self.sheets("PUT", f"{SPREADSHEET_ID}/values/{quote(text, safe='')}",
                           params={"valueInputOption": option}, json={"values": values})

    def drive(self, method: str, tail: str = "", **kwargs) -> requests.Response:
        return self.session.request(method, f"{self.base}/drive/v3/files{tail}", timeout=5,
                                    **kwargs)


def _error(response: requests.Response) -> tuple[int, str, str]:
    error = response.json()["error"]
    assert error["code"] == response.status_code
    return response.status_code, error["status"], error["message"]


# -- reading ---------------------------------------------------------------------------------


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
        assert _error(api.values(text)) == (400, "INVALID_ARGUMENT",
                                            f"Unable to parse range: {text}")


@pytest.mark.parametrize(
    ("asked", "named"),
    [("Stock!A1:A1001", "Stock!A1:A1001"), ("Stock!1001:1002", "Stock!1001:1002"),
     ("Stock!AA1:AA", "Stock!AA1:AA"), ("'My tab'!A1001", "'My tab'!A1001")],
)
def test_a_range_past_the_grid_is_refused_naming_the_range_as_asked(api, asked, named):
    status, _, message = _error(api.values(asked))
    assert status == 400
    assert message == f"Range ({named}) exceeds grid limits. Max rows: 1000, max columns: 26"


def test_a_write_past_the_grid_is_refused_and_the_grid_does_not_grow(api):
    status, _, message = _error(api.put("Stock!Z1", [["a", "b"]]))
    assert status == 400
    assert message == "Range (Stock!Z1:AA1) exceeds grid limits. Max rows: 1000, max columns: 26"
    assert "values" not in api.values("Stock!Z1").json()


def test_unknown_spreadsheet_is_googles_404(api):
    assert _error(api.values("Stock!A1", spreadsheet="1nope")) == (
        404, "NOT_FOUND", "Requested entity was not found.")
    assert _error(api.sheets("GET", "1nope")) == (
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
    status, _, message = _error(api.values("Stock!A1", valueRenderOption="PRETTY"))
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


# -- writing ---------------------------------------------------------------------------------


def test_raw_write_then_read_back(api):
    response = api.put("Stock!G1", [["a", 1, True], ["", None, "=1+1"]])
    assert response.json() == {"spreadsheetId": SPREADSHEET_ID, "updatedRange": "Stock!G1:I2",
                               "updatedRows": 2, "updatedColumns": 3, "updatedCells": 5}
    assert api.values("Stock!G1:I2", valueRenderOption="UNFORMATTED_VALUE").json()["values"] == [
        ["a", 1, True], ["", "", "=1+1"]]  # RAW keeps "=1+1" as text


def test_user_entered_write_parses_like_the_sheets_ui(api):
    api.put("Stock!G1", [["12345", "2,000.5", "2020-01-01", "=G1*2", "'007", "false"]],
            option="USER_ENTERED")
    assert api.values("Stock!G1:L1", valueRenderOption="UNFORMATTED_VALUE").json()["values"] == [
        [12345, 2000.5, 43831, 24690, "007", False]]
    assert api.values("Stock!G1:L1").json()["values"] == [
        ["12345", "2,000.5", "2020-01-01", "24690", "007", "FALSE"]]  # decimals as typed


def test_formulas_recompute_when_their_inputs_change(api):
    api.put("Stock!B2", [[10]])
    assert api.values("Stock!E2").json()["values"] == [["25"]]


def test_writing_past_the_stated_range_is_refused_naming_it_in_echo_form(api):
    status, _, message = _error(api.put("A1:B1", [["a", "b"], ["c", "d"]]))
    assert status == 400
    assert message == "Requested writing within range [Stock!A1:B1], but tried writing to row [2]"
    message = _error(api.put("'Stock'!A1:B1", [["a", "b", "c"]]))[2]
    assert message == ("Requested writing within range [Stock!A1:B1], but tried writing to "
                       "column [C]")


def test_write_without_value_input_option_is_refused(api):
    response = api.sheets("PUT", f"{SPREADSHEET_ID}/values/Stock%21A1", json={"values": [["x"]]})
    assert _error(response)[2] == "'valueInputOption' is required but not specified"


def test_values_that_are_not_a_list_of_lists_get_googles_protobuf_message(api):
    status, _, message = _error(api.put("Stock!A1", "X"))
    assert status == 400
    assert message == ("Invalid value at 'data.values' (type.googleapis.com/"
                       'google.protobuf.ListValue), "X"')


def test_batch_update_values_counts_distinct_rows_and_columns(api):
    body = {"valueInputOption": "RAW", "data": [
        {"range": "Stock!G1:H1", "values": [["a", "b"]]},
        {"range": "Stock!G3:H3", "values": [["c", "d"]]},
    ]}
    answer = api.sheets("POST", f"{SPREADSHEET_ID}/values:batchUpdate", json=body).json()
    assert (answer["totalUpdatedRows"], answer["totalUpdatedColumns"],
            answer["totalUpdatedCells"], answer["totalUpdatedSheets"]) == (2, 2, 4, 1)
    assert [r["updatedRange"] for r in answer["responses"]] == ["Stock!G1:H1", "Stock!G3:H3"]


def test_batch_update_values_with_one_bad_range_writes_nothing(api):
    body = {"valueInputOption": "RAW", "data": [
        {"range": "Stock!G1", "values": [["a"]]},
        {"range": "Nope!A1", "values": [["b"]]},
    ]}
    response = api.sheets("POST", f"{SPREADSHEET_ID}/values:batchUpdate", json=body)
    assert _error(response) == (400, "INVALID_ARGUMENT", "Unable to parse range: Nope!A1")
    assert "values" not in api.values("Stock!G1").json()


def test_batch_update_values_with_one_bad_value_list_writes_nothing(api):
    body = {"valueInputOption": "RAW", "data": [
        {"range": "Stock!G1", "values": [["a"]]},
        {"range": "Stock!G2", "values": ["not a row"]},
    ]}
    response = api.sheets("POST", f"{SPREADSHEET_ID}/values:batchUpdate", json=body)
    assert _error(response)[0] == 400
    assert "values" not in api.values("Stock!G1").json()


def test_clear_and_batch_clear(api):
    cleared = api.sheets("POST", f"{SPREADSHEET_ID}/values/Stock%21A2%3AE2:clear").json()
    assert cleared == {"spreadsheetId": SPREADSHEET_ID, "clearedRange": "Stock!A2:E2"}
    batch = api.sheets("POST", f"{SPREADSHEET_ID}/values:batchClear",
                       json={"ranges": ["Stock!A5:B", "'My tab'"]}).json()
    assert batch["clearedRanges"] == ["Stock!A5:B1000", "'My tab'!A1:Z1000"]
    assert api.values("Stock!A1:E5").json()["values"] == [
        ["SKU", "Qty", "Price", "Updated", "Value"], [], ["A-2"], [],
        ["", "", "#REF!", "2026-01-05 02:30:00", "TRUE"]]
    assert "values" not in api.values("'My tab'").json()


def test_every_write_moves_modified_time(api, clock):
    before = api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "modifiedTime"}).json()
    clock.advance(90)
    api.put("Stock!G1", [["x"]])
    after = api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "modifiedTime"}).json()
    assert before == {"modifiedTime": "2026-01-05T03:00:00.000Z"}
    assert after == {"modifiedTime": "2026-01-05T03:01:30.000Z"}


def test_concurrent_writes_from_many_threads_all_land(api):
    def write(column: int) -> None:
        with requests.Session() as session:
            session.trust_env = False
            for row in range(1, 11):
                session.put(f"{api.base}/v4/spreadsheets/{SPREADSHEET_ID}/values/"
                            f"{quote(f'My tab!{chr(65 + column)}{row}', safe='')}",
                            params={"valueInputOption": "RAW"},
                            json={"values": [[f"{column}-{row}"]]}, timeout=5)

    threads = [threading.Thread(target=write, args=(c,)) for c in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    values = api.values("'My tab'!A1:F10").json()["values"]
    assert values == [[f"{c}-{r}" for c in range(6)] for r in range(1, 11)]


# -- request hygiene -------------------------------------------------------------------------


def test_malformed_json_body_gets_googles_400(api):
    response = api.sheets("PUT", f"{SPREADSHEET_ID}/values/Stock%21A1",
                          params={"valueInputOption": "RAW"}, data=b"{not json",
                          headers={"Content-Type": "application/json"})
    status, state, message = _error(response)
    assert (status, state) == (400, "INVALID_ARGUMENT")
    assert message.startswith("Invalid JSON payload received.")


def test_unknown_path_and_wrong_method_are_google_shaped(api):
    assert _error(api.sheets("GET", f"{SPREADSHEET_ID}/frobnicate"))[:2] == (404, "NOT_FOUND")
    assert _error(api.sheets("DELETE", SPREADSHEET_ID))[:2] == (405, "METHOD_NOT_ALLOWED")
    assert _error(api.session.get(f"{api.base}/nothing/here", timeout=5))[:2] == (404,
                                                                                    "NOT_FOUND")


# -- spreadsheets:batchUpdate ----------------------------------------------------------------


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


def test_formulas_see_a_deleted_tab_as_ref_error(api, sandbox):
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
    assert _error(unsupported)[0] == 400
    assert "mergeCells" in _error(unsupported)[2]
    unknown = _batch(api, rename, {"frobnicate": {}})
    assert _error(unknown)[2] == ('Invalid JSON payload received. Unknown name "frobnicate" at '
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
    assert _error(refused)[2] == ("Invalid requests[0].updateSheetProperties: "
                                  "You can't hide all the sheets in a document.")


# -- Drive -----------------------------------------------------------------------------------


def test_drive_create_get_list_and_delete(api, sandbox):
    created = api.drive("POST", json={"name": "New one",
                                      "mimeType": "application/vnd.google-apps.spreadsheet"})
    body = created.json()
    assert set(body) == {"kind", "id", "name", "mimeType"}
    assert len(body["id"]) == 44 and body["id"].startswith("1")
    meta = api.sheets("GET", body["id"]).json()
    assert [s["properties"]["sheetId"] for s in meta["sheets"]] == [0]
    listed = api.drive("GET", params={"q": "name = 'New one' and trashed = false",
                                      "fields": "files(id,name)"}).json()
    assert listed == {"files": [{"id": body["id"], "name": "New one"}]}
    deleted = api.drive("DELETE", f"/{body['id']}")
    assert (deleted.status_code, deleted.content) == (204, b"")
    missing = api.drive("GET", f"/{body['id']}")
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == f"File not found: {body['id']}."


def test_drive_list_pages_through_every_file(api, sandbox):
    for n in range(5):
        sandbox.store.put_control(f"sheet-{n}", {"title": f"S{n}", "tabs": {"A": []}})
    seen, token = [], None
    while True:
        params = {"pageSize": "2", "q": "mimeType = 'application/vnd.google-apps.spreadsheet'"}
        if token:
            params["pageToken"] = token
        page = api.drive("GET", params=params).json()
        seen += [f["id"] for f in page["files"]]
        token = page.get("nextPageToken")
        if not token:
            break
    assert sorted(seen) == sorted([SPREADSHEET_ID] + [f"sheet-{n}" for n in range(5)])


def test_drive_query_reads_quoted_names_holding_and(api, sandbox):
    sandbox.store.put_control("s-and", {"title": "Sales and Stock", "tabs": {"A": []}})
    q = ('mimeType="application/vnd.google-apps.spreadsheet" and name = "Sales and Stock" '
         "and modifiedTime > '2026-01-01T00:00:00'")
    listed = api.drive("GET", params={"q": q, "fields": "files(id)"}).json()
    assert listed == {"files": [{"id": "s-and"}]}


def test_drive_rejects_queries_it_cannot_read(api):
    response = api.drive("GET", params={"q": "starred = true"})
    assert response.status_code == 400
    assert response.json()["error"]["errors"][0]["location"] == "q"


# -- control format --------------------------------------------------------------------------


def test_control_payload_round_trips(sandbox):
    stored = sandbox.store.get_control(SPREADSHEET_ID)
    assert stored["tabs"]["Stock"][1] == ["A-1", 5, 2.5, {"date": "2020-01-01"},
                                          {"formula": "=B2*C2", "value": 12.5}]
    sandbox.store.put_control("copy", stored)
    assert sandbox.store.get_control("copy")["tabs"] == stored["tabs"]


def test_a_formula_with_a_stated_value_keeps_it(sandbox):
    sandbox.store.put_control("f", {"title": "F", "tabs": {"A": [
        [{"formula": "=VLOOKUP(1, B:C, 2)", "value": "#N/A"}]]}})
    cell = sandbox.store.get("f").tabs[0].cell(1, 1)
    assert cell.value.code == "#N/A"


@pytest.mark.parametrize(
    ("payload", "complaint"),
    [
        ({"tabs": {"A": []}}, '"title"'),
        ({"title": "T", "tabs": {}}, '"tabs"'),
        ({"title": "T", "tabs": {"A": [["ok", {"weird": 1}]]}}, "tabs['A'] row 1 column 2"),
        ({"title": "T", "tabs": {"A": {"rows": [["a", "b"]], "columnCount": 1}}}, "does not fit"),
        ({"title": "T", "tabs": {"A": []}, "modifiedTime": "yesterday"}, '"modifiedTime"'),
        ({"title": "T", "tabs": {"A": []}, "colour": "red"}, "unknown keys"),
    ],
)
def test_bad_control_payloads_say_what_is_wrong(sandbox, payload, complaint):
    with pytest.raises(ValueError, match=None) as info:
        sandbox.store.put_control("bad", payload)
    assert complaint in str(info.value)
    assert sandbox.store.get_control("bad") is None


# -- through gspread -------------------------------------------------------------------------


def test_gspread_drives_the_data_endpoints_like_google(tmp_path):
    """gspread's own worksheet API, over the seam and google-auth's real token flow."""
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False) as handle:
        (path,) = handle.write_credentials(tmp_path, 1)
        client = build_gspread_client(path, endpoint=handle.base_url, timeout=5,
                                      scopes=DEFAULT_SCOPES)
        spreadsheet = client.create("Stock 12")
        assert len(spreadsheet.id) == 44
        sheet = spreadsheet.sheet1
        sheet.update([["SKU", "Qty"], ["A-1", 3], ["A-2", "=B2*2"]], "A1",
                     value_input_option="USER_ENTERED")
        assert sheet.get_all_records() == [{"SKU": "A-1", "Qty": 3}, {"SKU": "A-2", "Qty": 6}]
        log = spreadsheet.add_worksheet("Log 2024", rows=5, cols=3)
        log.update_acell("C5", "last")
        assert log.acell("C5").value == "last"
        log.update_title("Log")
        log.resize(rows=3)
        answer = spreadsheet.values_batch_get(["Sheet1!A:A", "Log!A1:C3"],
                                              params={"valueRenderOption": "FORMULA"})
        assert [r.get("values") for r in answer["valueRanges"]] == [
            [["SKU"], ["A-1"], ["A-2"]], None]
        assert [w.title for w in client.open_by_key(spreadsheet.id).worksheets()] == [
            "Sheet1", "Log"]
        spreadsheet.del_worksheet(log)
        assert [s.id for s in client.openall("Stock 12")] == [spreadsheet.id]
        client.del_spreadsheet(spreadsheet.id)
        assert client.list_spreadsheet_files() == []
