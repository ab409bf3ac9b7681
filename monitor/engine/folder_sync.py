"""Which spreadsheets the ``[[folders]]`` folders hold: kept current in the state, told once.

A folder's listing (``FolderListing``: the Google Sheets in it, and listed recursively its subfolders)
lives in the state, so a run between cron ticks does not list Drive each time. Each run, before
anything counts the spreadsheets, brings the listings up to date (:meth:`FolderSync.sync`):

* with change detection on, from Drive's change feed, asked from the listings' own position: a
  spreadsheet whose parent is now a folder of the tree is in; one moved out, trashed, deleted or
  unshared is out; a renamed one keeps its place under its new name;
* with a ``files.list`` of the folder when the feed cannot tell: the folder never listed (or listed
  otherwise recursive), no position of this feed to ask from (every folder then), the feed failing,
  a folder of the tree changed (a subfolder moved in or out carries files the feed does not name),
  a spreadsheet changed that the feed does not describe;
* with change detection off, with a ``files.list`` once a round interval.

What the listings now hold that was not monitored before is told once per folder ("now monitoring
..."), what left them once ("no longer in the folder"); a spreadsheet also listed under ``[[sheets]]``
is monitored as listed there and told neither. The caller saves the listings, their position and
those events in one save: a run killed before it asks again from the old position, and nothing was
told; a run killed after it told exactly once. A folder Drive will not list keeps what it held
(told once until it lists again).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from monitor.config.model import Config, Folder, config_fingerprint
from monitor.core.errors import SheetReadError
from monitor.core.logs import log_event
from monitor.engine.change_detection import ChangedFiles
from monitor.engine.events import (
    Event,
    FolderSheetsAdded,
    FolderSheetsLeft,
    FolderUnlisted,
    NoLongerMonitored,
)
from monitor.engine.folder_listing import FolderListing, FolderListings
from monitor.engine.runner_state import RunnerState
from monitor.engine.unconfigured import forget_unconfigured

SPREADSHEET_MIME = "application/vnd.google-apps.spreadsheet"
FOLDER_MIME = "application/vnd.google-apps.folder"
NAMED = 10  # spreadsheets an event names; the rest are counted


@dataclass(frozen=True)
class FolderContents:
    """One ``files.list`` of a folder (and, recursively, of every folder below it)."""

    name: str
    sheets: Mapping[str, str]  # spreadsheet id -> name
    subfolders: tuple[str, ...] = ()
    requests: int = 1


class FolderDrive(Protocol):
    """Drive as the folders need it (``monitor.google.drive_folders`` implements it). Every method
    raises ``SheetReadError`` (already classified), never a library's exception."""

    source: str  # whose feed it is
    account: str | None  # the service account's e-mail, to share a folder with

    def start_position(self, timeout: float) -> str: ...

    def changed_since(self, position: str, timeout: float) -> ChangedFiles: ...

    def list_folder(self, folder_id: str, recursive: bool, timeout: float) -> FolderContents: ...


def monitored_config(config: Config, listings: FolderListings) -> Config:
    """``config`` with every spreadsheet its folders' listings hold, as each folder monitors it;
    a spreadsheet listed under ``[[sheets]]`` stays as listed there, one in two folders is the first
    folder's; a maintenance window over a folder's tag covers the folder's spreadsheets."""
    if not config.folders:
        return config
    sheets = list(config.sheets)
    taken = {sheet.id for sheet in sheets}
    added = []
    for folder, spreadsheet_id, name in _members(config.folders, listings):
        if spreadsheet_id not in taken:
            taken.add(spreadsheet_id)
            added.append(folder.sheet(spreadsheet_id, name))
    sheets += added
    maintenance = tuple(window.also_covering(added) for window in config.maintenance)  # by their tags
    return config.model_copy(update={"sheets": tuple(sheets), "fingerprint": config_fingerprint(sheets),
                                     "maintenance": maintenance})


def _members(folders: Sequence[Folder], listings: FolderListings):
    for folder in folders:
        listing = listings.folders.get(folder.id)
        if listing is not None:
            for spreadsheet_id, name in sorted(listing.sheets.items(), key=lambda item: item[1]):
                yield folder, spreadsheet_id, name


def folder_name(folder: Folder, listing: FolderListing | None) -> str:
    """What people call the folder: the config's name, else Drive's, else its id."""
    return folder.name or (listing.name if listing is not None and listing.name else folder.id)


