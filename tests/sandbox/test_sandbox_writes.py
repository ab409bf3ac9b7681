"""The fake Sheets v4 write endpoints (values update, batchUpdate, clear), through real HTTP
with ``requests``."""

from __future__ import annotations

import threading
from urllib.parse import quote

import requests
from sandbox_fixtures import drive_caught_up
from sheets_api_fixtures import SPREADSHEET_ID, google_error


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
    status, _, message = google_error(api.put("A1:B1", [["a", "b"], ["c", "d"]]))
    assert status == 400
    assert message == "Requested writing within range [Stock!A1:B1], but tried writing to row [2]"
    message = google_error(api.put("'Stock'!A1:B1", [["a", "b", "c"]]))[2]
    assert message == ("Requested writing within range [Stock!A1:B1], but tried writing to "
                       "column [C]")


def test_a_write_past_the_grid_is_refused_and_the_grid_does_not_grow(api):
    status, _, message = google_error(api.put("Stock!Z1", [["a", "b"]]))
    assert status == 400
    assert message == "Range (Stock!Z1:AA1) exceeds grid limits. Max rows: 1000, max columns: 26"
    assert "values" not in api.values("Stock!Z1").json()


def test_write_without_value_input_option_is_refused(api):
    response = api.sheets("PUT", f"{SPREADSHEET_ID}/values/Stock%21A1", json={"values": [["x"]]})
    assert google_error(response)[2] == "'valueInputOption' is required but not specified"


def test_values_that_are_not_a_list_of_lists_get_googles_protobuf_message(api):
    status, _, message = google_error(api.put("Stock!A1", "X"))
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
    assert google_error(response) == (400, "INVALID_ARGUMENT", "Unable to parse range: Nope!A1")
    assert "values" not in api.values("Stock!G1").json()


def test_batch_update_values_with_one_bad_value_list_writes_nothing(api):
    body = {"valueInputOption": "RAW", "data": [
        {"range": "Stock!G1", "values": [["a"]]},
        {"range": "Stock!G2", "values": ["not a row"]},
    ]}
    response = api.sheets("POST", f"{SPREADSHEET_ID}/values:batchUpdate", json=body)
    assert google_error(response)[0] == 400
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


def test_every_write_moves_modified_time(api, sandbox, google_clock):
    before = api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "modifiedTime"}).json()
    google_clock.advance(90)
    api.put("Stock!G1", [["x"]])
    drive_caught_up(sandbox)  # Drive shows the write at the file's next moment (feed_delay.py)
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
