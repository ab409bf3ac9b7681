"""The file backend: snapshot, journal, compaction, the last good copy, file modes, schema, file locks.

The contract every backend shares is tested in tests/test_storage_contract.py; crashes and lock-free
readers racing a writer process in tests/test_storage_crash.py.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tinydb import TinyDB
from tinydb.storages import JSONStorage

from monitor.core.clock import ManualClock
from monitor.storage import FileStore, FlockLock, StateError, StatePaths, StateUnreadable, StateVersionError
from monitor.storage.format import parse_state
from monitor.storage.journal import frame, header, parse_journal

REPO = Path(__file__).resolve().parents[1]
CLOCK_START = datetime(2026, 1, 5, 3, 47, 12, tzinfo=UTC)
STAMP = "20260105T034712Z"


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def paths(state_dir: Path) -> StatePaths:
    return StatePaths.in_dir(state_dir)


def open_store(state_dir: Path, **kwargs) -> FileStore:
    return FileStore.in_dir(state_dir, clock=ManualClock(CLOCK_START), **kwargs)


def killed_writer(state_dir: Path, *updates: dict[str, str]) -> None:
    """Leave the files as a run killed after these updates would: journal records, no compaction."""
    store = open_store(state_dir)
    for values in updates:
        store.update(values)
    # Not closed, as a killed process never closes: the store is abandoned with its journal open.


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime: proof that nothing was touched."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


def snapshot_properties(path: Path) -> dict[str, str]:
    return parse_state(path.read_bytes()).properties


def journal_of(path: Path):
    return parse_journal(path.read_bytes(), str(path))


def run_python(code: str, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env, stdout=subprocess.PIPE, text=True, **kwargs,
    )


# -- the files and what each write costs -----------------------------------------------------------


def test_state_files_are_private_whatever_the_umask(state_dir, paths):
    old_umask = os.umask(0)
    try:
        for n in "12":
            with open_store(state_dir) as store:
                store.set_property("a", n)
                store.set_property("b", n)
        lock = store.lock()
        assert lock.try_acquire()
        lock.release()
    finally:
        os.umask(old_umask)
    assert mode(state_dir) == 0o700
    for path in (*paths.files, lock.path):
        assert mode(path) == 0o600, path


def test_an_existing_folder_keeps_its_mode(state_dir):
    state_dir.mkdir(mode=0o750)
    os.chmod(state_dir, 0o750)
    open_store(state_dir).set_property("a", "1")
    assert mode(state_dir) == 0o750


def test_the_snapshot_is_a_plain_tinydb_database(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("heartbeat", '{"status":"finished"}')
        store.set_property("cursor", "3")
    db = TinyDB(paths.snapshot, storage=JSONStorage, access_mode="r")
    assert db.table("properties").get(doc_id=1) == {"heartbeat": '{"status":"finished"}', "cursor": "3"}
    assert db.table("meta").get(doc_id=1) == {"schema_version": 2, "generation": store.generation}
    db.close()


def test_an_update_appends_one_journal_record_and_leaves_the_snapshot_alone(state_dir, paths):
    store = open_store(state_dir)
    store.set_properties({f"sheet:{n}": "x" * 300 for n in range(2000)})  # the first write: a snapshot
    before = files(state_dir)
    store.update({"sheet:7": "changed"}, deleted=["sheet:8"])
    after = files(state_dir)
    assert after[paths.snapshot.name] == before[paths.snapshot.name]
    assert after[paths.backup.name] == before[paths.backup.name]
    journal = paths.journal.read_bytes()
    record = frame({"set": {"sheet:7": "changed"}, "del": ["sheet:8"]})
    assert journal == header(store.generation) + record  # what changed, and only that
    assert journal_of(paths.journal).changes[0].values == {"sheet:7": "changed"}
    assert store.journal_size == len(journal)


def test_an_idle_writer_writes_nothing(state_dir, paths):
    open_store(state_dir).close()
    assert not state_dir.exists() or not any(state_dir.iterdir())
    with open_store(state_dir) as store:
        store.set_property("a", "1")
    before = files(state_dir)
    with open_store(state_dir) as store:
        store.set_property("a", "1")  # no change
    assert files(state_dir) == before


def test_close_compacts_keeping_the_previous_snapshot_and_the_journal_it_was_built_from(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("n", "1")
    first = store.generation
    with open_store(state_dir) as store:
        store.set_property("n", "2")
        store.set_property("m", "3")
        compacted = paths.journal.read_bytes()
        assert store.compactions == 0
    assert store.compactions == 1 and store.generation == first + 1
    assert snapshot_properties(paths.snapshot) == {"n": "2", "m": "3"}
    assert snapshot_properties(paths.backup) == {"n": "1"}
    assert paths.journal_backup.read_bytes() == compacted
    assert paths.journal.read_bytes() == header(first + 1)
    assert paths.snapshot.stat().st_ino != paths.backup.stat().st_ino


def test_a_writer_compacts_at_once_the_journal_a_killed_run_left(state_dir, paths):
    killed_writer(state_dir, {"n": "1"}, {"n": "2", "m": "x"})
    assert journal_of(paths.journal).changes  # the killed run's records
    store = open_store(state_dir)
    assert store.compactions == 1
    assert store.get_properties() == {"n": "2", "m": "x"}
    assert snapshot_properties(paths.snapshot) == {"n": "2", "m": "x"}
    assert journal_of(paths.journal).changes == []
    assert store.restore_report is None


def test_a_reader_replays_the_journal_and_changes_no_file(state_dir):
    killed_writer(state_dir, {"n": "1"}, {"n": "2"})
    before = files(state_dir)
    reader = open_store(state_dir, read_only=True)
    assert reader.get_property("n") == "2"
    reader.close()
    assert files(state_dir) == before


def test_the_journal_is_compacted_mid_run_once_it_outgrows_its_limit(state_dir, paths):
    store = open_store(state_dir, journal_limit=10_000)
    for n in range(60):
        store.update({f"key:{n % 7}": f"{n}:" + "v" * 1_000})
        assert paths.journal.stat().st_size <= 10_000 + 1_100
    assert store.compactions >= 4
    assert open_store(state_dir, read_only=True).get_properties() == store.get_properties()


def test_by_default_the_journal_may_grow_to_the_snapshot_size_but_not_under_1_mib(state_dir, paths):
    store = open_store(state_dir)
    store.set_property("seed", "s")  # the first write of a new state is a snapshot
    assert store.compactions == 1
    for n in range(9):  # ~0.9 MiB of journal: under the floor
        store.update({"blob": f"{n}" + "b" * 100_000})
    assert store.compactions == 1
    for n in range(3):
        store.update({"blob": f"{n}" + "c" * 100_000})
    assert store.compactions == 2  # past 1 MiB; the snapshot (~100 KB) was smaller


def test_a_second_writer_opened_without_the_lock_makes_the_first_one_refuse_to_write(state_dir):
    first = open_store(state_dir)
    first.set_property("a", "1")
    first.set_property("a", "2")
    second = open_store(state_dir)  # finds a journal with records: compacts it
    with pytest.raises(StateError, match="changed by another writer"):
        first.set_property("a", "3")
    second.set_property("b", "1")
    assert open_store(state_dir, read_only=True).get_properties() == {"a": "2", "b": "1"}


# -- the journal after a crash ---------------------------------------------------------------------


def test_a_torn_last_record_is_ignored_wherever_it_was_cut(state_dir, paths):
    killed_writer(state_dir, {"n": "1"}, {"n": "2", "gone": "x"}, {"n": "3"})
    whole = paths.journal.read_bytes()
    last = len(frame({"set": {"n": "3"}}))
    for cut in range(1, last):
        paths.journal.write_bytes(whole[: len(whole) - cut])
        reader = open_store(state_dir, read_only=True)
        assert reader.get_properties() == {"n": "2", "gone": "x"}, cut
        assert reader.restore_report is None
    paths.journal.write_bytes(whole[:-5])
    store = open_store(state_dir)
    assert store.get_properties() == {"n": "2", "gone": "x"} and store.compactions == 1
    assert journal_of(paths.journal).clean


def test_a_damaged_record_followed_by_good_ones_is_reported_and_set_aside(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("n", "0")
    killed_writer(state_dir, {"n": "1"}, {"n": "2"}, {"n": "3"}, {"n": "4"})
    lines = paths.journal.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"3"', b'"9"')  # the CRC no longer matches: bit rot, or a hand edit
    damaged = b"\n".join(lines)
    paths.journal.write_bytes(damaged)

    reader = open_store(state_dir, read_only=True)
    assert reader.get_property("n") == "2"  # what came before the damage; nothing after it
    assert "record 3 is damaged" in reader.restore_report.reason
    assert "1 good records after it were not" in reader.restore_report.reason

    store = open_store(state_dir)
    assert store.get_property("n") == "2"
    aside = state_dir / f"{paths.journal.name}.corrupt-{STAMP}"
    assert store.restore_report.journals_moved_aside == (aside,)
    assert aside.read_bytes() == damaged
    store.close()
    assert open_store(state_dir).restore_report is None


def test_a_journal_older_than_the_snapshot_is_ignored(state_dir, paths):
    """As a crash between a compaction's new snapshot and its new journal leaves them."""
    with open_store(state_dir) as store:
        store.set_property("a", "1")
    store = open_store(state_dir)
    store.set_property("a", "2")
    old_journal = paths.journal.read_bytes()  # says a=2
    store.close()
    with open_store(state_dir) as store:
        store.set_property("a", "3")
    paths.journal.write_bytes(old_journal)
    assert open_store(state_dir, read_only=True).get_property("a") == "3"
    store = open_store(state_dir)
    assert store.get_property("a") == "3" and store.restore_report is None and store.compactions == 0


