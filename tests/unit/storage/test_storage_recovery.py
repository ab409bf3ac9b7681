"""The file backend's last good copy, restores from it, and schema versions and migrations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from storage_fixtures import (
    STAMP,
    disk_full,
    files,
    killed_writer,
    mode,
    open_store,
    snapshot_properties,
)

from monitor.storage import FileStore, StateError, StateUnreadable, StateVersionError
from monitor.storage.format import parse_state

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


def test_a_snapshot_the_fast_parser_refuses_but_json_reads_opens_as_json_reads_it():
    # pydantic-core's parser reads the snapshot first (a tenth of a second at 20,000 spreadsheets);
    # a lone surrogate escape is JSON to the standard library and not to it: the snapshot still opens.
    payload = b'{"meta":{"1":{"schema_version":2,"generation":3}},"properties":{"1":{"k":"\\ud800"}}}'
    parsed = parse_state(payload)
    assert parsed.properties == {"k": "\ud800"} and parsed.generation == 3


def test_a_truncated_snapshot_is_told_in_the_standard_librarys_words():
    from monitor.storage.format import MalformedState

    with pytest.raises(MalformedState, match=r"not valid JSON \(.* at line 1 column \d+; a truncated file"):
        parse_state(b'{"meta": {"1": {"schem')
