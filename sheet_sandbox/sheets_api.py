"""Handlers for the Sheets v4 endpoints: ``handler(sandbox, request, route) -> Response``.

Each handler validates the request the way Google does (same status, same message), works on
``sandbox.store`` under its lock, and answers in Google's JSON shape. Every write moves the
spreadsheet's modifiedTime.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from . import errors, values
from .cells import (
    DATE_TIME_RENDER_OPTIONS,
    FORMATTED_VALUE,
    LOADING_TEXT,
    SERIAL_NUMBER,
    VALUE_RENDER_OPTIONS,
    ErrorValue,
    Formatted,
    Formula,
    render,
)
from .fieldmask import FieldMaskError, Mask, apply_mask, parse_mask
from .http import BadJSON, Request, Response
from .model import Spreadsheet
from .rendered_rows import MadeTable, RenderedRows
from .sheet_requests import apply_requests

_DIMENSIONS = ("ROWS", "COLUMNS")
_INPUT_OPTIONS = ("RAW", "USER_ENTERED")


@cache
def _defaults() -> dict:
    """Spreadsheet properties every new spreadsheet shows (recorded from Google)."""
    path = Path(__file__).parent / "data" / "spreadsheet_defaults.json"
    return json.loads(path.read_text(encoding="utf-8"))["properties"]


class _Refusal(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


def _spreadsheet(sandbox, route) -> Spreadsheet:
    spreadsheet = sandbox.store.get(route.spreadsheet_id)
    if spreadsheet is None:
        raise _Refusal(errors.not_found())
    if not spreadsheet.is_google_sheet:  # an .xlsx in Drive: every Sheets request is refused
        raise _Refusal(errors.not_a_spreadsheet())
    return spreadsheet


def _body(request: Request) -> dict:
    try:
        body = request.json()
    except BadJSON:
        raise _Refusal(errors.invalid_json()) from None
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise _Refusal(errors.invalid_json(
            f"Invalid value (Object), {json.dumps(body, ensure_ascii=False)}"))
    return body


def _enum(value: str | None, allowed: tuple[str, ...], default: str, field: str, proto: str) -> str:
    if value is None or value == "":
        return default
    if value not in allowed:
        message = f"Invalid value at '{field}' (type.googleapis.com/{proto}), \"{value}\""
        raise _Refusal(errors.field_violation(message, field))
    return value


def _render_options(source) -> tuple[str, str, str]:
    """(valueRenderOption, dateTimeRenderOption, majorDimension) from the query or a body."""
    get = source.arg if isinstance(source, Request) else source.get
    value = _enum(get("valueRenderOption"), VALUE_RENDER_OPTIONS, FORMATTED_VALUE,
                  "value_render_option", "google.apps.sheets.v4.ValueRenderOption")
    dates = _enum(get("dateTimeRenderOption"), DATE_TIME_RENDER_OPTIONS, SERIAL_NUMBER,
                  "date_time_render_option", "google.apps.sheets.v4.DateTimeRenderOption")
    major = _enum(get("majorDimension"), _DIMENSIONS, "ROWS", "major_dimension",
                  "google.apps.sheets.v4.Dimension")
    return value, dates, major


def _input_option(value: str | None) -> str:
    if not value:
        raise _Refusal(errors.invalid_argument("'valueInputOption' is required but not specified"))
    return _enum(value, _INPUT_OPTIONS, "RAW", "value_input_option",
                 "google.apps.sheets.v4.ValueInputOption")


def _answer(handler):
    """Turn refusals and RequestErrors raised anywhere in ``handler`` into Google's errors."""

    def wrapped(sandbox, request: Request, route) -> Response:
        try:
            with sandbox.store.lock:
                return handler(sandbox, request, route)
        except _Refusal as refusal:
            return refusal.response
        except values.RequestError as exc:
            return errors.invalid_argument(str(exc))

    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped


# -- spreadsheets.get ------------------------------------------------------------------------


