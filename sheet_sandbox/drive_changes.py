"""Handlers for Drive v3's change feed: ``changes.getStartPageToken`` and ``changes.list``.

Parameters, defaults and limits follow Drive's discovery document (drive.v3.json): ``pageToken``
is required, ``pageSize`` 1..1000 (default 100), ``includeRemoved`` defaults to true, ``spaces`` to
"drive". The sandbox's Drive has no shared drives, no appDataFolder and no photos, and every file
sits in My Drive: ``restrictToMyDrive`` and the all-drives switches change nothing, a ``driveId``
names a shared drive that is not there, and only the "drive" space holds changes.
"""

from __future__ import annotations

from . import errors
from .changes import Change
from .drive_api import file_json
from .fieldmask import FieldMaskError, apply_mask, parse_mask
from .http import Request, Response
from .model import rfc3339

_DEFAULT_PAGE_SIZE = 100
_MAX_PAGE_SIZE = 1000
_SPACES = ("drive", "appDataFolder", "photos")
_BOOLEANS = ("includeCorpusRemovals", "includeItemsFromAllDrives", "includeRemoved",
             "includeTeamDriveItems", "restrictToMyDrive", "supportsAllDrives",
             "supportsTeamDrives")
# Drive v3 answers a request without ``fields`` with these; a file inside a change is cut down to
# its default fields as files.get's is.
_DEFAULT_TOKEN_FIELDS = "kind,startPageToken"
_DEFAULT_LIST_FIELDS = ("kind,nextPageToken,newStartPageToken,"
                        "changes(kind,changeType,time,removed,fileId,file(kind,id,name,mimeType))")


class _BadParameter(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__()
        self.response = response


def _invalid(location: str, message: str = "Invalid Value") -> _BadParameter:
    return _BadParameter(errors.drive_error(400, message, "invalid", location))


def _flag(request: Request, name: str, default: bool) -> bool:
    text = request.arg(name)
    if text is None:
        return default
    if text.lower() not in ("true", "false"):
        raise _invalid(name)
    return text.lower() == "true"


def _check_common(request: Request) -> None:
    """Validate what both endpoints take: the booleans and a shared drive id."""
    for name in _BOOLEANS:
        _flag(request, name, False)
    for name in ("driveId", "teamDriveId"):
        drive_id = request.arg(name)
        if drive_id is not None:  # no shared drives in the sandbox
            raise _BadParameter(errors.drive_error(
                404, f"Shared drive not found: {drive_id}", "notFound", name))


def _masked(request: Request, body: dict, default: str) -> Response:
    try:
        mask = parse_mask(request.arg("fields") or default)
    except FieldMaskError:
        return errors.drive_error(400, "Invalid Value", "invalid", "fields")  # as files.get
    return Response.json(200, apply_mask(body, mask))


def get_start_page_token(sandbox, request: Request, route) -> Response:
    """GET /drive/v3/changes/startPageToken."""
    try:
        _check_common(request)
    except _BadParameter as bad:
        return bad.response
    body = {"kind": "drive#startPageToken",
            "startPageToken": str(sandbox.store.changes.next_position())}
    return _masked(request, body, _DEFAULT_TOKEN_FIELDS)


def list_changes(sandbox, request: Request, route) -> Response:
    """GET /drive/v3/changes?pageToken=T[&pageSize=N&includeRemoved=...&spaces=...&fields=...]."""
    try:
        _check_common(request)
        start = _start_position(sandbox, request)
        size = _page_size(request)
        include_removed = _flag(request, "includeRemoved", True)
        spaces = _spaces(request)
    except _BadParameter as bad:
        return bad.response
    log = sandbox.store.changes
    if "drive" in spaces:
        page = log.page(start, size, include_removed)
        changes, next_position, new_start = page.changes, page.next_position, page.new_start
    else:  # appDataFolder and photos hold nothing in the sandbox
        changes, next_position, new_start = [], None, log.next_position()
    body: dict = {"kind": "drive#changeList",
                  "changes": [_change_json(sandbox.store, change) for change in changes]}
    if next_position is not None:
        body["nextPageToken"] = str(next_position)
    else:
        body["newStartPageToken"] = str(new_start)
    return _masked(request, body, _DEFAULT_LIST_FIELDS)


def _start_position(sandbox, request: Request) -> int:
    token = request.arg("pageToken")
    if not token:
        raise _BadParameter(errors.drive_error(400, "Required parameter: pageToken", "required",
                                               "pageToken"))
    if not token.isascii() or not token.isdigit() or not sandbox.store.changes.valid(int(token)):
        raise _invalid("pageToken")
    return int(token)


def _page_size(request: Request) -> int:
    text = request.arg("pageSize")
    if text is None:
        return _DEFAULT_PAGE_SIZE
    if not text.isascii() or not text.lstrip("-").isdigit():
        raise _invalid("pageSize")
    size = int(text)
    if not 1 <= size <= _MAX_PAGE_SIZE:
        raise _invalid("pageSize", f"Invalid value '{text}'. Values must be within the range: "
                                   f"[1, {_MAX_PAGE_SIZE}]")
    return size


def _spaces(request: Request) -> set[str]:
    text = request.arg("spaces") or "drive"
    spaces = {space.strip() for space in text.split(",")}
    if not spaces <= set(_SPACES):
        raise _invalid("spaces")
    return spaces


def _change_json(store, change: Change) -> dict:
    body: dict = {"kind": "drive#change", "changeType": "file", "time": rfc3339(change.time),
                  "removed": change.removed, "fileId": change.file_id}
    if not change.removed:
        with store.lock:
            spreadsheet = store.get(change.file_id)
            if spreadsheet is None:  # deleted after the page was cut: report what is true now
                body["removed"] = True
            else:
                body["file"] = file_json(spreadsheet)
    return body
