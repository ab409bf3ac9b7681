"""Named ranges in the fake Sheets API: seeded through the control API, resolved by reads and writes
the way Google resolves them, shown by spreadsheets.get as Google shows them."""

from __future__ import annotations

import pytest
from sheets_api_fixtures import SPREADSHEET_ID, google_error

ROWS = [["SKU", "Qty", "Price"], ["A-1", 5, 2.5], ["A-2", 7, 3]]


@pytest.fixture
def named(sandbox):
    sandbox.store.put_control(SPREADSHEET_ID, {
        "title": "Store 7",
        "tabs": {"Sheet1": ROWS, "Other": [["x"]]},
        "namedRanges": {"NamedRange": "Sheet1!B1:C3", "Everything": "Sheet1", "Other": "Sheet1!A1"},
    })
    return sandbox


@pytest.mark.parametrize("asked", ["'Sheet1'!NamedRange", "Sheet1!NamedRange", "NamedRange",
                                   "namedrange"])
def test_a_named_range_reads_as_the_box_it_names(api, named, asked):
    # The recorded read of 'Sheet1'!NamedRange (gspread's cassette
    # WorksheetTest.test_get_values_merge_cells_with_named_range) echoed "Sheet1!B1:C3".
    body = api.values(asked).json()
    assert body == {"range": "Sheet1!B1:C3", "majorDimension": "ROWS",
                    "values": [["Qty", "Price"], ["5", "2.5"], ["7", "3"]]}


def test_a_bare_word_is_the_named_range_and_a_quoted_one_the_tab(api, named):
    # The Sheets API guide, "A1 notation": with a named range called Sheet1, Sheet1 is the named
    # range and 'Sheet1' the sheet. Here a named range shares its name with the tab "Other".
    assert api.values("Other").json()["range"] == "Sheet1!A1"
    assert api.values("'Other'").json()["range"] == "Other!A1:Z1000"
    assert api.values("Everything").json()["range"] == "Sheet1!A1:Z1000"


@pytest.mark.parametrize("asked", ["Other!NamedRange", "Sheet1!Missing", "'Missing'"])
def test_a_name_on_another_tab_or_no_name_at_all_is_unable_to_parse(api, named, asked):
    assert google_error(api.values(asked)) == (400, "INVALID_ARGUMENT", f"Unable to parse range: {asked}")


def test_spreadsheets_get_lists_named_ranges_as_google_does(api, named):
    # Shape and order as recorded (CellTest.test_define_named_range, fields=namedRanges): the
    # GridRange leaves out sheetId 0 and open sides.
    body = api.sheets("GET", SPREADSHEET_ID, params={"fields": "namedRanges"}).json()
    ranges = {item["name"]: item for item in body["namedRanges"]}
    assert ranges["NamedRange"]["range"] == {"startRowIndex": 0, "endRowIndex": 3,
                                             "startColumnIndex": 1, "endColumnIndex": 3}
    assert ranges["Everything"]["range"] == {}
    assert all(item["namedRangeId"].isdigit() for item in body["namedRanges"])
    whole = api.sheets("GET", SPREADSHEET_ID).json()
    assert list(whole) == ["spreadsheetId", "properties", "sheets", "namedRanges", "spreadsheetUrl"]


def test_a_write_through_a_named_range_stays_inside_its_box(api, named):
    response = api.put("NamedRange", [["Count", "Cost"]])
    assert response.json()["updatedRange"] == "Sheet1!B1:C1"
    spill = api.put("NamedRange", [["a"], ["b"], ["c"], ["d"]])
    assert google_error(spill)[2] == "Requested writing within range [Sheet1!B1:C3], but tried " \
                                     "writing to row [4]"


def test_named_ranges_follow_a_renamed_tab_and_round_trip_through_the_control_api(api, named):
    rename = {"requests": [{"updateSheetProperties": {"properties": {"sheetId": 0, "title": "Stock"},
                                                      "fields": "title"}}]}
    assert api.sheets("POST", f"{SPREADSHEET_ID}:batchUpdate", json=rename).status_code == 200
    assert api.values("NamedRange").json()["range"] == "Stock!B1:C3"
    payload = named.store.get_control(SPREADSHEET_ID)
    assert payload["namedRanges"] == {"NamedRange": "Stock!B1:C3", "Everything": "Stock",
                                      "Other": "Stock!A1"}
    named.store.put_control("copy", payload)
    assert named.store.get_control("copy")["namedRanges"] == payload["namedRanges"]


@pytest.mark.parametrize(("names", "complaint"), [
    ({"A1": "Sheet1!A1"}, "reads as no cell reference"),
    ({"R1C1": "Sheet1!A1"}, "reads as no cell reference"),
    ({"1st": "Sheet1!A1"}, "starts with no digit"),
    ({"True": "Sheet1!A1"}, "TRUE/FALSE"),
    ({"has space": "Sheet1!A1"}, "letters, digits and underscores"),
    ({"Total": "Nope!A1"}, "is not an A1 range of one of the tabs"),
    ({"Total": "Sheet1!A1", "TOTAL": "Sheet1!B1"}, "the name is taken"),
    ([], '"namedRanges" must map names'),
])
def test_bad_named_ranges_are_refused_saying_why(sandbox, names, complaint):
    with pytest.raises(ValueError) as refused:
        sandbox.store.put_control("bad", {"title": "T", "tabs": {"Sheet1": []}, "namedRanges": names})
    assert complaint in str(refused.value)