def spreadsheet_json(spreadsheet: Spreadsheet, with_data: bool, ranges: list[str],
                     cell_fields: Mask | None = None, rendered: RenderedRows | None = None) -> dict:
    """The Spreadsheet resource, with grid data for ``ranges`` (or all tabs) when asked.
    ``cell_fields``: the fields of a cell the mask keeps (None: all), the only ones worked out; the
    mask cuts the answer to the same either way, this only spares making what it would drop.
    ``rendered`` (the store's) keeps shared rows' cells as made; the answer is the same without."""
    properties = {**spreadsheet.properties}
    for key in ("defaultFormat", "spreadsheetTheme"):
        properties[key] = _defaults()[key]
    wanted: dict[int, list] = {}
    for text in ranges:
        tab, r = values.resolve(spreadsheet, text)
        wanted.setdefault(tab.sheet_id, []).append(r)
    sheets = []
    made = (rendered or RenderedRows(limit=0)).made(repr(cell_fields))  # the mask's cells, by row
    for index, tab in enumerate(spreadsheet.tabs):
        if ranges and tab.sheet_id not in wanted:
            continue  # Google answers only the tabs the ranges name
        props = {**tab.props, "index": index}
        props["gridProperties"] = dict(props["gridProperties"])
        sheet: dict = {"properties": props}
        if with_data:
            boxes = wanted.get(tab.sheet_id) or [values.resolve(spreadsheet, _whole(tab.title))[1]]
            sheet["data"] = [_grid_data(tab, r, cell_fields, made) for r in boxes]
        sheets.append(sheet)
    body = {"spreadsheetId": spreadsheet.id, "properties": properties, "sheets": sheets}
    if spreadsheet.named_ranges:  # absent when there are none, as Google leaves empty lists out
        body["namedRanges"] = [{"namedRangeId": named.id, "name": named.name,
                                "range": named.grid_range()} for named in spreadsheet.named_ranges]
    body["spreadsheetUrl"] = f"https://docs.google.com/spreadsheets/d/{spreadsheet.id}/edit"
    return body


def _whole(title: str) -> str:
    return "'" + title.replace("'", "''") + "'"


def _grid_data(tab, r, cell_fields: Mask | None, made: MadeTable) -> dict:
    """One range's GridData. ``made``: shared rows' CellData as made before (rendered_rows.py). A
    cell's CellData is the same whichever range or answer asks: the monitor's ranges overlap
    (``A1:H500`` beside ``F2:F500``) and the generated spreadsheets share rows, so a row is made
    once and each range takes its slice (the same dicts, which the mask and the JSON encoder only
    read). A row a tab holds as its own list is made for each range, as it may change."""

    def cell_data(cells) -> list:
        return [_cell_data(c, cell_fields) for c in cells]

    data: dict = {}
    if r.start_row > 1:
        data["startRow"] = r.start_row - 1
    if r.start_col > 1:
        data["startColumn"] = r.start_col - 1
    row_data = []
    start, stop = r.start_col - 1, r.end_col
    for row in tab.rows[r.start_row - 1 : min(r.end_row, len(tab.rows))]:
        cells = made.cells(row, start, stop, cell_data)
        row_data.append({"values": cells} if cells else {})
    while row_data and not row_data[-1]:
        row_data.pop()
    if row_data:
        data["rowData"] = row_data
    data["rowMetadata"] = [{"pixelSize": 21}] * (r.end_row - r.start_row + 1)
    data["columnMetadata"] = [{"pixelSize": 100}] * (r.end_col - r.start_col + 1)
    return data


def _extended(cell: object) -> dict:
    if isinstance(cell, bool):
        return {"boolValue": cell}
    if isinstance(cell, ErrorValue):
        return {"errorValue": {"type": _ERROR_TYPES[cell.code], "message": cell.message or cell.code}}
    if isinstance(cell, Formatted):
        return {"numberValue": cell.number}
    if isinstance(cell, int | float):
        return {"numberValue": cell}
    return {"stringValue": cell}


_ERROR_TYPES = {"#REF!": "REF", "#N/A": "N_A", "#DIV/0!": "DIVIDE_BY_ZERO", "#VALUE!": "VALUE",
                "#NAME?": "NAME", "#NUM!": "NUM", "#NULL!": "NULL_VALUE", "#ERROR!": "ERROR",
                LOADING_TEXT: "LOADING"}


def _cell_data(cell: object, fields: Mask | None = None) -> dict:
    if cell is None:
        return {}
    value = cell.value if isinstance(cell, Formula) else cell
    out: dict = {}
    if fields is None or "userEnteredValue" in fields:
        entered = {"formulaValue": cell.text} if isinstance(cell, Formula) else _extended(cell)
        out["userEnteredValue"] = entered
    if value is not None and (fields is None or "effectiveValue" in fields):
        out["effectiveValue"] = _extended(value)
    if value is not None and (fields is None or "formattedValue" in fields):
        out["formattedValue"] = render(value, FORMATTED_VALUE)
    return out