class FolderSync:
    """Brings ``state.folders`` up to date with Drive for ``config``'s folders, telling what changed."""

    def __init__(self, config: Config, state: RunnerState, drive: FolderDrive, run_id: str,
                 emit: Callable[[Event], None]) -> None:
        self.config = config
        self.state = state
        self.drive = drive
        self.run_id = run_id
        self._emit = emit
        self.drive_requests = 0

    def sync(self, now: datetime, timeout: float, use_feed: bool) -> Config:
        """The listings brought up to date (in the state, to be saved by the caller with the events
        told), and the config with their spreadsheets."""
        stored = self.state.folders
        folders = self.config.folders
        listings = {folder.id: listing for folder in folders
                    if (listing := stored.folders.get(folder.id)) is not None
                    and listing.recursive == folder.recursive}
        unlisted = {folder.id for folder in folders if folder.id not in listings}
        position, source = stored.position, stored.source
        if use_feed:
            position, to_list = self._follow_feed(listings, position, source, timeout)
            source = self.drive.source
        else:
            position = source = None
            every = self.config.run.round_interval
            to_list = {fid for fid, listing in listings.items()
                       if listing.listed_at is None or now - listing.listed_at >= every}
        for folder in folders:
            if folder.id in unlisted or folder.id in to_list:
                self._list(folder, listings, now, timeout)
        fresh = FolderListings(listings, position, source)
        left = self._tell(stored, fresh, now)
        if fresh != stored:
            self.state.folders = fresh
        monitored = monitored_config(self.config, fresh)
        # What left a folder is forgotten now, as a spreadsheet removed from the config is, and told
        # once: as no longer in its folder, not also as removed from the config.
        forget_unconfigured(self.state, monitored.sheets_by_id.keys(), now, self.run_id,
                            lambda event: None if isinstance(event, NoLongerMonitored)
                            and event.spreadsheet_id in left else self._emit(event))
        return monitored

    def _follow_feed(self, listings: dict[str, FolderListing], position: str | None, source: str | None,
                     timeout: float) -> tuple[str | None, set[str]]:
        """The feed's new position and the folders it cannot tell about (to be listed); the listings
        it can tell about are brought up to date in place."""
        everything = set(listings)
        try:
            if position is None or source != self.drive.source:
                self.drive_requests += 1
                return self.drive.start_position(timeout), everything  # nothing before it is known
            changes = self.drive.changed_since(position, timeout)
        except SheetReadError as error:
            log_event("folder_feed_failed", logging.WARNING, status=error.http_status, error=error.message)
            return None, everything  # listed now; the next run starts from a fresh position
        self.drive_requests += changes.requests
        by_id = {folder.id: folder for folder in self.config.folders}
        to_list = set()
        for folder_id, listing in listings.items():
            updated = _followed(by_id[folder_id], listing, changes)
            if updated is None:
                to_list.add(folder_id)
            else:
                listings[folder_id] = updated
        return changes.position, to_list

    def _list(self, folder: Folder, listings: dict[str, FolderListing], now: datetime,
              timeout: float) -> None:
        before = listings.get(folder.id)
        try:
            contents = self.drive.list_folder(folder.id, folder.recursive, timeout)
        except SheetReadError as error:
            self.drive_requests += 1
            log_event("folder_unlisted", logging.WARNING, folder=folder.id, status=error.http_status,
                      error=error.message)
            kept = before or FolderListing(name="", recursive=folder.recursive)
            if kept.failing_since is None:
                self._emit(FolderUnlisted(at=now, run_id=self.run_id, folder_id=folder.id,
                                          folder=folder_name(folder, kept), error=error.message[:200],
                                          account=self.drive.account))
            listings[folder.id] = replace(kept, failing_since=kept.failing_since or now,
                                          last_error=error.message[:200])
            return
        self.drive_requests += contents.requests
        listings[folder.id] = FolderListing(contents.name, dict(contents.sheets), contents.subfolders,
                                            folder.recursive, now)
        log_event("folder_listed", folder=folder.id, sheets=len(contents.sheets),
                  subfolders=len(contents.subfolders), requests=contents.requests)

    def _tell(self, before: FolderListings, after: FolderListings, now: datetime) -> set[str]:
        """One event per folder for the spreadsheets it brought, one for those that left it (whose
        ids are returned)."""
        explicit = {sheet.id for sheet in self.config.sheets}
        was = _owners(self.config.folders, before, explicit)
        now_in = _owners(self.config.folders, after, explicit)
        names_before = {sid: name for _, sid, name in _members(self.config.folders, before)}
        names_after = {sid: name for _, sid, name in _members(self.config.folders, after)}
        for folder in self.config.folders:
            listing = after.folders.get(folder.id) or before.folders.get(folder.id)
            name = folder_name(folder, listing)
            added = sorted((names_after[sid], sid) for sid, fid in now_in.items()
                           if fid == folder.id and sid not in was)
            left = sorted((names_before[sid], sid) for sid, fid in was.items()
                          if fid == folder.id and sid not in now_in)
            sheet = {"at": now, "run_id": self.run_id, "folder_id": folder.id, "folder": name}
            if added:
                self._emit(FolderSheetsAdded(**sheet, sheets=_named(added), count=len(added)))
            if left:
                self._emit(FolderSheetsLeft(**sheet, sheets=_named(left), count=len(left)))
        return {sid for sid in was if sid not in now_in}


def _owners(folders: Sequence[Folder], listings: FolderListings, explicit: Collection[str]) -> dict[str, str]:
    """Spreadsheet id -> the folder it is monitored through (none listed under [[sheets]])."""
    owners: dict[str, str] = {}
    for folder, spreadsheet_id, _ in _members(folders, listings):
        if spreadsheet_id not in explicit:
            owners.setdefault(spreadsheet_id, folder.id)
    return owners


def _named(found: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple((sid, name) for name, sid in found[:NAMED])


def _followed(folder: Folder, listing: FolderListing, changes: ChangedFiles) -> FolderListing | None:
    """``listing`` after ``changes``, or None when they cannot tell (the folder must be listed): a
    folder of its tree changed, or a spreadsheet changed that the feed did not describe."""
    tree = {folder.id, *listing.subfolders}
    sheets = dict(listing.sheets)
    for file_id in changes.removed:
        if file_id in tree:
            return None  # the folder itself, or one below it, left the account's view
        sheets.pop(file_id, None)
    for file_id in changes.changed:
        file = changes.files.get(file_id)
        if file is None:
            if file_id in sheets or file_id in tree:
                return None
            continue
        inside = bool(tree.intersection(file.parents)) and not file.trashed
        if file.mime_type == FOLDER_MIME:
            if file_id in tree or (inside and folder.recursive):
                return None  # renamed, moved, trashed, or a new subfolder with what it holds
        elif file.mime_type == SPREADSHEET_MIME and inside:
            sheets[file_id] = file.name
        else:
            sheets.pop(file_id, None)
    return listing if sheets == listing.sheets else replace(listing, sheets=sheets)

