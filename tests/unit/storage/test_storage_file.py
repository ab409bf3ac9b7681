"""The file backend: snapshot, journal, compaction, file modes, file locks.

The contract every backend shares is tested in tests/contract/test_storage_contract.py; the last good
copy, restores and schema versions in tests/unit/storage/test_storage_recovery.py; crashes and
lock-free readers racing a writer process in tests/process/test_storage_crash.py.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from storage_fixtures import (
    REPO,
    STAMP,
    disk_full,
    files,
    journal_of,
    killed_writer,
    mode,
    open_store,
    run_python,
    snapshot_properties,
)
from tinydb import TinyDB
from tinydb.storages import JSONStorage

from monitor.storage import FlockLock, StateError, StateVersionError
from monitor.storage.journal import frame, header

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


def shipped_state_folder(state_dir: Path, folder_mode: int = 0o755) -> None:
    """The state folder as a clone or an archive leaves it: its README, the folder 0755."""
    state_dir.mkdir()
    (state_dir / "README.md").write_text((REPO / "state" / "README.md").read_text())
    os.chmod(state_dir, folder_mode)


@pytest.mark.parametrize("first", ["store", "lock"])
def test_a_shipped_state_folder_left_0755_is_made_0700_by_its_first_writer(state_dir, first, caplog):
    caplog.set_level(logging.INFO)
    shipped_state_folder(state_dir)
    if first == "store":
        open_store(state_dir).set_property("a", "1")
    else:
        lock = FlockLock.in_dir(state_dir)
        assert lock.try_acquire()
        lock.release()
    assert mode(state_dir) == 0o700
    [made] = [r for r in caplog.records if r.getMessage() == "state_dir_made_private"]
    assert (made.fields["mode_before"], made.fields["mode"]) == ("0755", "0700")
    open_store(state_dir).set_property("a", "2")  # said once: it is private now
    assert [r.getMessage() for r in caplog.records].count("state_dir_made_private") == 1


def test_a_state_folder_left_by_earlier_runs_is_made_0700_by_a_writer_with_all_it_holds(state_dir):
    for n in "12":
        with open_store(state_dir) as store:
            store.set_property("a", n)
    (state_dir / "watchdog.lock").write_text("")
    (state_dir / "watchdog-state.json").write_text("{}")
    (state_dir / f"properties.json.corrupt-{STAMP}").write_text("x")
    (state_dir / "redis-generations.json").write_text("{}")
    os.chmod(state_dir, 0o755)
    assert open_store(state_dir, read_only=True).get_property("a") == "2"
    assert mode(state_dir) == 0o755  # a reader changes nothing
    open_store(state_dir).set_property("a", "3")
    assert mode(state_dir) == 0o700


def test_a_folder_that_holds_others_files_keeps_its_mode_and_each_writer_says_so(state_dir, caplog):
    shipped_state_folder(state_dir, 0o750)
    (state_dir / "index.html").write_text("<p>a page a web server reads</p>")
    open_store(state_dir).set_property("a", "1")
    assert mode(state_dir) == 0o750
    [warning] = [r for r in caplog.records if r.getMessage() == "state_dir_not_private"]
    assert warning.levelname == "WARNING"
    assert warning.fields["problem"] == (
        f"the state folder {state_dir} can be entered by others (mode 0750) and holds files that are "
        "not the monitor's (index.html), so its mode was left as it is: the monitor's files in it are "
        "0600, but anyone who may enter it sees their names. Give the monitor a folder of its own, or "
        f"run chmod 700 {state_dir}")


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
