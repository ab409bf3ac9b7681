"""A ``spreadsheets.get`` with grid data, turned into the ValueRanges a ``values:batchGet`` gives and
the details of every error cell. Pure: no I/O.

Why: a values read shows an error cell only by its code; the grid data says which error it is
(``effectiveValue.errorValue``: type and message) and which formula shows it. ``effectiveValue`` is
what ``UNFORMATTED_VALUE`` with ``SERIAL_NUMBER`` renders (numbers, booleans, text, date serials), so
one request answers both, and the checks judge the same values either way.

Google's answer lists the tabs the ranges name, in the spreadsheet's order, each with one GridData
per range on it, in the order they were asked (``startRow``/``startColumn`` absent when 0, one
``rowMetadata`` / ``columnMetadata`` entry per row and column of the range). Each range asked is
matched to its tab: a named range's (``namedRanges``: a bare name is the named range when there is
one, as Google resolves it), the tab it names, or the first tab.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from monitor.checks.imports import CODES, CellError
from monitor.core.a1 import A1Error, A1Range, CellRef, format_a1, parse_a1, parse_named

# Only what the conversion needs: the tabs' titles and order, the named ranges' tabs, and per cell
# its effective value and formula.
FIELDS = ("namedRanges(name,range(sheetId)),"
          "sheets(properties(sheetId,title,index),data(startRow,startColumn,rowMetadata(pixelSize),"
          "columnMetadata(pixelSize),rowData(values(effectiveValue,userEnteredValue(formulaValue)))))")
# The values alone (no formulas): what a ``values:batchGet`` would give, from the same request as the
# spreadsheet's properties (its time zone).
VALUE_FIELDS = FIELDS.replace(",userEnteredValue(formulaValue)", "")


# An ExtendedValue holding a plain value; a cell's own keys in either mask.
_PLAIN_KEYS = frozenset({"numberValue", "stringValue", "boolValue"})
_CELL_KEYS = frozenset({"effectiveValue", "userEnteredValue"})


def parse(content: bytes | str) -> Any:
    """A grid answer's JSON, each cell without an error or a formula parsed as its plain value and
    each row's or column's metadata as None (only counted), as the parser makes them: a cell was
    two dicts (~400 B), and a 500-row answer held ~3 MB at once while parsed whole, where its values
    are ~0.3 MB. ``value_ranges_of`` reads the result as it reads the answer parsed plainly."""
    return json.loads(content, object_hook=_compact)


def _compact(obj: dict) -> Any:
    """One JSON object of a grid answer, innermost first (``json``'s ``object_hook``): see parse."""
    if len(obj) == 1:
        key = next(iter(obj))
        if key in _PLAIN_KEYS:
            return obj[key]  # an effectiveValue; its cell (below) becomes this value
        if key == "pixelSize":
            return None
    if obj and obj.keys() <= _CELL_KEYS:
        effective, entered = obj.get("effectiveValue"), obj.get("userEnteredValue")
        plain = effective is None or not isinstance(effective, Mapping)
        if plain and (entered is None or (isinstance(entered, Mapping) and not entered.get("formulaValue"))):
            return "" if effective is None else effective
    return obj


class UnreadableGrid(ValueError):
    """The answer does not hold one GridData per range asked."""


class GridValues(NamedTuple):
    """A grid answer as the values API would give it, twice: rendered as values and as formulas."""

    value_ranges: list[dict]  # as ``UNFORMATTED_VALUE`` renders them
    errors: tuple[CellError, ...]  # every error cell, with its type, message and formula
    formula_ranges: list[dict]  # as ``FORMULA`` renders them: a formula cell shows its formula text


def value_ranges_of(body: Mapping[str, Any], ranges: Sequence[str], formulas: bool = True) -> GridValues:
    """One ValueRange per range of ``ranges`` (in order) from the answer ``body``, the error cells
    found in them, and the same ranges as formulas (none unless ``formulas``: an answer of
    :data:`VALUE_FIELDS` has none); UnreadableGrid when ranges and grid data cannot be matched."""
    sheets = list(body.get("sheets") or ())
    named = {item.get("name", "").casefold(): (item.get("range") or {}).get("sheetId", 0)
             for item in body.get("namedRanges") or ()}
    waiting: dict[int, list[int]] = {}  # sheetId -> positions in ``ranges``, in the order asked
    for position, text in enumerate(ranges):
        waiting.setdefault(_sheet_of(text, sheets, named), []).append(position)
    found: dict[int, tuple[str, Mapping]] = {}
    for sheet in sheets:
        props = _properties(sheet)
        data = list(sheet.get("data") or ())
        positions = waiting.pop(props["sheetId"], [])
        if len(positions) != len(data):
            raise UnreadableGrid(f"tab {props['title']!r}: {len(data)} grids for {len(positions)} ranges")
        for position, grid in zip(positions, data, strict=True):
            found[position] = (props["title"], grid)
    if waiting or len(found) != len(ranges):
        raise UnreadableGrid(f"no grid for {[ranges[p] for ps in waiting.values() for p in ps]}")
    errors: list[CellError] = []
    value_ranges = [_value_range(*found[position], errors) for position in range(len(ranges))]
    formula_ranges = [_value_range(*found[position], [], formulas=True)
                      for position in range(len(ranges))] if formulas else []
    return GridValues(value_ranges, tuple(errors), formula_ranges)


def _properties(sheet: Mapping) -> dict:
    props = dict(sheet.get("properties") or {})
    props.setdefault("sheetId", 0)  # proto3 JSON leaves the first tab's 0 out
    props.setdefault("index", 0)
    props.setdefault("title", "")
    return props


def _sheet_of(text: str, sheets: Sequence[Mapping], named: Mapping[str, int]) -> int:
    """The sheetId of the tab range ``text`` reads, as Google resolves it (see the module doc)."""
    ref = parse_named(text)
    if ref is not None and ref.name.casefold() in named:
        return named[ref.name.casefold()]
    try:
        sheet_name = parse_a1(text).sheet
    except A1Error:
        sheet_name = None if ref is None else ref.sheet
    props = [_properties(sheet) for sheet in sheets]
    if sheet_name is None:
        return min(props, key=lambda p: p["index"])["sheetId"] if props else 0
    exact = [p["sheetId"] for p in props if p["title"] == sheet_name]
    folded = [p["sheetId"] for p in props if p["title"].casefold() == sheet_name.casefold()]
    if not (exact or folded):
        raise UnreadableGrid(f"no tab for range {text!r}")
    return (exact or folded)[0]


def _value_range(title: str, grid: Mapping, errors: list[CellError], formulas: bool = False) -> dict:
    """The ValueRange of one GridData, trimmed as the values API trims; its errors added to ``errors``.
    ``formulas``: a formula cell shows its formula, as ``FORMULA`` rendering does."""
    start_row, start_col = grid.get("startRow", 0) + 1, grid.get("startColumn", 0) + 1
    height = len(grid.get("rowMetadata") or ()) or 1
    width = len(grid.get("columnMetadata") or ()) or 1
    rows = []
    for r, row in enumerate(grid.get("rowData") or ()):
        rows.append(_row(row.get("values") or (), title, start_row + r, start_col, errors, formulas))
    while rows and not rows[-1]:
        rows.pop()
    echo = A1Range(title, start_row, start_col, start_row + height - 1, start_col + width - 1)
    value_range: dict = {"range": format_a1(echo), "majorDimension": "ROWS"}
    if rows:
        value_range["values"] = rows
    return value_range


def _row(cells: Iterable[Mapping], title: str, row: int, start_col: int, errors: list[CellError],
         formulas: bool) -> list:
    values = []
    for c, cell in enumerate(cells):
        if not isinstance(cell, Mapping):  # parsed as its plain value (see parse)
            values.append(cell)
            continue
        effective = cell.get("effectiveValue")
        formula = (cell.get("userEnteredValue") or {}).get("formulaValue")
        if formulas and formula:
            values.append(formula)
        elif effective is not None and not isinstance(effective, Mapping):  # see parse
            values.append(effective)
        elif "errorValue" in (effective := effective or {}):
            error = effective["errorValue"] or {}
            kind = str(error.get("type", "ERROR"))
            errors.append(CellError(CellRef(title, row, start_col + c), kind,
                                    str(error.get("message", "")), formula))
            values.append(CODES.get(kind, "#ERROR!"))
        else:
            values.append(_plain(effective))
    while values and values[-1] == "":
        values.pop()
    return values


def _plain(effective: Mapping) -> Any:
    for key in ("numberValue", "stringValue", "boolValue"):
        if key in effective:
            return effective[key]
    return ""
