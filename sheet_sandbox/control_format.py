"""The control API's JSON for a spreadsheet, to the data model and back.

``{"title": str, "tabs": {"Name": TAB, ...}, "modifiedTime": RFC 3339 (optional), "createdTime": RFC
3339 (optional), "timeZone": str (optional), "locale": str (optional), "namedRanges": {"Name":
"Tab!A1:B5", ...} (optional), "mimeType": str (optional), "trashed": bool (optional)}``, tabs in
order, the first getting sheetId 0 and the others ids derived from the spreadsheet id and the tab name
(stable for a dataset). ``timeZone`` and ``locale`` are the spreadsheet's properties, named as Google
names them (default "Etc/GMT" and "en_US", what a service account's new file gets); the zone is a
CLDR/IANA name or Google's custom "GMT-07:00" form. TAB is a list of rows, or ``{"rows": [...],
"rowCount": N, "columnCount": M, "hidden": bool}``; the grid is at least 1000 x 26 and at least the
data. A row is a list of cells: string, number, boolean or null; a string naming an error ("#REF!",
"#N/A", "#DIV/0!", "#VALUE!", "#NAME?", "#NUM!", "#NULL!", "#ERROR!") is that error value; a string
starting with "=" is a formula computed by the sandbox's small evaluator; ``{"formula":
"=VLOOKUP(...)", "value": 12}`` is a formula with a stated value; ``{"date": "2026-01-05"}`` is a day
and ``{"datetime": "2026-01-05T03:00:00Z"}`` a moment, stored as Google stores a moment written into a
spreadsheet: the wall-clock time in the spreadsheet's zone (a serial number unformatted, "2026-01-05"
/ "2026-01-05 06:00:00" formatted in Europe/Moscow). ``{"error": "#REF!", "message": "You need to
connect these sheets."}`` is an error with Google's detailed message; ``{"loading": true}`` is a cell
still computing ("Loading...").

A named range names a box of one tab in A1 notation (a range without a tab is on the first tab);
its name follows Google's rules (``monitor.core.a1.is_range_name``). ``mimeType`` other than Google
Sheets' makes a file Drive holds and the Sheets API refuses (an uploaded .xlsx); ``trashed`` puts the
file in Drive's trash.

Malformed input is a ValueError whose message names the key, or the tab, row and column.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from functools import lru_cache

from monitor.core.a1 import A1Error, A1Range, format_a1, is_range_name, parse_a1
from monitor.core.zones import zone_named

from .cells import (
    ERRORS,
    LOADING,
    ErrorValue,
    Formatted,
    Formula,
    date_to_serial,
    datetime_to_serial,
    serial_to_datetime,
)
from .model import (
    DEFAULT_COLS,
    DEFAULT_ROWS,
    SPREADSHEET_MIME,
    XLSX_MIME,
    NamedRange,
    Spreadsheet,
    Tab,
    parse_rfc3339,
    rfc3339,
)

_KEYS = ("title", "tabs", "modifiedTime", "createdTime", "timeZone", "locale", "namedRanges", "mimeType",
         "trashed")
_SETTINGS = ("timeZone", "locale")  # the spreadsheet's own properties a payload may set
# Google's locale forms: "en", "fil", "en_US" (Sheets API reference, SpreadsheetProperties.locale).
_LOCALE = re.compile(r"^[a-z]{2,3}(_[A-Z]{2})?$")
_TAB_KEYS = ("rows", "rowCount", "columnCount", "hidden")


def spreadsheet_from_control(spreadsheet_id: str, payload: object, now: datetime,
                             share: Callable[[list], tuple],
                             kept: Mapping[str, str] | None = None) -> Spreadsheet:
    """The spreadsheet ``payload`` describes, formulas computed; ValueError if malformed.

    ``now`` stamps the times the payload leaves out; ``share`` turns a formula-free row into the
    store's shared tuple for it (see store.SpreadsheetStore). ``kept``: the stored spreadsheet's
    properties when its values change without an edit (``touch=false``): its zone and locale stay.
    """
    if not isinstance(payload, dict):
        raise ValueError("a spreadsheet must be a JSON object")
    unknown = set(payload) - set(_KEYS)
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}; allowed: {', '.join(_KEYS)}")
    title = payload.get("title")
    if not isinstance(title, str) or not title:
        raise ValueError('"title" must be a non-empty string')
    tabs = payload.get("tabs")
    if not isinstance(tabs, dict) or not tabs:
        raise ValueError('"tabs" must be an object mapping tab names to rows, with at least '
                         "one tab")
    times = _control_times(payload)
    spreadsheet = Spreadsheet(spreadsheet_id, title, times.get("createdTime", now))
    spreadsheet.properties.update(_control_settings(payload, kept))
    zone = spreadsheet.properties["timeZone"]
    used_ids: set[int] = set()
    for position, (name, spec) in enumerate(tabs.items()):
        spreadsheet.tabs.append(_control_tab(spreadsheet_id, position, name, spec, used_ids,
                                             share, zone))
    if all(tab.hidden for tab in spreadsheet.tabs):
        raise ValueError("at least one tab must be visible")
    spreadsheet.named_ranges = _named_ranges(spreadsheet, payload.get("namedRanges", {}))
    spreadsheet.mime_type, spreadsheet.trashed = _drive_fields(payload)
    spreadsheet.recalculate()
    spreadsheet.modified = times.get("modifiedTime", now)
    return spreadsheet


def control_payload(spreadsheet: Spreadsheet) -> dict:
    """The spreadsheet in spreadsheet_from_control's shape (formulas as {"formula", "value"})."""
    tabs: dict = {}
    zone = spreadsheet.properties["timeZone"]
    for tab in spreadsheet.tabs:
        rows = [[control_json(c, zone) for c in cells] for cells in tab.rows]
        width = max((len(cells) for cells in rows), default=0)
        inferred = (max(DEFAULT_ROWS, len(rows)), max(DEFAULT_COLS, width))
        if (tab.row_count, tab.col_count) == inferred and not tab.hidden:
            tabs[tab.title] = rows
        else:
            tabs[tab.title] = {"rows": rows, "rowCount": tab.row_count,
                               "columnCount": tab.col_count}
            if tab.hidden:
                tabs[tab.title]["hidden"] = True
    payload = {
        "title": spreadsheet.title,
        "tabs": tabs,
        "createdTime": rfc3339(spreadsheet.created),
        "modifiedTime": rfc3339(spreadsheet.modified),
        "timeZone": zone,
        "locale": spreadsheet.properties["locale"],
    }
    if spreadsheet.named_ranges:
        payload["namedRanges"] = {named.name: _named_a1(spreadsheet, named)
                                  for named in spreadsheet.named_ranges}
    if not spreadsheet.is_google_sheet:
        payload["mimeType"] = spreadsheet.mime_type
    if spreadsheet.trashed:
        payload["trashed"] = True
    return payload


