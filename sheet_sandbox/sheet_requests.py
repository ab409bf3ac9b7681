"""The requests of ``spreadsheets:batchUpdate`` the sandbox supports, applied all or nothing.

Supported: addSheet, deleteSheet, updateSheetProperties, updateSpreadsheetProperties. Other request
kinds Google knows get a 400 that says the sandbox does not support them; names Google does not
know get Google's own "Unknown name" 400. Field masks (``fields``) follow Google: a listed field
absent from ``properties`` is reset to its default, and defaults (false, 0) are not echoed.
"""

from __future__ import annotations

import copy
import re
import struct

from . import errors
from .http import Response
from .model import DEFAULT_COLS, DEFAULT_ROWS, MAX_CELLS, Spreadsheet, Tab
from .store import SpreadsheetStore

SUPPORTED = ("addSheet", "deleteSheet", "updateSheetProperties", "updateSpreadsheetProperties")

# Request kinds of the Sheets v4 API that the sandbox does not model (formatting, filters, ...).
_UNSUPPORTED_NAMES = """
updateCells repeatCell mergeCells unmergeCells updateBorders updateDimensionProperties
insertDimension deleteDimension appendDimension moveDimension autoResizeDimensions sortRange
setBasicFilter clearBasicFilter addNamedRange updateNamedRange deleteNamedRange addProtectedRange
updateProtectedRange deleteProtectedRange setDataValidation addConditionalFormatRule
updateConditionalFormatRule deleteConditionalFormatRule addFilterView updateFilterView
deleteFilterView duplicateFilterView addChart updateChartSpec updateEmbeddedObjectPosition
deleteEmbeddedObject updateEmbeddedObjectBorder addBanding updateBanding deleteBanding findReplace
copyPaste cutPaste pasteData textToColumns duplicateSheet appendCells insertRange deleteRange
addDimensionGroup deleteDimensionGroup updateDimensionGroup trimWhitespace deleteDuplicates
addSlicer updateSlicerSpec randomizeRange autoFill createDeveloperMetadata updateDeveloperMetadata
deleteDeveloperMetadata addDataSource updateDataSource deleteDataSource refreshDataSource
cancelDataSourceRefresh addTable updateTable deleteTable
"""
KNOWN_UNSUPPORTED = frozenset(re.findall(r"\w+", _UNSUPPORTED_NAMES))

# Properties that keep their value even when it is a proto default (0 / false).
_ALWAYS_SHOWN = {("sheetId",), ("gridProperties", "rowCount"), ("gridProperties", "columnCount")}


