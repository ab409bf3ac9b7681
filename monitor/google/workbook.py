"""A whole spreadsheet in one ``spreadsheets.get`` with grid data, turned into a ``Workbook``. Pure.

Asked without ``ranges``, Google answers every tab with one GridData each, from A1 to its used
extent (``includeGridData``, Sheets API reference, spreadsheets.get). A cell's ``effectiveValue`` is
what the values API renders unformatted; its ``formattedValue`` is what the spreadsheet shows, which
tells a date serial ("2026-01-05 14:30:00", "1/5/2026") from a quantity (45123.5): the one thing
the values alone cannot tell, and what a freshness check must know.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from monitor.checks.dates import MAX_SERIAL
from monitor.checks.imports import CODES
from monitor.suggest.workbook import Dated, TabValues, Workbook

FIELDS = ("spreadsheetId,properties(title,timeZone),"
          "sheets(properties(title),data(startRow,startColumn,rowData(values(effectiveValue,formattedValue))))")
# What a date or a time looks like shown: 2026-01-05, 5.1.2026, 1/5/2026, 14:30. Not a month's
# name: "5 pcs" is a number shown with its unit.
_SHOWN_AS_DATE = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d{1,2}:\d{2}")


def workbook_of(body: Mapping[str, Any]) -> Workbook:
    """The workbook of an answer asked with :data:`FIELDS`; KeyError/ValueError when it is not one
    (classified by the reader as an unreadable answer)."""
    properties = body["properties"]
    tabs = tuple(_tab(sheet) for sheet in body.get("sheets") or ())
    return Workbook(str(body["spreadsheetId"]), str(properties.get("title", "")),
                    str(properties["timeZone"]), tabs)


def _tab(sheet: Mapping[str, Any]) -> TabValues:
    title = str((sheet.get("properties") or {}).get("title", ""))
    rows: list[tuple[Any, ...]] = []
    for grid in sheet.get("data") or ():
        start_row, start_col = grid.get("startRow", 0), grid.get("startColumn", 0)
        rows.extend(() for _ in range(start_row - len(rows)))
        for row in grid.get("rowData") or ():
            cells = [_value(cell) for cell in row.get("values") or ()]
            while cells and cells[-1] == "":
                cells.pop()
            rows.append(tuple([""] * start_col + cells) if cells else ())
    while rows and not rows[-1]:
        rows.pop()
    return TabValues(title, tuple(rows))


def _value(cell: Mapping[str, Any]) -> Any:
    effective = cell.get("effectiveValue") or {}
    if "errorValue" in effective:
        return CODES.get(str((effective["errorValue"] or {}).get("type", "ERROR")), "#ERROR!")
    if "numberValue" in effective:
        number = effective["numberValue"]
        shown = cell.get("formattedValue")
        if isinstance(shown, str) and 0 < number <= MAX_SERIAL and _SHOWN_AS_DATE.search(shown):
            return Dated(number)
        return number
    for key in ("stringValue", "boolValue"):
        if key in effective:
            return effective[key]
    return ""