def _drive_fields(payload: dict) -> tuple[str, bool]:
    mime = payload.get("mimeType", SPREADSHEET_MIME)
    if not isinstance(mime, str) or "/" not in mime:
        raise ValueError(f'"mimeType" must be a MIME type such as "{XLSX_MIME}", got {mime!r}')
    trashed = payload.get("trashed", False)
    if not isinstance(trashed, bool):
        raise ValueError(f'"trashed" must be true or false, got {trashed!r}')
    return mime, trashed


def _named_ranges(spreadsheet: Spreadsheet, spec: object) -> list[NamedRange]:
    """Each ``{"Name": "Tab!A1:B5"}`` as a NamedRange of the tab it names (ids derived from the
    spreadsheet id and the name, so a dataset's are stable)."""
    if not isinstance(spec, dict):
        raise ValueError('"namedRanges" must map names to A1 ranges, e.g. {"Totals": "Stock!F2:F"}')
    named = []
    for name, text in spec.items():
        where = f"namedRanges[{name!r}]"
        if not isinstance(name, str) or not is_range_name(name):
            raise ValueError(f"{where}: a name has letters, digits and underscores, starts with no "
                             "digit and reads as no cell reference (A1, R1C1) nor TRUE/FALSE")
        if any(other.name.casefold() == name.casefold() for other in named):
            raise ValueError(f"{where}: the name is taken (names are compared ignoring case)")
        try:
            box = parse_a1(text) if isinstance(text, str) else None
        except A1Error:
            box = None
        tab = None if box is None else (spreadsheet.tabs[0] if box.sheet is None
                                        else spreadsheet.tab_named(box.sheet))
        if box is None or tab is None:
            raise ValueError(f"{where}: {text!r} is not an A1 range of one of the tabs")
        bounds = (_index(box.start_row), box.end_row, _index(box.start_col), box.end_col)
        range_id = str(zlib.crc32(f"{spreadsheet.id}/{name}".encode()) & 0x7FFFFFFF)
        named.append(NamedRange(range_id, name, tab.sheet_id, bounds))
    return named


def _index(start: int | None) -> int | None:
    """A 1-based A1 start as a 0-based GridRange index."""
    return None if start is None else start - 1


def _named_a1(spreadsheet: Spreadsheet, named: NamedRange) -> str:
    tab = spreadsheet.tab_with_id(named.sheet_id)
    box = A1Range(tab.title if tab else "?", _one_based(named.start_row), _one_based(named.start_col),
                  named.end_row, named.end_col)
    return format_a1(box)