class _Invalid(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


def _fail(index: int, kind: str, message: str) -> _Invalid:
    return _Invalid(errors.invalid_argument(f"Invalid requests[{index}].{kind}: {message}"))


def apply_requests(
    store: SpreadsheetStore, spreadsheet: Spreadsheet, requests: list
) -> tuple[Response | None, list[dict]]:
    """Apply ``requests`` in order; on any refusal undo them all and return (error, [])."""
    saved = (
        copy.deepcopy(spreadsheet.properties),
        list(spreadsheet.tabs),
        [(tab, copy.deepcopy(tab.props), tab.rows) for tab in spreadsheet.tabs],
    )
    replies = []
    try:
        for index, request in enumerate(requests):
            replies.append(_apply_one(store, spreadsheet, index, request))
    except _Invalid as invalid:
        properties, tabs, tab_states = saved
        spreadsheet.properties = properties
        spreadsheet.tabs = tabs
        for tab, props, rows in tab_states:
            tab.props, tab.rows = props, rows
        return invalid.response, []
    return None, replies


def _apply_one(store: SpreadsheetStore, spreadsheet: Spreadsheet, index: int, request) -> dict:
    if not isinstance(request, dict) or not request:
        raise _Invalid(errors.invalid_argument(f"Invalid requests[{index}]: No request set."))
    if len(request) > 1:
        raise _Invalid(errors.invalid_argument(
            f"Invalid requests[{index}]: Only one kind of request may be set per request, "
            f"got {', '.join(request)}."))
    kind, body = next(iter(request.items()))
    if kind in KNOWN_UNSUPPORTED:
        raise _fail(index, kind, "the sandbox does not support this request kind (it supports "
                    f"{', '.join(SUPPORTED)}).")
    if kind not in SUPPORTED:
        message = (f"Invalid JSON payload received. Unknown name \"{kind}\" at "
                   f"'requests[{index}]': Cannot find field.")
        raise _Invalid(errors.field_violation(message, f"requests[{index}]"))
    if not isinstance(body, dict):
        body = {}
    return _HANDLERS[kind](store, spreadsheet, index, body)


# -- addSheet / deleteSheet ------------------------------------------------------------------


def _add_sheet(store: SpreadsheetStore, spreadsheet: Spreadsheet, index: int, body: dict) -> dict:
    props = body.get("properties") or {}
    title = props.get("title") or _default_title(spreadsheet)
    if spreadsheet.tab_named(title) is not None and _same_name(spreadsheet, title):
        raise _fail(index, "addSheet", f'A sheet with the name "{title}" already exists. '
                    "Please enter another name.")
    sheet_id = props.get("sheetId")
    if sheet_id is None:
        sheet_id = store.new_sheet_id(spreadsheet)
    elif spreadsheet.tab_with_id(sheet_id) is not None:
        raise _fail(index, "addSheet", f"Sheet with id {sheet_id} already exists.")
    grid = props.get("gridProperties") or {}
    rows = grid.get("rowCount", DEFAULT_ROWS)
    cols = grid.get("columnCount", DEFAULT_COLS)
    _check_grid(spreadsheet, index, "addSheet", rows, cols, None)
    tab = Tab(sheet_id, title, rows, cols)
    for key, value in props.items():
        if key not in ("sheetId", "title", "index", "gridProperties", "sheetType"):
            tab.props[key] = value
    for key, value in grid.items():
        if key not in ("rowCount", "columnCount"):
            tab.props["gridProperties"][key] = value
    _normalise(tab.props)
    spreadsheet.add_tab(tab, props.get("index"))
    return {"addSheet": {"properties": {**tab.props, "index": spreadsheet.tabs.index(tab)}}}


def _same_name(spreadsheet: Spreadsheet, title: str) -> bool:
    return any(tab.title.casefold() == title.casefold() for tab in spreadsheet.tabs)


def _default_title(spreadsheet: Spreadsheet) -> str:
    number = len(spreadsheet.tabs) + 1
    while _same_name(spreadsheet, f"Sheet{number}"):
        number += 1
    return f"Sheet{number}"


def _delete_sheet(store, spreadsheet: Spreadsheet, index: int, body: dict) -> dict:
    sheet_id = body.get("sheetId", 0)
    tab = spreadsheet.tab_with_id(sheet_id)
    if tab is None:
        raise _fail(index, "deleteSheet", f"No sheet with id: {sheet_id}")
    if len(spreadsheet.tabs) == 1:
        raise _fail(index, "deleteSheet", "You can't remove all the sheets in a document.")
    spreadsheet.tabs.remove(tab)
    if all(other.hidden for other in spreadsheet.tabs):
        raise _fail(index, "deleteSheet", "You can't remove all the visible sheets in a document.")
    return {}


# -- property updates ------------------------------------------------------------------------


def _paths(fields: object, properties: dict, index: int, kind: str) -> list[tuple[str, ...]]:
    if not isinstance(fields, str) or not fields.strip():
        raise _fail(index, kind, "At least one field must be specified in 'fields'.")
    if fields.strip() == "*":
        return [(key,) for key in properties if key != "sheetId"]
    return [tuple(re.split(r"[./]", path.strip())) for path in fields.split(",") if path.strip()]


def _get(source: dict, path: tuple[str, ...]) -> object:
    for name in path:
        if not isinstance(source, dict) or name not in source:
            return None
        source = source[name]
    return source


def _set(target: dict, path: tuple[str, ...], value: object) -> None:
    for name in path[:-1]:
        target = target.setdefault(name, {})
    if value is None:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = copy.deepcopy(value)


def _update_sheet_properties(store, spreadsheet: Spreadsheet, index: int, body: dict) -> dict:
    kind = "updateSheetProperties"
    props = body.get("properties") or {}
    sheet_id = props.get("sheetId", 0)
    tab = spreadsheet.tab_with_id(sheet_id)
    if tab is None:
        raise _fail(index, kind, f"No grid with id: {sheet_id}")
    new_props = copy.deepcopy(tab.props)
    move_to = None
    for path in _paths(body.get("fields"), props, index, kind):
        if path == ("sheetId",):
            continue
        if path == ("index",):
            move_to = props.get("index", 0)
            continue
        if path == ("title",):
            title = props.get("title")
            if not title:
                raise _fail(index, kind, "The sheet name cannot be empty.")
            other = spreadsheet.tab_named(title)
            if other is not None and other is not tab and _same_name(spreadsheet, title):
                raise _fail(index, kind, f'A sheet with the name "{title}" already exists. '
                            "Please enter another name.")
        _set(new_props, path, _get(props, path))
    grid = new_props.setdefault("gridProperties", {})
    rows, cols = grid.get("rowCount", 0), grid.get("columnCount", 0)
    _check_grid(spreadsheet, index, kind, rows, cols, tab)
    _normalise(new_props)
    if new_props.get("hidden") and all(t.hidden for t in spreadsheet.tabs if t is not tab):
        raise _fail(index, kind, "You can't hide all the sheets in a document.")
    new_props["sheetId"] = tab.sheet_id
    old_grid = (tab.row_count, tab.col_count)
    tab.props = new_props
    if (rows, cols) != old_grid:
        tab.props["gridProperties"]["rowCount"], tab.props["gridProperties"]["columnCount"] = (
            old_grid)
        tab.resize(rows, cols)
    if move_to is not None:
        spreadsheet.move_tab(tab, move_to)
    return {}


def _check_grid(spreadsheet: Spreadsheet, index: int, kind: str, rows: object, cols: object,
                tab: Tab | None) -> None:
    for name, value in (("rowCount", rows), ("columnCount", cols)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _fail(index, kind, f"Invalid {name}: {value}, it must be >= 1.")
    others = sum(t.row_count * t.col_count for t in spreadsheet.tabs if t is not tab)
    if others + rows * cols > MAX_CELLS:
        raise _fail(index, kind, "This action would increase the number of cells in the workbook "
                    f"above the limit of {MAX_CELLS} cells.")


def _update_spreadsheet_properties(store, spreadsheet: Spreadsheet, index: int,
                                   body: dict) -> dict:
    kind = "updateSpreadsheetProperties"
    props = body.get("properties") or {}
    new_props = copy.deepcopy(spreadsheet.properties)
    for path in _paths(body.get("fields"), props, index, kind):
        if path == ("title",) and not props.get("title"):
            raise _fail(index, kind, "The spreadsheet title cannot be empty.")
        _set(new_props, path, _get(props, path))
    spreadsheet.properties = new_props
    return {}


# -- normalising -----------------------------------------------------------------------------


def _normalise(props: dict, prefix: tuple[str, ...] = ()) -> None:
    """Drop proto defaults (false, 0, empty) and store colours as Google does (8-bit, float32)."""
    if not prefix and "tabColorStyle" in props:
        style = props["tabColorStyle"]
        rgb = style.get("rgbColor") if isinstance(style, dict) else None
        if isinstance(rgb, dict):
            props["tabColorStyle"] = {"rgbColor": _colour(rgb)}
            props["tabColor"] = _colour(rgb)
        elif isinstance(style, dict) and style.get("themeColor"):
            props.pop("tabColor", None)
        else:
            props.pop("tabColorStyle", None)
            props.pop("tabColor", None)
    elif not prefix and isinstance(props.get("tabColor"), dict):
        props["tabColor"] = _colour(props["tabColor"])
        props["tabColorStyle"] = {"rgbColor": dict(props["tabColor"])}
    for key in list(props):
        value = props[key]
        path = (*prefix, key)
        if isinstance(value, dict) and key not in ("tabColor", "tabColorStyle"):
            _normalise(value, path)
            if not value and path not in _ALWAYS_SHOWN:
                del props[key]
        elif value in (None, False, 0, "") and path not in _ALWAYS_SHOWN:
            del props[key]


def _colour(rgb: dict) -> dict:
    out = {}
    for channel in ("red", "green", "blue", "alpha"):
        value = rgb.get(channel)
        if isinstance(value, int | float) and value:
            # Google keeps 8 bits per channel, truncating: 0.5 comes back as 127/255.
            stored = _float32_text(int(value * 255 + 1e-6) / 255) if channel != "alpha" else value
            if stored:
                out[channel] = stored
    return out


def _float32_text(value: float) -> float:
    """The shortest decimal that reads back as the same float32, as Google's JSON prints it."""
    target = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(1, 10):
        candidate = float(f"{value:.{digits}g}")
        if struct.unpack("f", struct.pack("f", candidate))[0] == target:
            return int(candidate) if candidate.is_integer() else candidate
    return target


_HANDLERS = {
    "addSheet": _add_sheet,
    "deleteSheet": _delete_sheet,
    "updateSheetProperties": _update_sheet_properties,
    "updateSpreadsheetProperties": _update_spreadsheet_properties,
}
