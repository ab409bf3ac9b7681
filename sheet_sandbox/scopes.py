"""Which OAuth scopes each endpoint accepts, and how Google names the method it refuses.

An access token carries the scopes its JWT asked for; a request is served when one of them is among
the method's accepted scopes, else Google answers 403 ``ACCESS_TOKEN_SCOPE_INSUFFICIENT`` naming the
service and the method (``errors.insufficient_scopes``). The accepted scopes are the ``scopes`` of each
method in Google's discovery documents (sheets.v4.json, drive.v3.json); the method names are the ones
Google's ErrorInfo carries (``google.apps.sheets.v4.SpreadsheetsService.GetValues``,
``google.apps.drive.v3.DriveFiles.List``), the others named the same way (docs/sandbox.md).
"""

from __future__ import annotations

from dataclasses import dataclass

_AUTH = "https://www.googleapis.com/auth/"
# Sheets v4: reads accept the read-only scopes too, writes only the full ones.
_SHEETS_READ = frozenset(_AUTH + name for name in (
    "drive", "drive.file", "drive.readonly", "spreadsheets", "spreadsheets.readonly"))
_SHEETS_WRITE = frozenset(_AUTH + name for name in ("drive", "drive.file", "spreadsheets"))
# Drive v3: files.get/list and changes.* accept every Drive scope that can see metadata.
_DRIVE_READ = frozenset(_AUTH + name for name in (
    "drive", "drive.appdata", "drive.file", "drive.meet.readonly", "drive.metadata",
    "drive.metadata.readonly", "drive.photos.readonly", "drive.readonly"))
_DRIVE_WRITE = frozenset(_AUTH + name for name in ("drive", "drive.appdata", "drive.file"))
# Every scope a sandbox endpoint accepts: what a token minted for tests (``mint_token``) carries.
ALL_SCOPES = _SHEETS_READ | _DRIVE_READ

_SHEETS_SERVICE, _SHEETS_RPC = "sheets.googleapis.com", "google.apps.sheets.v4.SpreadsheetsService."
_DRIVE_SERVICE, _DRIVE_RPC = "drive.googleapis.com", "google.apps.drive.v3."


@dataclass(frozen=True)
class MethodAuth:
    service: str  # as Google's ErrorInfo names it
    method: str
    scopes: frozenset[str]  # any one of them lets the request through


def _sheets(name: str, scopes: frozenset[str]) -> MethodAuth:
    return MethodAuth(_SHEETS_SERVICE, _SHEETS_RPC + name, scopes)


def _drive(name: str, scopes: frozenset[str]) -> MethodAuth:
    return MethodAuth(_DRIVE_SERVICE, _DRIVE_RPC + name, scopes)


_SHEETS = "/v4/spreadsheets/{id}"
# Keyed by ``Route.endpoint`` (method + pattern).
_METHODS: dict[str, MethodAuth] = {
    f"GET {_SHEETS}": _sheets("GetSpreadsheet", _SHEETS_READ),
    f"POST {_SHEETS}:batchUpdate": _sheets("BatchUpdateSpreadsheet", _SHEETS_WRITE),
    f"GET {_SHEETS}/values/{{range}}": _sheets("GetValues", _SHEETS_READ),
    f"PUT {_SHEETS}/values/{{range}}": _sheets("UpdateValues", _SHEETS_WRITE),
    f"POST {_SHEETS}/values/{{range}}:clear": _sheets("ClearValues", _SHEETS_WRITE),
    f"GET {_SHEETS}/values:batchGet": _sheets("BatchGetValues", _SHEETS_READ),
    f"POST {_SHEETS}/values:batchUpdate": _sheets("BatchUpdateValues", _SHEETS_WRITE),
    f"POST {_SHEETS}/values:batchClear": _sheets("BatchClearValues", _SHEETS_WRITE),
    "GET /drive/v3/files": _drive("DriveFiles.List", _DRIVE_READ),
    "POST /drive/v3/files": _drive("DriveFiles.Create", _DRIVE_WRITE),
    "GET /drive/v3/files/{fileId}": _drive("DriveFiles.Get", _DRIVE_READ),
    "PATCH /drive/v3/files/{fileId}": _drive("DriveFiles.Update", _DRIVE_WRITE | {
        _AUTH + "drive.metadata", _AUTH + "drive.scripts"}),
    "DELETE /drive/v3/files/{fileId}": _drive("DriveFiles.Delete", _DRIVE_WRITE),
    "GET /drive/v3/changes": _drive("DriveChanges.List", _DRIVE_READ),
    "GET /drive/v3/changes/startPageToken": _drive("DriveChanges.GetStartPageToken", _DRIVE_READ),
}


def method_auth(endpoint: str) -> MethodAuth:
    """The scopes and names of a served endpoint (``Route.endpoint``); KeyError for any other."""
    return _METHODS[endpoint]