def _cell_fields(mask: Mask | None) -> Mask | None:
    """The fields of a cell ``mask`` keeps (``sheets.data.rowData.values``), None when all."""
    for name in ("sheets", "data", "rowData", "values"):
        if not isinstance(mask, dict) or "*" in mask or not isinstance(mask.get(name), dict):
            return None
        mask = mask[name]
    return None if "*" in mask else mask


@_answer
def get_spreadsheet(sandbox, request: Request, route) -> Response:
    """GET /v4/spreadsheets/{id}: properties and tabs; grid data with includeGridData/ranges."""
    spreadsheet = _spreadsheet(sandbox, route)
    ranges = request.query.get("ranges", [])
    with_data = (request.arg("includeGridData") or "").lower() == "true"
    fields = request.arg("fields")
    try:
        mask = parse_mask(fields) if fields else None
    except FieldMaskError:
        return errors.field_violation(f"Invalid field selection {fields}", "fields")
    if mask is not None and "sheets" in mask and isinstance(mask["sheets"], dict):
        with_data = with_data or "data" in mask["sheets"]  # asking for data fields implies it
    cell_fields = _cell_fields(mask)
    body = spreadsheet_json(spreadsheet, with_data, ranges, cell_fields, sandbox.store.rendered)
    return Response.json(200, apply_mask(body, _cells_made(mask, cell_fields)))


def _cells_made(mask: Mask | None, cell_fields: Mask | None) -> Mask | None:
    """``mask`` with ``sheets.data.rowData`` kept whole when the cells were made to ``cell_fields``
    already and it cuts no deeper (``values(effectiveValue)``, not ``values(effectiveValue.numberValue)``):
    its cut would copy every cell unchanged, and a grid answer is thousands of them."""
    if cell_fields is None or any(sub is not None for sub in cell_fields.values()):
        return mask
    sheets = dict(mask["sheets"])  # _cell_fields found the path: every step on it is a dict
    sheets["data"] = {**sheets["data"], "rowData": None}
    return {**mask, "sheets": sheets}


# -- values ----------------------------------------------------------------------------------


@_answer
def get_values(sandbox, request: Request, route) -> Response:
    """GET .../values/{range}: a ValueRange."""
    spreadsheet = _spreadsheet(sandbox, route)
    value, dates, major = _render_options(request)
    return Response.json(200, values.read(spreadsheet, route.params["range"], value, dates, major,
                                          sandbox.store.rendered))


@_answer
def batch_get_values(sandbox, request: Request, route) -> Response:
    """GET .../values:batchGet?ranges=...: one ValueRange per range, in order."""
    spreadsheet = _spreadsheet(sandbox, route)
    value, dates, major = _render_options(request)
    ranges = request.query.get("ranges", [])
    body: dict = {"spreadsheetId": spreadsheet.id}
    if ranges:
        rendered = sandbox.store.rendered
        body["valueRanges"] = [values.read(spreadsheet, text, value, dates, major, rendered)
                               for text in ranges]
    return Response.json(200, body)


def _write(sandbox, spreadsheet: Spreadsheet, text: str, value_range: dict, option: str,
           request_options: dict) -> dict:
    major = _enum(value_range.get("majorDimension"), _DIMENSIONS, "ROWS", "data.major_dimension",
                  "google.apps.sheets.v4.Dimension")
    result = values.write(spreadsheet, text, value_range.get("values"), option, major)
    out = {"spreadsheetId": spreadsheet.id, **result.as_json()}
    if str(request_options.get("includeValuesInResponse", "")).lower() == "true":
        value, dates, _ = _render_options(_Options(request_options, "responseValueRenderOption",
                                                   "responseDateTimeRenderOption"))
        out["updatedData"] = values.read(spreadsheet, result.range_text, value, dates, major,
                                         sandbox.store.rendered)
    return out


class _Options:
    """Read response* render options with the names _render_options expects."""

    def __init__(self, source: dict, value_key: str, date_key: str) -> None:
        self._map = {"valueRenderOption": source.get(value_key),
                     "dateTimeRenderOption": source.get(date_key)}

    def get(self, name: str) -> str | None:
        return self._map.get(name)


