"""The ``[[folders]]`` folders as Drive last listed them: the state's document, apart from the
synchronisation (``monitor.engine.folder_sync``) so that the state, which holds it, does not import
the code that reads the state."""

from __future__ import annotations

from dataclasses import field

from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document


@document
class FolderListing:
    """One folder: the Google Sheets in it (and, listed recursively, in every folder below it)."""

    name: str  # Drive's name of the folder
    sheets: dict[str, str] = field(default_factory=dict)  # spreadsheet id -> Drive's name of it
    subfolders: tuple[str, ...] = ()  # listed recursively: every folder below it
    recursive: bool = False  # how it was listed (a config that changes it lists it again)
    listed_at: UtcTime | None = None  # the last files.list of it (the feed keeps it current between)
    failing_since: UtcTime | None = None  # Drive would not list it from then on (told once)
    last_error: str | None = None


@document
class FolderListings:
    """Every configured folder's listing, and the change feed's position they are current to (a
    position of their own, apart from change detection's: each is saved with what it decided)."""

    folders: dict[str, FolderListing] = field(default_factory=dict)
    position: str | None = None
    source: str | None = None  # the feed ``position`` belongs to