def _one_based(index: int | None) -> int | None:
    return None if index is None else index + 1


def _control_settings(payload: dict, kept: Mapping[str, str] | None) -> dict[str, str]:
    """The zone and locale a payload sets (validated), or those ``kept`` when it leaves them out."""
    settings = {key: kept[key] for key in _SETTINGS} if kept else {}
    zone, locale = payload.get("timeZone"), payload.get("locale")
    if zone is not None:
        try:
            zone_named(zone)
        except ValueError:
            raise ValueError('"timeZone" must be a CLDR zone such as "Europe/Moscow" or a custom '
                             f'one such as "GMT-07:00", got {zone!r}') from None
        settings["timeZone"] = zone
    if locale is not None:
        if not isinstance(locale, str) or not _LOCALE.match(locale):
            raise ValueError(f'"locale" must be a language code such as "en" or "en_US", got {locale!r}')
        settings["locale"] = locale
    if kept:
        changed = [key for key in _SETTINGS if settings[key] != kept[key]]
        if changed:
            raise ValueError(f"touch=false keeps the spreadsheet's settings; a new {changed[0]!r} is an "
                             "edit Drive records (leave out touch=false)")
    return settings


def _control_times(payload: dict) -> dict[str, datetime]:
    times = {}
    for key in ("modifiedTime", "createdTime"):
        if payload.get(key) is not None:
            if not isinstance(payload[key], str):
                raise ValueError(f'"{key}" must be an RFC 3339 string')
            try:
                times[key] = parse_rfc3339(payload[key])
            except ValueError as exc:
                raise ValueError(f'"{key}": {exc}') from None
    return times


def _control_tab(spreadsheet_id: str, position: int, name: str, spec: object,
                 used_ids: set[int], share: Callable[[list], tuple], zone: str) -> Tab:
    where = f"tabs[{name!r}]"
    if not name or len(name) > 100:
        raise ValueError(f"{where}: a tab name must have 1 to 100 characters")
    if isinstance(spec, list):
        spec = {"rows": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("rows", []), list):
        raise ValueError(f"{where} must be a list of rows or an object with \"rows\"")
    unknown = set(spec) - set(_TAB_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}; allowed: {', '.join(_TAB_KEYS)}")
    rows, has_formulas = _control_rows(spec.get("rows", []), where, share, zone)
    width = max((len(row) for row in rows), default=0)
    row_count = _positive(spec.get("rowCount", max(DEFAULT_ROWS, len(rows))), where, "rowCount")
    col_count = _positive(spec.get("columnCount", max(DEFAULT_COLS, width)), where,
                          "columnCount")
    if row_count < len(rows) or col_count < width:
        raise ValueError(f"{where}: the data ({len(rows)} x {width}) does not fit the grid "
                         f"({row_count} x {col_count})")
    tab = Tab(_sheet_id(spreadsheet_id, position, name, used_ids), name, row_count, col_count)
    if spec.get("hidden"):
        tab.props["hidden"] = True
    tab.rows = rows
    tab.has_formulas = has_formulas
    tab.trim()
    return tab


def _control_rows(rows_in: list, where: str, share: Callable[[list], tuple],
                  zone: str) -> tuple[list[list | tuple], bool]:
    """A tab's rows, trailing empty cells dropped, and whether any holds a formula."""
    rows: list[list | tuple] = []
    has_formulas = False
    for r, row in enumerate(rows_in, start=1):
        if not isinstance(row, list):
            raise ValueError(f"{where} row {r}: a row must be a list of cells")
        cells, formulas_here = _control_row(row, where, r, zone)
        while cells and cells[-1] is None:
            cells.pop()
        # Rows with formulas stay this tab's own: their values depend on the tab.
        rows.append(cells if formulas_here else share(cells))
        has_formulas = has_formulas or formulas_here
    return rows, has_formulas


def _sheet_id(spreadsheet_id: str, position: int, name: str, used_ids: set[int]) -> int:
    """0 for the first tab, like Google; others derived from the ids, so a dataset's are stable."""
    if position == 0:
        sheet_id = 0
    else:
        sheet_id = zlib.crc32(f"{spreadsheet_id}/{name}".encode()) & 0x7FFFFFFF or 1
        while sheet_id in used_ids:
            sheet_id = (sheet_id + 1) & 0x7FFFFFFF or 1
    used_ids.add(sheet_id)
    return sheet_id