def test_a_journal_newer_than_the_snapshot_is_reported_and_set_aside(state_dir, paths):
    """As when someone puts an older snapshot back by hand: its journal cannot apply to it."""
    with open_store(state_dir) as store:
        store.set_property("a", "1")
    old_snapshot = paths.snapshot.read_bytes()
    with open_store(state_dir) as store:
        store.set_property("a", "2")
    killed_writer(state_dir, {"b": "1"}, {"b": "2"})
    paths.snapshot.write_bytes(old_snapshot)

    reader = open_store(state_dir, read_only=True)
    assert reader.get_properties() == {"a": "1"}
    assert "holds 2 updates" in reader.restore_report.reason
    store = open_store(state_dir)
    assert store.restore_report.journals_moved_aside == (
        state_dir / f"{paths.journal.name}.orphaned-{STAMP}",)
    assert not paths.journal.exists()
    store.set_property("c", "1")
    assert open_store(state_dir, read_only=True).get_properties() == {"a": "1", "c": "1"}


@pytest.mark.parametrize("content", [b"", b"garbage\n", header(1)[:-3] + b"\n"])
def test_a_journal_without_a_good_header_is_reported_and_set_aside_by_a_writer(state_dir, paths, content):
    with open_store(state_dir) as store:
        store.set_property("a", "1")
    paths.journal.write_bytes(content)
    assert "cannot be read" in open_store(state_dir, read_only=True).restore_report.reason
    store = open_store(state_dir)
    assert store.get_properties() == {"a": "1"}
    assert (state_dir / f"{paths.journal.name}.corrupt-{STAMP}").read_bytes() == content


