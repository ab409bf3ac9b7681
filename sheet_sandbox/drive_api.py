"""Handlers for the Drive v3 endpoints the monitor and gspread use, over the sandbox's spreadsheets.

The sandbox's Drive holds the store's files: Google Sheets spreadsheets, with ``createdTime`` and
``modifiedTime`` (moved by every write), and files of other types the control API puts there (an
uploaded .xlsx), which the Sheets API refuses. ``files.update`` moves a file to the trash and back
(``trashed``) and renames it; a trashed file stays readable, as at Google, until it is deleted.
``files.list`` understands the ``q``
terms gspread and operators write (``name``, ``mimeType``, ``trashed``, ``createdTime``,
``modifiedTime`` with = != < <= > >= and ``contains``, ``'root' in parents``, joined by ``and``),
pages with ``pageSize``/``pageToken`` and orders newest change first.
"""

from __future__ import annotations

import base64
import binascii
import re

from . import errors
from .fieldmask import FieldMaskError, apply_mask, parse_mask
from .http import BadJSON, Request, Response
from .model import SPREADSHEET_MIME, Spreadsheet, rfc3339

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
        "parents": ["root"],
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
        sandbox.store.changes.record(file_id, sandbox.store.clock.now())
        file = file_json(spreadsheet)
    return _masked(request, file, _DEFAULT_FILE_FIELDS)


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
    if mime != SPREADSHEET_MIME:
        return errors.drive_error(
            400, f"The sandbox's Drive stores only Google Sheets files; mimeType must be "
                 f"{SPREADSHEET_MIME}, got {mime!r}.", "badRequest", "mimeType")
    name = body.get("name") or "Untitled spreadsheet"
    if not isinstance(name, str):
        return _invalid("name")
    spreadsheet = sandbox.store.create(name)
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
    with sandbox.store.lock:
        files = [file_json(s) for s in sandbox.store.all()]
    files = [f for f in files if matches(f)]
    files.sort(key=lambda f: (f["modifiedTime"], f["id"]), reverse=True)
    body: dict = {"kind": "drive#fileList", "incompleteSearch": False,
                  "files": files[offset : offset + size]}
    if offset + size < len(files):
        body["nextPageToken"] = _encode_token(offset + size)
    return _masked(request, body, _DEFAULT_LIST_FIELDS)


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