def _control_row(row: list, where: str, number: int, zone: str) -> tuple[list, bool]:
    """The cells of one control row, and whether it holds a formula. Plain text and numbers,
    nearly all cells, take a fast path: 5,000 generated spreadsheets hold millions of them."""
    cells = []
    has_formula = False
    for column, value in enumerate(row, start=1):
        kind = type(value)
        if (kind is str and value and value[0] not in "#=") or kind in (int, float, bool):
            cells.append(value)
        else:
            cell = control_cell(value, f"{where} row {number} column {column}", zone)
            has_formula = has_formula or isinstance(cell, Formula)
            cells.append(cell)
    return cells, has_formula


def control_cell(value: object, where: str, zone: str = "Etc/GMT") -> object:
    """A cell from the control API's JSON (see the module doc); ``zone``: the spreadsheet's."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return _text_cell(value)
    if isinstance(value, bool | int | float):
        return value
    cell = _object_cell(value, where, zone) if isinstance(value, dict) else None
    if cell is None:
        raise ValueError(
            f"{where}: a cell must be a string, number, boolean, null, {{\"date\": \"YYYY-MM-DD\"}}, "
            f"{{\"datetime\": \"RFC 3339\"}}, {{\"formula\": \"=...\", \"value\": ...}}, "
            f"{{\"error\": \"#REF!\", \"message\": \"...\"}} or {{\"loading\": true}}; got {value!r}"
        )
    return cell


def _text_cell(value: str) -> object:
    """An error code, a formula, or the text itself."""
    if value in ERRORS:
        return ERRORS[value]
    if value.startswith("=") and len(value) > 1:
        return Formula(value)
    return value


def _object_cell(value: dict, where: str, zone: str) -> object | None:
    """A date, a moment, a cell still loading, an error with its message or a formula; None for an
    object of no known shape."""
    try:
        if set(value) == {"date"}:
            return _date_cell(value["date"], "date", zone)
        if set(value) == {"datetime"}:
            return _date_cell(value["datetime"], "datetime", zone)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: bad date {value!r} ({exc})") from None
    if value == {"loading": True}:
        return LOADING
    if set(value) == {"error", "message"}:
        return _error_with_message(value, where)
    if "formula" in value and set(value) <= {"formula", "value"}:
        text = value["formula"]
        if not isinstance(text, str) or not text.startswith("="):
            raise ValueError(f"{where}: a formula must be a string starting with '='")
        if "value" not in value:
            return Formula(text)
        return _FixedFormula(text, control_cell(value["value"], where, zone))
    return None


def _error_with_message(value: dict, where: str) -> ErrorValue:
    code, message = value["error"], value["message"]
    if code not in ERRORS or not isinstance(message, str) or not message:
        raise ValueError(f"{where}: an error is one of {', '.join(ERRORS)} with a non-empty message")
    return ErrorValue(code, message)


@lru_cache(maxsize=65536)
def _date_cell(text: str, kind: str, zone: str) -> Formatted:
    """Equal dates are one (never mutated) object: generated sheets repeat them a lot.

    A day is a day wherever the spreadsheet is. A moment is stored as its wall-clock time in the
    spreadsheet's zone, as Google stores a moment a form, a script or a client writes (a Date set
    in a Tokyo spreadsheet at 12:00 reads 19:00 the day before in a Los Angeles one), and serials
    are that wall-clock time (see docs/sandbox.md, "Data model and ranges")."""
    if kind == "date":
        return Formatted(date_to_serial(date.fromisoformat(text)), "date")
    local = parse_rfc3339(text).astimezone(zone_named(zone)).replace(tzinfo=None)
    return Formatted(datetime_to_serial(local), "datetime")


class _FixedFormula(Formula):
    """A formula whose value the seed data states (VLOOKUP, IMPORTRANGE): never recomputed."""

    __slots__ = ()


def control_json(cell: object, zone: str = "Etc/GMT") -> object:
    """A stored cell in the control API's JSON; a date-time's wall clock in ``zone`` back to UTC."""
    if cell is None or isinstance(cell, str | bool | int | float):
        return cell
    if cell is LOADING:
        return {"loading": True}
    if isinstance(cell, ErrorValue):
        return {"error": cell.code, "message": cell.message} if cell.message else cell.code
    if isinstance(cell, Formatted):
        if cell.kind in ("date", "us_date"):
            return {"date": serial_to_datetime(cell.number).date().isoformat()}
        if cell.kind == "datetime":
            local = serial_to_datetime(cell.number).replace(tzinfo=zone_named(zone))
            return {"datetime": local.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"}
        return cell.number
    if isinstance(cell, Formula):
        return {"formula": cell.text, "value": control_json(cell.value, zone)}
    raise TypeError(cell)


def _positive(value: object, where: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: {key} must be a positive integer, got {value!r}")
    return value
