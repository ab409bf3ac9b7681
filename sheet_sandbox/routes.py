"""Which Sheets v4 / Drive v3 endpoint a request is for, before anything else looks at it.

``match_route`` only reads the method and the path; it never touches data. Paths arrive
percent-encoded: they are split on '/' first and each piece decoded after, because a range (or a
tab name) may hold '/', ':' or '!' once decoded. An action suffix (``:clear``, ``:batchGet``) is
recognised on the still-encoded segment, where gspread and Google's clients encode the range's own
colons as %3A.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote

from . import drive_api, drive_changes, errors, sheets_api
from .http import Request, Response

Handler = Callable[[object, Request, "Route"], Response]


@dataclass
class Route:
    endpoint: str  # method + pattern, as in the recordings: "GET /v4/spreadsheets/{id}/values/{range}"
    api: str  # "sheets" | "drive"
    kind: str  # "read" | "write": which quota a request uses
    spreadsheet_id: str | None = None
    params: dict = field(default_factory=dict)  # path parameters: "range", "file_id"
    handler: Handler | None = None
    response: Response | None = None  # set, in Google's shape, when no endpoint matches


# (api, pattern) -> {method: (kind, handler)}
_SHEETS = "/v4/spreadsheets/{id}"
_TABLE: dict[str, dict[str, tuple[str, Handler]]] = {
    _SHEETS: {"GET": ("read", sheets_api.get_spreadsheet)},
    _SHEETS + ":batchUpdate": {"POST": ("write", sheets_api.batch_update)},
    _SHEETS + "/values/{range}": {
        "GET": ("read", sheets_api.get_values),
        "PUT": ("write", sheets_api.update_values),
    },
    _SHEETS + "/values/{range}:clear": {"POST": ("write", sheets_api.clear_values)},
    _SHEETS + "/values:batchGet": {"GET": ("read", sheets_api.batch_get_values)},
    _SHEETS + "/values:batchUpdate": {"POST": ("write", sheets_api.batch_update_values)},
    _SHEETS + "/values:batchClear": {"POST": ("write", sheets_api.batch_clear_values)},
    "/drive/v3/files": {
        "GET": ("read", drive_api.list_files),
        "POST": ("write", drive_api.create_file),
    },
    "/drive/v3/files/{fileId}": {
        "GET": ("read", drive_api.get_file),
        "PATCH": ("write", drive_api.update_file),
        "DELETE": ("write", drive_api.delete_file),
    },
    "/drive/v3/changes": {"GET": ("read", drive_changes.list_changes)},
    "/drive/v3/changes/startPageToken": {"GET": ("read", drive_changes.get_start_page_token)},
}


def _pattern(raw: list[str], method: str) -> tuple[str | None, str | None, dict]:
    """(pattern, spreadsheet id, path params) for the encoded segments ``raw``."""
    if raw[:2] == ["v4", "spreadsheets"] and len(raw) >= 3 and raw[2]:
        spreadsheet_id, _, action = raw[2].partition(":")
        spreadsheet_id = unquote(spreadsheet_id)
        if len(raw) == 3:
            if not action:
                return _SHEETS, spreadsheet_id, {}
            return f"{_SHEETS}:{action}", spreadsheet_id, {}
        if action:
            return None, None, {}
        if len(raw) == 4 and raw[3].startswith("values:"):
            return f"{_SHEETS}/{raw[3]}", spreadsheet_id, {}
        if raw[3] == "values" and len(raw) >= 5:
            last = raw[-1]
            suffix = ""
            if method == "POST" and ":" in last:
                last, _, action = last.rpartition(":")
                suffix = ":" + action
            pieces = [*raw[4:-1], last]
            # A tab name holding '/' may arrive unencoded: the range is everything after values/.
            range_text = "/".join(unquote(piece) for piece in pieces)
            return f"{_SHEETS}/values/{{range}}{suffix}", spreadsheet_id, {"range": range_text}
        return None, None, {}
    if raw[:3] == ["drive", "v3", "changes"] and len(raw) <= 4:
        return "/drive/v3/" + "/".join(raw[2:]), None, {}
    if raw[:3] == ["drive", "v3", "files"]:
        if len(raw) == 3:
            return "/drive/v3/files", None, {}
        if len(raw) == 4 and raw[3]:
            file_id = unquote(raw[3])
            return "/drive/v3/files/{fileId}", file_id, {"file_id": file_id}
    return None, None, {}


def match_route(request: Request) -> Route:
    """The endpoint ``request`` is for; ``route.response`` holds a 404/405 when there is none."""
    raw = request.raw_path.strip("/").split("/")
    pattern, spreadsheet_id, params = _pattern(raw, request.method)
    api = "drive" if raw[:1] == ["drive"] else "sheets"
    methods = _TABLE.get(pattern) if pattern else None
    if methods is None:
        return Route(
            endpoint=f"{request.method} (unknown path)",
            api=api,
            kind="read",
            response=errors.unknown_path(request.method, request.path),
        )
    entry = methods.get(request.method)
    if entry is None:
        return Route(
            endpoint=f"{request.method} {pattern}",
            api=api,
            kind="read",
            spreadsheet_id=spreadsheet_id,
            response=errors.method_not_allowed(request.method, request.path),
        )
    kind, handler = entry
    return Route(
        endpoint=f"{request.method} {pattern}",
        api=api,
        kind=kind,
        spreadsheet_id=spreadsheet_id,
        params=params,
        handler=handler,
    )