@_answer
def update_values(sandbox, request: Request, route) -> Response:
    """PUT .../values/{range}?valueInputOption=...: write one ValueRange."""
    spreadsheet = _spreadsheet(sandbox, route)
    option = _input_option(request.arg("valueInputOption"))
    body = _body(request)
    text = route.params["range"]
    options = {key: request.arg(key) for key in (
        "includeValuesInResponse", "responseValueRenderOption", "responseDateTimeRenderOption")}
    out = _write(sandbox, spreadsheet, text, body, option, options)
    sandbox.store.touch(spreadsheet)
    return Response.json(200, out)


@_answer
def batch_update_values(sandbox, request: Request, route) -> Response:
    """POST .../values:batchUpdate: several ValueRanges, all or nothing."""
    spreadsheet = _spreadsheet(sandbox, route)
    body = _body(request)
    option = _input_option(body.get("valueInputOption"))
    data = body.get("data") or []
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        return errors.field_violation(
            "Invalid value at 'data' (type.googleapis.com/google.apps.sheets.v4.ValueRange)", "data")
    for item in data:  # validate everything before writing anything: Google applies all or none
        values.resolve(spreadsheet, item.get("range") or "")
        values.checked_values(item.get("values"))
    responses, rows, cols, sheets, cells = [], set(), set(), set(), 0
    for item in data:
        result = values.write(spreadsheet, item["range"], item.get("values"), option,
                              _enum(item.get("majorDimension"), _DIMENSIONS, "ROWS",
                                    "data.major_dimension", "google.apps.sheets.v4.Dimension"))
        responses.append({"spreadsheetId": spreadsheet.id, **result.as_json()})
        rows |= {(result.sheet_id, row) for row in result.rows}
        cols |= {(result.sheet_id, col) for col in result.cols}
        if result.cells:
            sheets.add(result.sheet_id)
        cells += result.cells
    sandbox.store.touch(spreadsheet)
    out: dict = {"spreadsheetId": spreadsheet.id}
    if responses:
        out.update(totalUpdatedRows=len(rows), totalUpdatedColumns=len(cols),
                   totalUpdatedCells=cells, totalUpdatedSheets=len(sheets), responses=responses)
    return Response.json(200, out)


@_answer
def clear_values(sandbox, request: Request, route) -> Response:
    """POST .../values/{range}:clear."""
    spreadsheet = _spreadsheet(sandbox, route)
    _body(request)  # a malformed body is still a 400
    cleared = values.clear(spreadsheet, route.params["range"])
    sandbox.store.touch(spreadsheet)
    return Response.json(200, {"spreadsheetId": spreadsheet.id, "clearedRange": cleared})


@_answer
def batch_clear_values(sandbox, request: Request, route) -> Response:
    """POST .../values:batchClear {"ranges": [...]}."""
    spreadsheet = _spreadsheet(sandbox, route)
    ranges = _body(request).get("ranges") or []
    if not isinstance(ranges, list) or not all(isinstance(text, str) for text in ranges):
        return errors.field_violation(
            "Invalid value at 'ranges' (TYPE_STRING)", "ranges")
    for text in ranges:
        values.resolve(spreadsheet, text)
    cleared = [values.clear(spreadsheet, text) for text in ranges]
    sandbox.store.touch(spreadsheet)
    out: dict = {"spreadsheetId": spreadsheet.id}
    if cleared:
        out["clearedRanges"] = cleared
    return Response.json(200, out)


# -- spreadsheets.batchUpdate ----------------------------------------------------------------


@_answer
def batch_update(sandbox, request: Request, route) -> Response:
    """POST /v4/spreadsheets/{id}:batchUpdate: tab and spreadsheet property requests."""
    spreadsheet = _spreadsheet(sandbox, route)
    body = _body(request)
    requests = body.get("requests") or []
    if not isinstance(requests, list):
        return errors.field_violation(
            "Invalid value at 'requests' (type.googleapis.com/google.apps.sheets.v4.Request)",
            "requests")
    refusal, replies = apply_requests(sandbox.store, spreadsheet, requests)
    if refusal is not None:
        return refusal
    spreadsheet.recalculate()  # a deleted tab or a shrunk grid changes what formulas see
    sandbox.store.touch(spreadsheet)
    out: dict = {"spreadsheetId": spreadsheet.id, "replies": replies}
    if body.get("includeSpreadsheetInResponse"):
        out["updatedSpreadsheet"] = spreadsheet_json(
            spreadsheet, bool(body.get("responseIncludeGridData")), body.get("responseRanges") or [])
    return Response.json(200, out)
