"""Drive's change feed: which files changed since a saved position (``changes.getStartPageToken``,
``changes.list``), read with a credential's gspread client.

Drive keeps, per user, a log of changes to the files they can see; a *position* (Google's page token)
is an opaque place in it. :meth:`DriveChangeFeed.changed_since` pages through everything after a
position and returns the files that changed, those of them now in the trash (``trashed``: still
readable, and deleted for good 30 days later), the files that left the user's view (deleted, or no
longer shared: ``removed``), and the position to ask from next time (``newStartPageToken``).
A file edited several times appears once. Errors are classified like every other request
(``monitor.google.reader.classified``) and raised as ``SheetReadError``. The feed is one credential's
view (the run asks its first credential's, which sees every spreadsheet the run reads); it implements
the run's ``monitor.engine.change_detection.ChangeFeed``.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.timefmt import parse_utc
from monitor.engine.change_detection import CHANGES_PER_FEED_REQUEST, ChangedFiles, DriveFile
from monitor.google.reader import GspreadReader, classified

CHANGES_URL = "https://www.googleapis.com/drive/v3/changes"
# Drive's largest page: a feed of a thousand changes is one request.
PAGE_SIZE = CHANGES_PER_FEED_REQUEST
# Only what deciding needs: which file, whether it left the user's view, when it was modified, and
# where it is now (a [[folders]] folder's members: its name, type and folder).
_FIELDS = ("nextPageToken,newStartPageToken,"
           "changes(fileId,removed,file(name,mimeType,parents,trashed,modifiedTime))")
_ALL_DRIVES = {"supportsAllDrives": "true", "includeItemsFromAllDrives": "true"}


class DriveChangeFeed:
    """``credential``'s Drive change feed, through a reader's client for it."""

    def __init__(self, reader: GspreadReader, credential: str) -> None:
        self._reader = reader
        self.credential = credential
        self.source = Path(credential).name  # names the feed in the state, like the run's own stats

    def start_position(self, timeout: float) -> str:
        """The feed's current end: changes after it are what a later call reports."""
        with classified(timeout, self.credential):
            client = self._reader.client_for(self.credential, timeout)
            response = client.http_client.request(
                "get", f"{CHANGES_URL}/startPageToken", params={"supportsAllDrives": "true"}
            )
            return str(response.json()["startPageToken"])

    def changed_since(self, position: str, timeout: float, page_size: int = PAGE_SIZE) -> ChangedFiles:
        """Every change after ``position``, all pages, within ``timeout`` seconds in all (a feed of
        many pages must not outrun the run's budget); the latest change of a file decides whether
        it changed or was removed."""
        latest: dict[str, str] = {}  # file id -> "removed", "trashed" or "changed"
        edited: dict[str, datetime] = {}  # file id -> its latest modifiedTime reported
        files: dict[str, DriveFile] = {}  # file id -> the file as its latest change shows it
        token, requests = position, 0
        until = time.monotonic() + timeout
        with classified(timeout, self.credential):
            client = self._reader.client_for(self.credential, timeout)
            while True:
                left = until - time.monotonic()
                if left <= 0:
                    raise SheetReadError(ErrorClass.TRANSIENT, None, None,
                                         f"Drive's change feed did not end within {timeout:.1f} s "
                                         f"({requests} pages)")
                client.set_timeout(max(left, 0.1))
                params = {"pageToken": token, "pageSize": page_size, "fields": _FIELDS,
                          "includeRemoved": "true", **_ALL_DRIVES}
                body = client.http_client.request("get", CHANGES_URL, params=params).json()
                requests += 1
                for change in body.get("changes", ()):
                    file_id = change.get("fileId")
                    if file_id:
                        latest[file_id] = _what_happened(change)
                        files.pop(file_id, None)
                        if (file := _drive_file(change)) is not None:
                            files[file_id] = file
                        modified = _modified_time(change)
                        if modified is not None and (file_id not in edited or modified > edited[file_id]):
                            edited[file_id] = modified
                if "newStartPageToken" in body:
                    token = body["newStartPageToken"]
                    break
                token = body["nextPageToken"]  # a page without either is not Drive's: KeyError, classified
        return ChangedFiles(
            changed=frozenset(file_id for file_id, what in latest.items() if what != "removed"),
            removed=frozenset(file_id for file_id, what in latest.items() if what == "removed"),
            position=str(token), requests=requests,
            trashed=frozenset(file_id for file_id, what in latest.items() if what == "trashed"),
            edited=edited, files=files,
        )


def _drive_file(change: dict) -> DriveFile | None:
    """The file as the change shows it (None for a file gone from view, or one Drive did not show)."""
    file = change.get("file")
    if change.get("removed") or not isinstance(file, dict):
        return None
    parents = file.get("parents")
    return DriveFile(str(file.get("name") or ""), str(file.get("mimeType") or ""),
                     tuple(str(parent) for parent in parents) if isinstance(parents, list) else (),
                     file.get("trashed") is True)


def _modified_time(change: dict) -> datetime | None:
    """When the file was last modified, as the change tells it (none for a file gone from view)."""
    text = (change.get("file") or {}).get("modifiedTime")
    try:
        return parse_utc(text) if isinstance(text, str) else None
    except ValueError:
        return None  # not a time Drive would write: the change still counts, its moment unknown


def _what_happened(change: dict) -> str:
    """A change's file, as of that change: gone from view ("removed": Drive's word for deletion or
    lost access), in the trash (a change of the file with ``trashed`` true: the Change resource and
    files.update's ``trashed``), or there."""
    if change.get("removed"):
        return "removed"
    return "trashed" if (change.get("file") or {}).get("trashed") else "changed"
