"""Seeding spreadsheets in the control API's JSON and reading them back (SpreadsheetStore)."""

from __future__ import annotations

import pytest
from sheets_api_fixtures import SPREADSHEET_ID


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
