"""Pure pieces of the sandbox's data model: cell rendering, typed input, formulas, field masks."""

from datetime import UTC, date, datetime

import pytest

from sheet_sandbox.cells import (
    ERRORS,
    FORMATTED_STRING,
    FORMATTED_VALUE,
    FORMULA,
    UNFORMATTED_VALUE,
    Formatted,
    Formula,
    date_to_serial,
    datetime_to_serial,
    general_format,
    parse_typed_text,
    render,
)
from sheet_sandbox.fieldmask import FieldMaskError, apply_mask, parse_mask
from sheet_sandbox.formulas import evaluate


@pytest.mark.parametrize(
    ("value", "text"),
    [(2, "2"), (2.0, "2"), (1.5, "1.5"), (0.12, "0.12"), (0.0009765625, "0.0009765625"),
     (1 / 3, "0.3333333333"), (-4.25, "-4.25"), (1e16, "1E+16"), (123456789012, "123456789012")],
)
def test_general_format_matches_googles_automatic_format(value, text):
    assert general_format(value) == text


def test_date_serials_count_days_from_1899_12_30():
    assert date_to_serial(date(2020, 1, 1)) == 43831  # as recorded from Google
    assert date_to_serial(date(1999, 1, 2)) == 36162
    assert datetime_to_serial(datetime(2020, 1, 1, 12, tzinfo=UTC)) == 43831.5


@pytest.mark.parametrize(
    ("option", "dates", "expected"),
    [
        (FORMATTED_VALUE, "SERIAL_NUMBER", ["2", "2020-01-01", "TRUE", "#REF!", "1,234.50", "2"]),
        (UNFORMATTED_VALUE, "SERIAL_NUMBER", [2, 43831, True, "#REF!", 1234.5, 2]),
        (UNFORMATTED_VALUE, FORMATTED_STRING, [2, "2020-01-01", True, "#REF!", 1234.5, 2]),
        (FORMULA, "SERIAL_NUMBER", [2, 43831, True, "#REF!", 1234.5, "=4/2"]),
    ],
)
def test_render_options(option, dates, expected):
    cells = [2, Formatted(43831, "date"), True, ERRORS["#REF!"], Formatted(1234.5, "grouped", 2),
             Formula("=4/2", 2)]
    assert [render(cell, option, dates) for cell in cells] == expected


def test_empty_cell_renders_as_empty_string():
    assert render(None, UNFORMATTED_VALUE) == ""


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("12345", 12345),
        ("-1.5", -1.5),
        ("true", True),
        ("#N/A", ERRORS["#N/A"]),
        ("2,000,000.01", Formatted(2000000.01, "grouped", 2)),
        ("12%", Formatted(0.12, "percent", 0)),
        ("2020-01-01", Formatted(43831, "date")),
        ("1/2/2020", Formatted(43832, "us_date")),
        ("2024-02-31", None),  # not a date: stays text
        ("hello", None),
    ],
)
def test_typed_text_is_parsed_like_the_sheets_ui(typed, stored):
    assert parse_typed_text(typed) == stored


def _grid(cells: dict):
    def lookup(sheet, row, col):
        if sheet not in (None, "Other"):
            raise KeyError(sheet)
        return cells.get((sheet, row, col))

    return lookup


@pytest.mark.parametrize(
    ("formula", "value"),
    [
        ("= 1 / 1024", 0.0009765625),
        ("=4/2", 2),
        ("=2^3*(1+1)", 16),
        ("=-A1+B1", 1),
        ("=SUM(A1:B1)*2", 10),
        ("=AVERAGE(A1:B1, 10)", 5),
        ("=ROUND(2/3, 2)", 0.67),
        ("=Other!A1", "x"),
        ('="a"&"b"', "ab"),
        ("=A1>1", True),
        ("=1/0", ERRORS["#DIV/0!"]),
        ("=C1+1", ERRORS["#N/A"]),
        ("=Other!A1*2", ERRORS["#VALUE!"]),
        ("=Missing!A1", ERRORS["#REF!"]),
        ("=#REF!+1", ERRORS["#REF!"]),
        ("=VLOOKUP(A1, B1:C9, 2)", ERRORS["#NAME?"]),
        ("=1+", ERRORS["#ERROR!"]),
        ("=(1", ERRORS["#ERROR!"]),
    ],
)
def test_formulas_compute_plausible_values(formula, value):
    lookup = _grid({(None, 1, 1): 2, (None, 1, 2): 3, (None, 1, 3): ERRORS["#N/A"],
                    ("Other", 1, 1): "x"})
    result = evaluate(formula, lookup)
    assert result == value or (isinstance(value, float) and abs(result - value) < 1e-12)


def test_field_mask_keeps_named_paths_and_their_containers():
    body = {"spreadsheetId": "x", "sheets": [{"properties": {"title": "a", "index": 0}},
                                             {"properties": {"title": "b", "tabColorStyle": {}}}]}
    mask = parse_mask("sheets.properties.tabColorStyle")
    assert apply_mask(body, mask) == {"sheets": [{"properties": {}},
                                                 {"properties": {"tabColorStyle": {}}}]}


def test_field_mask_parentheses_and_slashes():
    body = {"kind": "k", "files": [{"id": 1, "name": "n", "mimeType": "m"}], "extra": 1}
    assert apply_mask(body, parse_mask("kind,files(id,name)")) == {
        "kind": "k", "files": [{"id": 1, "name": "n"}]}
    assert apply_mask(body, parse_mask("files/id")) == {"files": [{"id": 1}]}
    assert apply_mask(body, parse_mask("*")) == body


@pytest.mark.parametrize("text", ["files(id", "a,,b", "(x)"])
def test_field_mask_rejects_malformed_masks(text):
    with pytest.raises(FieldMaskError):
        parse_mask(text)