def test_a_journal_of_a_newer_format_is_refused_untouched(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("a", "1")
    paths.journal.write_bytes(frame({"journal": 2, "generation": store.generation}))
    before = files(state_dir)
    with pytest.raises(StateVersionError, match="journal format 2"):
        open_store(state_dir)
    assert files(state_dir) == before


# -- failures while writing ------------------------------------------------------------------------


def disk_full(*args):
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("call", ["write", "fdatasync"])
def test_a_failed_append_leaves_the_files_and_the_store_at_the_old_state(state_dir, paths, monkeypatch, call):
    store = open_store(state_dir)
    store.set_property("a", "1")
    store.set_property("b", "2")
    journal = paths.journal.read_bytes()

    monkeypatch.setattr(os, call, disk_full)
    with pytest.raises(OSError, match="No space"):
        store.set_property("a", "changed")
    monkeypatch.undo()

    assert store.get_properties() == {"a": "1", "b": "2"} and store.write_count == 2
    assert paths.journal.read_bytes() == journal  # the partial record was cut off
    assert open_store(state_dir, read_only=True).get_properties() == {"a": "1", "b": "2"}
    store.set_property("c", "3")  # goes on, through a fresh snapshot
    assert open_store(state_dir, read_only=True).get_properties() == {"a": "1", "b": "2", "c": "3"}


def test_a_failed_compaction_loses_nothing_and_is_tried_again(state_dir, paths, monkeypatch):
    with open_store(state_dir) as store:
        store.set_property("n", "1")
    store = open_store(state_dir)
    store.set_property("n", "2")
    before = files(state_dir)
    monkeypatch.setattr(os, "fsync", disk_full)  # the new snapshot's temp file cannot be synced
    with pytest.raises(OSError, match="No space"):
        store.close()
    monkeypatch.undo()
    assert files(state_dir) == before  # no temp file left, nothing replaced
    reopened = open_store(state_dir)
    assert reopened.get_property("n") == "2" and reopened.compactions == 1


def test_a_writer_removes_temp_files_of_a_killed_writer_and_a_reader_does_not(state_dir):
    open_store(state_dir).set_property("a", "1")
    stale = [state_dir / ".properties.json.abc123.tmp", state_dir / ".properties.json.journal.x.tmp"]
    for path in stale:
        path.write_text('{"half": ')
    open_store(state_dir, read_only=True)
    assert all(path.exists() for path in stale)
    open_store(state_dir)
    assert not any(path.exists() for path in stale)


# -- the last good copy ----------------------------------------------------------------------------


def test_the_backup_is_private_even_if_the_snapshot_was_not(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("a", "1")
    paths.snapshot.chmod(0o644)
    with open_store(state_dir) as store:
        store.set_property("a", "2")  # the 0644 file becomes the backup
    assert mode(paths.backup) == 0o600 and mode(paths.snapshot) == 0o600


def test_the_first_snapshot_is_its_own_backup(state_dir, paths):
    open_store(state_dir).set_property("n", "1")
    assert snapshot_properties(paths.backup) == {"n": "1"}


def test_a_snapshot_changed_behind_our_back_does_not_become_the_backup(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("n", "1")
    store = open_store(state_dir)
    store.set_property("n", "2")
    paths.snapshot.write_text('{"edited": "by hand"}')  # in place, as an editor might
    with pytest.raises(StateError, match="changed by another writer"):
        store.close()
    assert b"by hand" not in paths.backup.read_bytes()


def test_without_hard_links_the_backup_is_a_copy(state_dir, paths, monkeypatch):
    monkeypatch.setattr(os, "link", lambda *args: disk_full())
    for n in "123":
        with open_store(state_dir) as store:
            store.set_property("n", n)
    assert snapshot_properties(paths.backup) == {"n": "3"}
    assert mode(paths.backup) == 0o600


def test_a_failed_backup_copy_reports_the_error_but_keeps_the_durable_change(state_dir, paths, monkeypatch):
    with open_store(state_dir) as store:
        store.set_property("n", "1")
    store = open_store(state_dir)
    store.set_property("n", "2")
    real_fsync, calls = os.fsync, []

    def third_fsync_fails(fd):  # the snapshot's temp file, the directory, then the backup's temp file
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "link", lambda *args: disk_full())
    monkeypatch.setattr(os, "fsync", third_fsync_fails)
    with pytest.raises(OSError, match="No space"):
        store.close()
    monkeypatch.undo()
    assert snapshot_properties(paths.snapshot) == {"n": "2"}
    assert open_store(state_dir).get_property("n") == "2"
    assert snapshot_properties(paths.backup) == {"n": "1"}


CORRUPTIONS = {
    "truncated": lambda good: good[: len(good) // 2],
    "empty": lambda good: b"",
    "not json": lambda good: b"\x00\x01garbage",
    "not an object": lambda good: b"[]",
    "no properties table": lambda good: b'{"meta": {"1": {"schema_version": 2}}}',
    "a value that is not a string": lambda good: good.replace(b'"2"', b"2"),
    "a bad generation": lambda good: good.replace(b'"generation":', b'"generation":-'),
}


def three_sessions(state_dir: Path) -> FileStore:
    """n=1 then n=2 compacted, n=3 and m=3 only in the journal (the run was killed)."""
    for n in "12":
        with open_store(state_dir) as store:
            store.set_property("n", n)
    killed_writer(state_dir, {"n": "3"}, {"m": "3"})
    return store


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_an_unreadable_snapshot_is_rebuilt_from_the_backup_and_the_journals_losing_nothing(
    state_dir, paths, corruption
):
    three_sessions(state_dir)
    bad = CORRUPTIONS[corruption](paths.snapshot.read_bytes())
    paths.snapshot.write_bytes(bad)

    restored = open_store(state_dir)
    assert restored.restored_from_backup
    report = restored.restore_report
    assert report.path == paths.snapshot and report.backup_path == paths.backup
    assert "could not be used" in report.reason and str(paths.backup) in report.reason
    assert report.moved_aside_to == state_dir / f"properties.json.corrupt-{STAMP}"
    assert report.moved_aside_to.read_bytes() == bad  # kept for inspection
    # .bak (n=1) + .journal.bak (n=2) + .journal (n=3, m=3): everything.
    assert restored.get_properties() == {"n": "3", "m": "3"}
    assert mode(paths.snapshot) == 0o600
    restored.set_property("n", "4")
    restored.close()
    clean = open_store(state_dir)
    assert not clean.restored_from_backup
    assert clean.get_properties() == {"n": "4", "m": "3"}


def test_without_the_compacted_journal_a_restore_returns_to_the_previous_compaction_and_says_so(
    state_dir, paths
):
    three_sessions(state_dir)
    paths.journal_backup.unlink()  # as after a migration, which keeps none
    paths.snapshot.write_bytes(b"{torn")
    restored = open_store(state_dir)
    assert restored.get_properties() == {"n": "1"}  # the backup alone: one compaction behind
    assert "holds 2 updates" in restored.restore_report.reason  # the journal that was lost
    assert restored.restore_report.journals_moved_aside == (
        state_dir / f"properties.json.journal.orphaned-{STAMP}",)


def test_a_missing_snapshot_with_a_backup_is_restored_not_started_over(state_dir, paths):
    three_sessions(state_dir)
    paths.snapshot.unlink()
    restored = open_store(state_dir)
    assert restored.restored_from_backup
    assert "the file is missing" in restored.restore_report.reason
    assert restored.restore_report.moved_aside_to is None
    assert restored.get_properties() == {"n": "3", "m": "3"}
    assert paths.snapshot.exists()


def test_two_restores_in_one_second_keep_both_corrupt_files(state_dir):
    with open_store(state_dir) as store:
        store.set_property("n", "1")
    for junk in (b"first", b"second"):
        store.path.write_bytes(junk)
        open_store(state_dir).close()
    corrupt = sorted(p.name for p in state_dir.glob("properties.json.corrupt-*"))
    assert corrupt == [f"properties.json.corrupt-{STAMP}", f"properties.json.corrupt-{STAMP}-1"]


def test_a_reader_uses_the_backup_without_changing_any_file(state_dir, paths):
    three_sessions(state_dir)
    paths.snapshot.write_bytes(b"{torn")
    before = files(state_dir)
    reader = open_store(state_dir, read_only=True)
    assert reader.restored_from_backup
    assert reader.restore_report.moved_aside_to is None
    assert reader.get_properties() == {"n": "3", "m": "3"}
    assert files(state_dir) == before


@pytest.mark.parametrize("backup", [b"{torn", None])
def test_both_snapshots_unreadable_is_a_clear_error_that_touches_nothing(state_dir, paths, backup):
    three_sessions(state_dir)
    paths.snapshot.write_bytes(b'{"meta": {"1": {"schem')
    if backup is None:
        paths.backup.unlink()
    else:
        paths.backup.write_bytes(backup)
    before = files(state_dir)

    with pytest.raises(StateUnreadable) as caught:
        open_store(state_dir)
    message = str(caught.value)
    assert str(paths.snapshot) in message and str(paths.backup) in message
    assert "not valid JSON" in message
    assert ("missing" if backup is None else "not valid JSON") in message.split(".bak:")[1]
    assert "move both files aside" in message and f"mv {paths.journal} " in message
    with pytest.raises(StateUnreadable):
        open_store(state_dir, read_only=True)
    assert files(state_dir) == before


def test_a_missing_snapshot_with_a_broken_backup_is_not_silently_started_over(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("n", "1")
    paths.snapshot.unlink()
    paths.backup.write_bytes(b"")
    with pytest.raises(StateUnreadable, match="the file is empty"):
        open_store(state_dir)


def test_a_file_that_cannot_be_opened_is_an_error_not_corruption(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("n", "1")
    paths.snapshot.unlink()
    paths.snapshot.mkdir()  # open() fails as it would without permission (the tests may run as root)
    before = sorted(p.name for p in state_dir.iterdir())
    with pytest.raises(StateError, match="cannot read the state file") as caught:
        open_store(state_dir)
    assert not isinstance(caught.value, StateUnreadable)
    assert sorted(p.name for p in state_dir.iterdir()) == before


def test_the_state_exists_once_any_of_its_files_does(state_dir, paths):
    assert not paths.exist()
    open_store(state_dir).close()
    assert not paths.exist()  # opening alone saves nothing
    killed_writer(state_dir, {"a": "1"})
    paths.snapshot.unlink()
    paths.backup.unlink()
    assert paths.exist()  # the journal alone still says a run saved something


# -- schema version and migrations -----------------------------------------------------------------


def version_1_file(properties: dict[str, str]) -> bytes:
    """What the previous sheet-monitor wrote: no generation, no journal."""
    return json.dumps({"meta": {"1": {"schema_version": 1}},
                       "properties": {"1": properties}}).encode()


def test_a_version_1_state_opens_unchanged_and_a_writer_rewrites_it_as_version_2(state_dir, paths):
    state_dir.mkdir()
    old = version_1_file({"queue": "[1,2]", "name": "Магазин"})
    paths.snapshot.write_bytes(old)
    paths.backup.write_bytes(old)
    reader = open_store(state_dir, read_only=True)
    assert reader.get_properties() == {"queue": "[1,2]", "name": "Магазин"}
    assert paths.snapshot.read_bytes() == old  # a reader migrates in memory only

    store = open_store(state_dir)
    assert store.get_properties() == {"queue": "[1,2]", "name": "Магазин"}
    assert store.compactions == 1 and store.schema_version == 2
    assert parse_state(paths.snapshot.read_bytes()).version == 2
    assert paths.backup.read_bytes() == old
    assert not paths.journal_backup.exists()  # a migration keeps no journal to replay onto version 1


def test_a_newer_schema_version_is_refused_untouched(state_dir, paths):
    with open_store(state_dir) as store:
        store.set_property("a", "1")
    data = json.loads(paths.snapshot.read_text())
    data["meta"]["1"]["schema_version"] = 7
    paths.snapshot.write_text(json.dumps(data))
    before = files(state_dir)
    with pytest.raises(StateVersionError, match="schema version 7.*up to 2.*newer sheet-monitor"):
        open_store(state_dir)
    with pytest.raises(StateVersionError):
        open_store(state_dir, read_only=True)
    assert files(state_dir) == before


def test_migrations_run_once_in_order_after_the_journal_and_are_persisted_in_one_compaction(
    state_dir, paths
):
    killed_writer(state_dir, {"queue": "[1,2]", "old": "x"}, {"queue": "[1,2,3]"})
    calls = []

    def v2_to_v3(props):
        calls.append(2)
        props["queue"] = json.dumps({"tasks": json.loads(props["queue"])}, separators=(",", ":"))
        return props

    def v3_to_v4(props):
        calls.append(3)
        props.pop("old")
        return props

    migrations = {2: v2_to_v3, 3: v3_to_v4}
    store = open_store(state_dir, schema_version=4, migrations=migrations)
    assert calls == [2, 3]
    assert store.schema_version == 4
    assert store.get_properties() == {"queue": '{"tasks":[1,2,3]}'}  # the journal came first
    assert store.compactions == 1 and store.write_count == 0
    assert json.loads(paths.snapshot.read_text())["meta"]["1"]["schema_version"] == 4
    store.close()

    open_store(state_dir, schema_version=4, migrations=migrations)
    assert calls == [2, 3]  # already at version 4: nothing runs again


def test_a_missing_migration_step_is_refused(state_dir):
    open_store(state_dir).set_property("a", "1")
    with pytest.raises(StateVersionError, match="no migration from it to 3"):
        open_store(state_dir, schema_version=3, migrations={})


def test_a_reader_migrates_in_memory_only(state_dir):
    open_store(state_dir).set_property("a", "1")
    before = files(state_dir)
    reader = open_store(
        state_dir, read_only=True, schema_version=3, migrations={2: lambda p: {**p, "b": "2"}}
    )
    assert reader.get_properties() == {"a": "1", "b": "2"}
    assert files(state_dir) == before


# -- file locks ------------------------------------------------------------------------------------

HOLD_LOCK = """
    import sys
    from monitor.storage import FlockLock
    lock = FlockLock(sys.argv[1])
    print(lock.try_acquire(), flush=True)
    sys.stdin.readline()
"""

TRY_LOCK = """
    import sys, time
    from monitor.storage import FlockLock
    started = time.monotonic()
    got = FlockLock(sys.argv[1]).acquire(timeout=float(sys.argv[2]))
    print(got, round(time.monotonic() - started, 3))
"""


def try_lock_in_another_process(path: Path, timeout: float = 0) -> tuple[bool, float]:
    child = run_python(TRY_LOCK, str(path), str(timeout))
    out, _ = child.communicate(timeout=10)
    got, waited = out.split()
    return got == "True", float(waited)


def test_the_run_lock_is_run_lock_in_the_state_folder(state_dir):
    lock = open_store(state_dir, read_only=True).lock()
    assert lock.path == state_dir / "run.lock" == FlockLock.in_dir(state_dir).path
    assert open_store(state_dir, read_only=True).lock("watchdog").path == state_dir / "watchdog.lock"


def test_a_second_process_does_not_get_the_run_lock_and_learns_it_at_once(state_dir):
    lock = FlockLock.in_dir(state_dir)
    assert lock.try_acquire()
    assert mode(state_dir) == 0o700 and mode(lock.path) == 0o600
    got, waited = try_lock_in_another_process(lock.path)
    assert not got and waited < 1.0
    got, waited = try_lock_in_another_process(lock.path, timeout=0.15)  # an admin command waits a bit
    assert not got and waited >= 0.15
    lock.release()
    assert try_lock_in_another_process(lock.path) == (True, pytest.approx(0, abs=1.0))


def test_the_run_lock_is_freed_when_its_holder_is_killed(state_dir):
    path = state_dir / "run.lock"
    holder = run_python(HOLD_LOCK, str(path), stdin=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "True"
        assert not FlockLock(path).try_acquire()
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=5)
    finally:
        holder.kill()
        holder.stdout.close()
        holder.stdin.close()
    started = time.monotonic()
    assert FlockLock(path).acquire(timeout=2)
    assert time.monotonic() - started < 1.0


def test_a_reader_needs_no_lock_while_a_writer_holds_it(state_dir):
    with FlockLock.in_dir(state_dir):
        open_store(state_dir).set_property("heartbeat", "started")
        assert open_store(state_dir, read_only=True).get_property("heartbeat") == "started"


def test_a_snapshot_written_in_pieces_is_the_same_json_as_one_written_whole():
    from monitor.storage import format as snapshot_format

    properties = {f"task/{n:06d}": json.dumps({"n": n, "text": "é \" \\n" * (n % 70)}) for n in range(8000)}
    pieces = list(snapshot_format.snapshot_chunks(properties, generation=4, version=2))
    assert len(pieces) > 1  # more than a megabyte: written in several pieces
    whole = {"meta": {"1": {"schema_version": 2, "generation": 4}}, "properties": {"1": properties}}
    assert b"".join(pieces) == json.dumps(whole, ensure_ascii=False, separators=(",", ":")).encode()
