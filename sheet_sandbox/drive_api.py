"""Handlers for the Drive v3 endpoints the monitor and gspread use, over the sandbox's spreadsheets.

The sandbox's Drive holds the store's files: Google Sheets spreadsheets, with ``createdTime`` and
``modifiedTime`` (moved by every write), folders, and files of other types the control API puts there
(an uploaded .xlsx), which the Sheets API refuses. Every file has one parent (``parents``: a folder's
id, or "root", My Drive). ``files.create`` makes a spreadsheet or a folder, in ``parents`` if given;
``files.update`` moves a file to the trash and back (``trashed``), renames it, and moves it between
folders (``addParents``/``removeParents``); a trashed file stays readable, as at Google, until it is
deleted. ``files.list`` understands the ``q`` terms gspread and operators write (``name``,
``mimeType``, ``trashed``, ``createdTime``, ``modifiedTime`` with = != < <= > >= and ``contains``,
``'ID' in parents``, joined by ``and``), pages with ``pageSize``/``pageToken``, orders newest change
first, and lists only the files the caller may see (not those whose access a fault removed). Its
shared-drive switches are checked as Drive checks them (see ``_corpora``); the sandbox has no shared
drive, so they add nothing.
"""

from __future__ import annotations

import base64
import binascii
import re

from . import errors
from .fieldmask import FieldMaskError, apply_mask, parse_mask
from .http import BadJSON, Request, Response
from .model import FOLDER_MIME, SPREADSHEET_MIME, Spreadsheet, rfc3339

_DEFAULT_FILE_FIELDS = "kind,id,name,mimeType"
_DEFAULT_LIST_FIELDS = "kind,incompleteSearch,nextPageToken,files(kind,id,name,mimeType)"


def file_json(spreadsheet: Spreadsheet) -> dict:
    """The full Drive file resource of a spreadsheet (before any ``fields`` mask)."""
    return {
        "kind": "drive#file",
        "id": spreadsheet.id,
        "name": spreadsheet.title,
        "mimeType": spreadsheet.mime_type,
        "createdTime": rfc3339(spreadsheet.created),
        "modifiedTime": rfc3339(spreadsheet.modified),
        "trashed": spreadsheet.trashed,
        "explicitlyTrashed": spreadsheet.trashed,
        "parents": list(spreadsheet.parents),
        "webViewLink": f"https://docs.google.com/spreadsheets/d/{spreadsheet.id}/edit?usp=drivesdk",
    }


def _invalid(location: str) -> Response:
    return errors.drive_error(400, "Invalid Value", "invalid", location)


def _masked(request: Request, body: dict, default: str) -> Response:
    try:
        mask = parse_mask(request.arg("fields") or default)
    except FieldMaskError:
        return _invalid("fields")
    return Response.json(200, apply_mask(body, mask))


def get_file(sandbox, request: Request, route) -> Response:
    """GET /drive/v3/files/{fileId}."""
    spreadsheet = sandbox.store.get(route.params["file_id"])
    if spreadsheet is None:
        return errors.drive_file_not_found(route.params["file_id"])
    with sandbox.store.lock:
        body = file_json(spreadsheet)
    return _masked(request, body, _DEFAULT_FILE_FIELDS)


def delete_file(sandbox, request: Request, route) -> Response:
    """DELETE /drive/v3/files/{fileId}: gone for good (no trash), 204 with an empty body."""
    if not sandbox.store.delete(route.params["file_id"]):
        return errors.drive_file_not_found(route.params["file_id"])
    return Response(status=204, body=b"", content_type="text/html")


_UPDATABLE = ("name", "trashed")


def update_file(sandbox, request: Request, route) -> Response:
    """PATCH /drive/v3/files/{fileId} ``{"trashed": true}``: to the trash (or back with false);
    ``{"name": ...}`` renames. Either is a change in Drive's change feed; neither moves
    modifiedTime, which follows the contents."""
    file_id = route.params["file_id"]
    body = _json_object(request)
    if isinstance(body, Response):
        return body
    moved = _move(sandbox, request, file_id)
    if isinstance(moved, Response):
        return moved
    for key, value in body.items():
        valid = isinstance(value, bool) if key == "trashed" else isinstance(value, str) and value
        if key not in _UPDATABLE or not valid:
            return errors.drive_error(400, f"The sandbox's files.update changes only name (a "
                                           f"string) and trashed (true or false), got {key!r}.",
                                      "badRequest", key)
    with sandbox.store.lock:
        spreadsheet = sandbox.store.get(file_id)
        if spreadsheet is None:
            return errors.drive_file_not_found(file_id)
        if "name" in body:
            spreadsheet.properties["title"] = body["name"]
        if "trashed" in body:
            spreadsheet.trashed = body["trashed"]
        if moved is not None:
            spreadsheet.parents = moved(spreadsheet.parents)
        sandbox.store.changes.record(file_id, sandbox.store.clock.now())
        file = file_json(spreadsheet)
    return _masked(request, file, _DEFAULT_FILE_FIELDS)


