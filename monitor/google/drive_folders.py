"""A ``[[folders]]`` folder's Google Sheets, as Drive lists them (``files.get``, ``files.list``), and
the change feed that keeps the listing current: ``monitor.engine.folder_sync.FolderDrive``.

A listing asks ``files.get`` of the folder first (its name for messages, and a clear 404 when the
account cannot see it: ``files.list`` would answer an empty list), then ``files.list`` with
``'ID' in parents and mimeType = '<Sheets>' and trashed = false``, a thousand a page; recursively,
the folders below it the same way (``mimeType = '<folder>'``), each once. Both ask with
``supportsAllDrives`` and ``includeItemsFromAllDrives``: a folder on a shared drive is listed only
with both (without them Drive answers nothing, not an error). Errors are classified like every
other request (``monitor.google.reader.classified``).
"""

from __future__ import annotations

import time

from monitor.core.errors import ErrorClass, SheetReadError
from monitor.engine.change_detection import ChangedFiles
from monitor.engine.folder_sync import FOLDER_MIME, SPREADSHEET_MIME, FolderContents
from monitor.google.drive_feed import DriveChangeFeed
from monitor.google.reader import GspreadReader, classified

FILES_URL = "https://www.googleapis.com/drive/v3/files"
PAGE_SIZE = 1000  # Drive's largest page of files.list
_ALL_DRIVES = {"supportsAllDrives": "true", "includeItemsFromAllDrives": "true"}


class DriveFolders:
    """Folders and the change feed as ``credential`` sees them, through a reader's client for it."""

    def __init__(self, reader: GspreadReader, credential: str, account: str | None) -> None:
        self._reader = reader
        self._feed = DriveChangeFeed(reader, credential)
        self.credential = credential
        self.source = self._feed.source
        self.account = account

    def start_position(self, timeout: float) -> str:
        return self._feed.start_position(timeout)

    def changed_since(self, position: str, timeout: float) -> ChangedFiles:
        return self._feed.changed_since(position, timeout)

    def list_folder(self, folder_id: str, recursive: bool, timeout: float) -> FolderContents:
        """The folder's name and spreadsheets (and its subfolders', when ``recursive``), all within
        ``timeout`` seconds; a file that is not a folder is refused as the config's mistake."""
        until = time.monotonic() + timeout
        with classified(timeout, self.credential):
            client = self._reader.client_for(self.credential, timeout)
            folder = client.http_client.request("get", f"{FILES_URL}/{folder_id}", params={
                "fields": "id,name,mimeType", "supportsAllDrives": "true"}).json()
            if folder.get("mimeType") != FOLDER_MIME:
                raise SheetReadError(ErrorClass.PERMANENT, 200, None,
                                     f"{folder.get('name') or folder_id!r} is not a folder "
                                     f"({folder.get('mimeType')}): list a spreadsheet under [[sheets]]")
            sheets: dict[str, str] = {}
            subfolders: list[str] = []
            pending, requests = [folder_id], 1
            while pending:
                parent = pending.pop(0)
                found, pages = _children(client, parent, SPREADSHEET_MIME, until)
                sheets.update(found)
                requests += pages
                if recursive:
                    found, pages = _children(client, parent, FOLDER_MIME, until)
                    below = [file_id for file_id, _ in found
                             if file_id not in subfolders and file_id != folder_id]
                    requests += pages
                    subfolders += below
                    pending += below
        return FolderContents(str(folder.get("name") or folder_id), sheets, tuple(subfolders), requests)


def _children(client, parent: str, mime: str, until: float) -> tuple[list[tuple[str, str]], int]:
    """(id, name) of every file of type ``mime`` in ``parent`` and not trashed, all pages; and
    how many requests it took."""
    found, token, pages = [], None, 0
    query = f"'{parent}' in parents and mimeType = '{mime}' and trashed = false"
    while True:
        left = until - time.monotonic()
        if left <= 0:
            raise SheetReadError(ErrorClass.TRANSIENT, None, None,
                                 f"listing the folder did not end in time ({pages} pages)")
        client.set_timeout(max(left, 0.1))
        params = {"q": query, "pageSize": PAGE_SIZE, "fields": "nextPageToken,files(id,name)",
                  **_ALL_DRIVES, **({"pageToken": token} if token else {})}
        body = client.http_client.request("get", FILES_URL, params=params).json()
        pages += 1
        found += [(str(file["id"]), str(file.get("name") or file["id"])) for file in body.get("files", ())]
        token = body.get("nextPageToken")
        if not token:
            return found, pages
