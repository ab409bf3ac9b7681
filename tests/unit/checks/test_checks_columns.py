"""The column resolver: a table read in one ValueRange, its columns found by header or by letter."""

from __future__ import annotations

import pytest

from monitor.checks import ValuesStillLoading
from monitor.checks.columns import ColumnError, Table


def vr(range_: str, values=None, major: str = "ROWS") -> dict:
    body = {"range": range_, "majorDimension": major}
    if values is not None:
        body["values"] = values
    return body


STOCK = vr("Stock!A1:Z1000", [
    ["SKU", "Name", "Qty"],
    ["A-1", "bolt", 5],
    ["A-2", "", 7],          # an interior empty cell is ""
    [],                      # an interior empty row: a gap, not a record
    ["A-3", "nut"],          # trailing empty cells trimmed
])


def test_a_column_is_found_by_its_header_wherever_it_moved():
    moved = vr("Stock!A1:Z1000", [["Qty", "SKU"], [5, "A-1"]])
    assert Table.read(STOCK, header_row=1).column("Qty").letter == "C"
    assert Table.read(moved, header_row=1).column("Qty").letter == "A"


def test_a_column_has_one_cell_per_data_row_with_none_where_google_trimmed_it():
    qty = Table.read(STOCK, header_row=1).column("Qty")
    assert [(c.ref, c.value) for c in qty.cells] == [("Stock!C2", 5), ("Stock!C3", 7), ("Stock!C5", None)]
    assert qty.header.ref == "Stock!C1" and qty.label == "Qty"
    assert (qty.rows, qty.values, qty.cell(1).ref) == ((2, 3, 5), (5, 7, None), "Stock!C3")


def test_headers_match_despite_case_and_spacing_but_exact_text_wins():
    table = Table.read(vr("T!A1:C", [["qty ", "Qty"], [1, 2]]), header_row=1)
    assert table.column("Qty").letter == "B"
    assert Table.read(vr("T!A1:C", [["  QTY"], [1]]), header_row=1).column("Qty").letter == "A"


def test_a_missing_header_is_a_finding_that_lists_the_headers_found():
    with pytest.raises(ColumnError) as caught:
        Table.read(STOCK, header_row=1).column("Price")
    assert caught.value.message == (
        "column 'Price' not found in the header row (Stock!1:1); found: SKU, Name, Qty")
    assert str(caught.value.where) == "Stock!1:1"


def test_a_renamed_header_is_suggested():
    with pytest.raises(ColumnError, match=r"found: SKU, Quantity \(renamed to 'Quantity'\?\)"):
        Table.read(vr("Stock!A1:Z", [["SKU", "Quantity"]]), header_row=1).column("Quantiy")


def test_an_empty_header_row_is_said_so():
    with pytest.raises(ColumnError, match=r"^column 'Qty' not found: Stock!1:1 is empty$"):
        Table.read(vr("Stock!A1:Z1000"), header_row=1).column("Qty")


def test_a_header_written_twice_is_ambiguous():
    with pytest.raises(ColumnError, match=r"column 'Qty' appears 2 times in Stock!1:1 \(B1, D1\)"):
        Table.read(vr("Stock!A1:Z", [["SKU", "Qty", "x", "Qty"]]), header_row=1).column("Qty")


def test_without_a_header_row_columns_are_letters_and_every_row_is_data():
    table = Table.read(vr("Stock!B2:D", [["x", 1], ["y", 2]]))
    assert [c.value for c in table.column("C").cells] == [1, 2]
    assert table.data_rows == (2, 3)
    with pytest.raises(ColumnError, match="'Price' is not a column letter, and without a header row"):
        table.column("Price")
    with pytest.raises(ColumnError, match="column F is outside the range read"):
        table.column("F")


def test_a_header_row_below_the_range_start_and_columns_major_values():
    table = Table.read(vr("'My tab'!A3:B", [["title"], ["Id", "Qty"], [1, 2], [3]], "ROWS"), header_row=4)
    assert table.header_ref == "'My tab'!4:4"
    qty = table.column("Qty").cells
    assert [(c.ref, c.value) for c in qty] == [("'My tab'!B5", 2), ("'My tab'!B6", None)]
    by_columns = Table.read(vr("T!A1:B3", [["Id", 1, 3], ["Qty", 2]], "COLUMNS"), header_row=1)
    assert [c.value for c in by_columns.column("Qty").cells] == [2, None]


def test_loading_values_anywhere_in_the_table_retry_the_read():
    with pytest.raises(ValuesStillLoading):
        Table.read(vr("T!A1:B", [["Id", "Qty"], [1, "Loading..."]]), header_row=1)