def _one_parent() -> Response:
    # The words are Drive's reference (ParentReference: "A file can only have one parent folder;
    # specifying multiple parents isn't supported."); no recording shows the status and reason.
    return errors.drive_error(400, "A file can only have one parent folder; specifying multiple "
                                   "parents isn't supported.", "badRequest", "parents")


def _move(sandbox, request: Request, file_id: str):
    """``addParents``/``removeParents`` (comma-separated ids) as a function of the file's parents,
    None when neither is given, or Drive's refusal: a parent that is not a folder the caller sees is
    404 "File not found", and a file may have only one parent (Drive's single-parent rule: moving
    is adding the new folder and removing the old one in one request)."""
    added = [part for part in (request.arg("addParents") or "").split(",") if part]
    removed = [part for part in (request.arg("removeParents") or "").split(",") if part]
    if not added and not removed:
        return None
    for parent in added:
        if parent != "root":
            folder = sandbox.store.get(parent)
            if folder is None or not folder.is_folder or sandbox.store.changes.hidden(parent):
                return errors.drive_file_not_found(parent)
    spreadsheet = sandbox.store.get(file_id)
    if spreadsheet is not None and len(set(spreadsheet.parents) - set(removed) | set(added)) > 1:
        return _one_parent()

    def parents(before: list[str]) -> list[str]:
        return [*[p for p in before if p not in removed], *[p for p in added if p not in before]]

    return parents


def _json_object(request: Request) -> dict | Response:
    """The request's JSON object (an empty body is ``{}``), or Drive's 400 for anything else."""
    try:
        body = request.json() or {}
    except BadJSON:
        body = None
    if not isinstance(body, dict):
        return errors.drive_error(400, "Invalid JSON payload received.", "parseError")
    return body


def create_file(sandbox, request: Request, route) -> Response:
    """POST /drive/v3/files: a new spreadsheet with one 1000 x 26 tab "Sheet1"."""
    body = _json_object(request)
    if isinstance(body, Response):
        return body
    mime = body.get("mimeType")
    if mime not in (SPREADSHEET_MIME, FOLDER_MIME):
        return errors.drive_error(
            400, f"The sandbox's Drive creates only Google Sheets files and folders; mimeType must be "
                 f"{SPREADSHEET_MIME} or {FOLDER_MIME}, got {mime!r}.", "badRequest", "mimeType")
    name = body.get("name") or ("Untitled folder" if mime == FOLDER_MIME else "Untitled spreadsheet")
    if not isinstance(name, str):
        return _invalid("name")
    parents = body.get("parents", ["root"])
    if not isinstance(parents, list) or not all(isinstance(parent, str) for parent in parents):
        return _invalid("parents")
    if len(parents) > 1:
        return _one_parent()
    for parent in parents:
        folder = sandbox.store.get(parent) if parent != "root" else None
        if parent != "root" and (folder is None or not folder.is_folder
                                 or sandbox.store.changes.hidden(parent)):
            return errors.drive_file_not_found(parent)
    spreadsheet = sandbox.store.create(name, mime, parents or ["root"])
    return _masked(request, file_json(spreadsheet), _DEFAULT_FILE_FIELDS)


def list_files(sandbox, request: Request, route) -> Response:
    """GET /drive/v3/files?q=...&pageSize=...&pageToken=...&fields=..."""
    try:
        matches = compile_query(request.arg("q") or "")
    except ValueError:
        return _invalid("q")
    size_text = request.arg("pageSize") or "100"
    if not size_text.isdigit() or not 1 <= int(size_text) <= 1000:
        return _invalid("pageSize")
    size = int(size_text)
    try:
        offset = _decode_token(request.arg("pageToken") or "")
    except ValueError:
        return _invalid("pageToken")
    refusal = _corpora(request)
    if refusal is not None:
        return refusal
    with sandbox.store.lock:
        hidden = sandbox.store.changes.hidden
        files = [file_json(s) for s in sandbox.store.all() if not hidden(s.id)]
    files = [f for f in files if matches(f)]
    files.sort(key=lambda f: (f["modifiedTime"], f["id"]), reverse=True)
    body: dict = {"kind": "drive#fileList", "incompleteSearch": False,
                  "files": files[offset : offset + size]}
    if offset + size < len(files):
        body["nextPageToken"] = _encode_token(offset + size)
    return _masked(request, body, _DEFAULT_LIST_FIELDS)


