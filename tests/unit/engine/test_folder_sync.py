"""Which spreadsheets a [[folders]] folder holds, kept current from Drive's change feed and listed
only when the feed cannot tell; what changed told once per folder. Drive is a small fake of its two
answers (the feed, a listing); the config is loaded from TOML as written."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from config_fixtures import FULL, load, secrets_folder

from monitor.core.errors import ErrorClass, SheetReadError
from monitor.engine.change_detection import ChangedFiles, DriveFile
from monitor.engine.events import FolderSheetsAdded, FolderSheetsLeft, FolderUnlisted, NoLongerMonitored
from monitor.engine.folder_sync import FOLDER_MIME, SPREADSHEET_MIME, FolderContents, FolderSync
from monitor.engine.health import FAIL, SheetHealth
from monitor.engine.runner_state import RunnerState

ROOT, SUB = "1RootFolder", "1SubFolder"
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@dataclass
class FakeDrive:
    """Drive's answers: a folder's contents, and what the feed reports after a position."""

    contents: dict[str, FolderContents]
    changes: list[ChangedFiles] = field(default_factory=list)
    feed_error: SheetReadError | None = None
    source: str = "sa-1.json"
    account: str | None = "sa-1@proj.iam.gserviceaccount.com"
    listed: list[str] = field(default_factory=list)
    asked_from: list[str] = field(default_factory=list)

    def start_position(self, timeout: float) -> str:
        return "100"

    def changed_since(self, position: str, timeout: float) -> ChangedFiles:
        self.asked_from.append(position)
        if self.feed_error is not None:
            raise self.feed_error
        return self.changes.pop(0) if self.changes else ChangedFiles(frozenset(), frozenset(), position, 1)

    def list_folder(self, folder_id: str, recursive: bool, timeout: float) -> FolderContents:
        self.listed.append(folder_id)
        found = self.contents.get(folder_id)
        if found is None:
            raise SheetReadError(ErrorClass.PERMANENT, 404, "NOT_FOUND", f"File not found: {folder_id}.")
        return found


def sheet(name: str, parent: str = ROOT, trashed: bool = False) -> DriveFile:
    return DriveFile(name, SPREADSHEET_MIME, (parent,), trashed)


def changed(position: str, files: dict[str, DriveFile] | None = None,
            removed: tuple[str, ...] = ()) -> ChangedFiles:
    files = files or {}
    return ChangedFiles(frozenset(files), frozenset(removed), position, 1, files=files)


@pytest.fixture
def config(tmp_path: Path):
    folder = secrets_folder(tmp_path)
    head = FULL[:FULL.index("[[sheets]]")]
    return lambda recursive=False, extra="": load(folder, head + extra + (
        f'[[folders]]\nid = "{ROOT}"\nprofile = "stock"\ntags = ["stores"]\n'
        f'recursive = {"true" if recursive else "false"}\n'))


def synced(config, state: RunnerState, drive: FakeDrive, at: datetime = NOW, feed: bool = True):
    events: list = []
    monitored = FolderSync(config, state, drive, "run-1", events.append).sync(at, 5.0, use_feed=feed)
    return monitored, events


def test_a_first_listing_monitors_the_folder_and_says_so_once(config):
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "Store A", "1b": "Store B"})})
    state = RunnerState()
    monitored, events = synced(config(), state, drive)
    assert {s.id: (s.name, s.profile, s.tags) for s in monitored.sheets} == {
        "1a": ("Store A", "stock", ("stores",)), "1b": ("Store B", "stock", ("stores",))}
    [added] = events
    assert isinstance(added, FolderSheetsAdded) and added.folder == "Stores" and added.count == 2
    assert state.folders.position == "100"
    assert state.folders.folders[ROOT].sheets == {"1a": "Store A", "1b": "Store B"}

    monitored, events = synced(config(), state, drive, NOW + timedelta(minutes=5))
    assert events == [] and drive.listed == [ROOT] and drive.asked_from == ["100"]
    assert len(monitored.sheets) == 2


def test_the_feed_adds_moves_out_trashes_renames_and_removes_without_a_listing(config):
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "A", "1b": "B", "1c": "C", "1d": "D"})})
    state = RunnerState()
    synced(config(), state, drive)
    drive.changes = [changed("101", {"1new": sheet("New"), "1a": sheet("A", parent="root"),
                                     "1b": sheet("B", trashed=True), "1c": sheet("C renamed"),
                                     "1elsewhere": sheet("Not ours", parent="root")}, removed=("1d",))]
    monitored, events = synced(config(), state, drive, NOW + timedelta(minutes=5))
    assert drive.listed == [ROOT]  # no second listing
    assert {s.id: s.name for s in monitored.sheets} == {"1new": "New", "1c": "C renamed"}
    added, left = events
    assert isinstance(added, FolderSheetsAdded) and added.sheets == (("1new", "New"),)
    assert isinstance(left, FolderSheetsLeft) and left.count == 3
    assert [name for _, name in left.sheets] == ["A", "B", "D"]
    assert state.folders.position == "101"


def test_a_spreadsheet_that_leaves_is_forgotten_and_told_as_the_folders_not_the_configs(config):
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "A"})})
    state = RunnerState()
    synced(config(), state, drive)
    state.health["1a"] = SheetHealth(health=FAIL)
    drive.changes = [changed("101", removed=("1a",))]
    _, events = synced(config(), state, drive, NOW + timedelta(minutes=5))
    assert "1a" not in state.health
    assert [type(event) for event in events] == [FolderSheetsLeft]
    assert not any(isinstance(event, NoLongerMonitored) for event in events)


@pytest.mark.parametrize("change", [
    changed("101", {"1newsub": DriveFile("North", FOLDER_MIME, (ROOT,))}),  # a subfolder moved in
    changed("101", {SUB: DriveFile("Sub", FOLDER_MIME, ("root",))}),  # one moved out
    changed("101", removed=(SUB,)),  # one deleted
    ChangedFiles(frozenset({"1a"}), frozenset(), "101", 1),  # a member changed, the feed says not how
])
def test_a_change_the_feed_cannot_tell_about_lists_the_folder_again(config, change):
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "A"}, (SUB,))})
    state = RunnerState()
    synced(config(recursive=True), state, drive)
    drive.changes = [change]
    synced(config(recursive=True), state, drive, NOW + timedelta(minutes=5))
    assert drive.listed == [ROOT, ROOT]


def test_a_change_elsewhere_lists_nothing(config):
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "A"}, (SUB,))})
    state = RunnerState()
    synced(config(recursive=True), state, drive)
    drive.changes = [changed("101", {"1x": DriveFile("Elsewhere", FOLDER_MIME, ("root",)),
                                     "1y": sheet("Other", parent="root")})]
    _, events = synced(config(recursive=True), state, drive, NOW + timedelta(minutes=5))
    assert drive.listed == [ROOT] and events == []


def test_a_spreadsheet_in_a_subfolder_counts_only_when_listed_recursively(config):
    drive = FakeDrive({ROOT: FolderContents("Stores", {}, (SUB,))})
    state = RunnerState()
    synced(config(recursive=True), state, drive)
    drive.changes = [changed("101", {"1deep": sheet("Deep", parent=SUB)})]
    monitored, _ = synced(config(recursive=True), state, drive, NOW + timedelta(minutes=5))
    assert [s.id for s in monitored.sheets] == ["1deep"]
    # The same folder not recursive is another listing: listed again, the subfolder's out.
    drive.contents[ROOT] = FolderContents("Stores", {})
    monitored, events = synced(config(), state, drive, NOW + timedelta(minutes=10))
    assert monitored.sheets == () and isinstance(events[-1], FolderSheetsLeft)


def test_a_feed_that_fails_lists_every_folder_and_starts_afresh(config):
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "A"})})
    state = RunnerState()
    synced(config(), state, drive)
    drive.feed_error = SheetReadError(ErrorClass.TRANSIENT, 503, "UNAVAILABLE", "unavailable")
    drive.contents[ROOT] = FolderContents("Stores", {"1a": "A", "1b": "B"})
    monitored, events = synced(config(), state, drive, NOW + timedelta(minutes=5))
    assert drive.listed == [ROOT, ROOT] and len(monitored.sheets) == 2
    assert state.folders.position is None and isinstance(events[0], FolderSheetsAdded)


def test_without_the_feed_a_folder_is_listed_once_a_round_interval(config):
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "A"})})
    state = RunnerState()
    synced(config(), state, drive, feed=False)
    synced(config(), state, drive, NOW + timedelta(minutes=1), feed=False)
    assert drive.listed == [ROOT]
    synced(config(), state, drive, NOW + timedelta(minutes=5), feed=False)
    assert drive.listed == [ROOT, ROOT]


def test_a_folder_drive_will_not_list_is_told_once_and_keeps_what_it_held(config):
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "A"})})
    state = RunnerState()
    synced(config(), state, drive)
    del drive.contents[ROOT]
    drive.feed_error = SheetReadError(ErrorClass.TRANSIENT, 503, "UNAVAILABLE", "unavailable")
    monitored, events = synced(config(), state, drive, NOW + timedelta(minutes=5))
    [unlisted] = events
    assert isinstance(unlisted, FolderUnlisted) and "File not found" in unlisted.error
    assert unlisted.account == drive.account and [s.id for s in monitored.sheets] == ["1a"]
    _, events = synced(config(), state, drive, NOW + timedelta(minutes=10))
    assert events == []


def test_a_spreadsheet_listed_under_sheets_is_monitored_as_listed_there_and_never_told(config):
    explicit = '[[sheets]]\nid = "1a"\nname = "Flagship"\nprofile = "sales"\n\n'
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "Store A", "1b": "Store B"})})
    state = RunnerState()
    monitored, events = synced(config(extra=explicit), state, drive)
    assert {s.id: (s.name, s.profile) for s in monitored.sheets} == {
        "1a": ("Flagship", "sales"), "1b": ("Store B", "stock")}
    assert events[0].sheets == (("1b", "Store B"),)


def test_a_maintenance_window_over_a_folders_tag_covers_the_folders_spreadsheets(config):
    # The config names no spreadsheet with the tag: its folder's, listed by the run, carry it.
    window = ('[[maintenance]]\ntags = ["stores"]\nevery = "sunday 02:00"\nfor = "2h"\n'
              'reason = "Stocktake"\n\n')
    loaded = config(extra=window)
    [written] = loaded.maintenance
    assert written.spreadsheet_ids == ()  # nothing listed yet
    drive = FakeDrive({ROOT: FolderContents("Stores", {"1a": "Store A", "1b": "Store B"})})
    monitored, _ = synced(loaded, RunnerState(), drive)
    [covering] = monitored.maintenance
    assert covering.spreadsheet_ids == ("1a", "1b") and covering.key == written.key  # the same window
