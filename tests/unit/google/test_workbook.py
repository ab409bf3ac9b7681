"""A whole spreadsheet's grid data as a Workbook: values as the values API renders them, a number
shown as a date marked as one, rows placed where the grid starts."""

from __future__ import annotations

from datetime import UTC, datetime

from suggest_catching import Shelf

from monitor.google.workbook import workbook_of
from monitor.suggest import Dated
from sheet_sandbox import dataset


def test_values_errors_and_dates_are_told_apart():
    cells = [{"effectiveValue": {"stringValue": "SKU"}, "formattedValue": "SKU"},
             {"effectiveValue": {"numberValue": 46082.5}, "formattedValue": "2026-03-01 12:00:00"},
             {"effectiveValue": {"numberValue": 46082.5}, "formattedValue": "46,082.50"},
             {"effectiveValue": {"errorValue": {"type": "DIVIDE_BY_ZERO"}}},
             {"effectiveValue": {"boolValue": True}},
             {}]
    grid = {"startRow": 1, "startColumn": 1, "rowData": [{"values": cells}, {}]}
    body = {"spreadsheetId": "1x", "properties": {"title": "Store", "timeZone": "Europe/Moscow"},
            "sheets": [{"properties": {"title": "Stock"}, "data": [grid]},
                       {"properties": {"title": "Empty"}, "data": [{}]}]}
    book = workbook_of(body)
    assert (book.id, book.title, book.time_zone) == ("1x", "Store", "Europe/Moscow")
    stock, empty = book.tabs
    assert stock.rows == ((), ("", "SKU", 46082.5, 46082.5, "#DIV/0!", True))
    assert isinstance(stock.rows[1][2], Dated) and not isinstance(stock.rows[1][3], Dated)
    assert empty.rows == ()


def test_a_generated_store_as_the_sandbox_serves_it():
    now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    data = dataset.generate(3, seed=1, now=now)
    entry = data.sheets[0]
    shelf = Shelf(now)
    shelf.put(entry.id, data.payloads[entry.id])
    book = shelf.workbook(entry.id)
    assert [tab.title for tab in book.tabs] == ["Stock", "Sales", "Notes"]
    header, first = book.tabs[0].rows[:2]
    assert header == dataset.STOCK_HEADER
    updated, price = first[4], first[3]
    assert isinstance(updated, Dated) and not isinstance(price, Dated)