_FLAGS = ("supportsAllDrives", "includeItemsFromAllDrives", "supportsTeamDrives", "includeTeamDriveItems")
_CORPORA = ("user", "domain", "drive", "allDrives")


def _corpora(request: Request) -> Response | None:
    """Drive's refusals of files.list's shared-drive switches, else None: a switch that is not a
    boolean (400 invalid), a ``corpora`` Drive does not know (400 invalid), ``corpora`` "drive" or
    "allDrives" (or a ``driveId``) without ``includeItemsFromAllDrives`` (Drive's 403, word for word),
    "drive" without a ``driveId`` (400 required), and a ``driveId`` (the sandbox has no shared drive:
    404, as changes.list answers it)."""
    for name in _FLAGS:
        text = request.arg(name)
        if text is not None and text.lower() not in ("true", "false"):
            return _invalid(name)
    corpora, drive_id = request.arg("corpora") or "user", request.arg("driveId")
    if corpora not in _CORPORA:
        return _invalid("corpora")
    included = (request.arg("includeItemsFromAllDrives") or "").lower() == "true"
    if (corpora in ("drive", "allDrives") or drive_id is not None) and not included:
        return errors.drive_error(403, "The includeItemsFromAllDrives parameter must be set to true when "
                                       "driveId is specified or corpora contains drive or allDrives.",
                                  "invalid", "includeItemsFromAllDrives")
    if corpora == "drive" and drive_id is None:
        return errors.drive_error(400, "Required parameter: driveId", "required", "driveId")
    if drive_id is not None:
        return errors.drive_error(404, f"Shared drive not found: {drive_id}", "notFound", "driveId")
    return None


def _encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"sandbox-offset:{offset}".encode()).decode().rstrip("=")


def _decode_token(token: str) -> int:
    if not token:
        return 0
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError(token) from None
    prefix, _, number = text.partition(":")
    if prefix != "sandbox-offset" or not number.isdigit():
        raise ValueError(token)
    return int(number)


# -- q ---------------------------------------------------------------------------------------

_TERM = re.compile(
    r"""\s*(?:
        (?P<field>name|mimeType|trashed|createdTime|modifiedTime|fullText)\s*
        (?P<op>!=|<=|>=|=|<|>|\bcontains\b)\s*
        (?P<value>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|true\b|false\b)
      | (?P<parent>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s+in\s+parents\b
    )\s*""",
    re.VERBOSE | re.IGNORECASE,
)
_AND = re.compile(r"and\b\s*", re.IGNORECASE)
_FIELDS = {"name": "name", "mimetype": "mimeType", "trashed": "trashed",
           "createdtime": "createdTime", "modifiedtime": "modifiedTime", "fulltext": "name"}


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def compile_query(q: str):
    """A predicate over file resources for Drive's ``q``; ValueError if the sandbox can't read it.

    Terms are scanned one after another (not split on "and"), so a quoted name may hold " and ".
    """
    tests = []
    pos, text = 0, q.strip()
    while pos < len(text):
        match = _TERM.match(text, pos)
        if not match:
            raise ValueError(text[pos:])
        pos = match.end()
        if pos < len(text):
            joiner = _AND.match(text, pos)
            if not joiner:
                raise ValueError(text[pos:])
            pos = joiner.end()
            if pos >= len(text):
                raise ValueError("dangling 'and'")
        if match.group("parent"):
            parent = _unquote(match.group("parent"))
            tests.append(lambda f, p=parent: p in f["parents"])
            continue
        field = _FIELDS[match.group("field").lower()]
        op = match.group("op").lower()
        raw = match.group("value")
        value: object = raw.lower() == "true" if raw.lower() in ("true", "false") else _unquote(raw)
        if field.endswith("Time") and isinstance(value, str):
            value = _normal_time(value)
        tests.append(_comparison(field, op, value))
    return lambda f: all(test(f) for test in tests)


def _normal_time(text: str) -> str:
    # Drive accepts '2026-01-05T03:00:00' (UTC) and full RFC 3339; compare as our own format.
    text = text.rstrip("Z")
    if "." not in text:
        text += ".000"
    return text + "Z"


def _comparison(field: str, op: str, value: object):
    def test(f: dict) -> bool:
        actual = f[field]
        if op == "contains":
            return isinstance(value, str) and value.lower() in str(actual).lower()
        if op in ("=", "!="):
            return (actual == value) == (op == "=")
        return {"<": actual < value, "<=": actual <= value, ">": actual > value,
                ">=": actual >= value}[op]

    return test
