"""The state file: PropertiesService API, atomic private files, last good copy, schema, run lock."""

from __future__ import annotations

import json
import os
import random
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
from monitor.storage.format import parse_state
from monitor.storage.lock import RunLock, RunLockHeld
from monitor.storage.store import (
    PropertyNotJSON,
    PropertyStore,
    StateError,
    StateUnreadable,
    StateVersionError,
)

REPO = Path(__file__).resolve().parents[1]
CLOCK_START = datetime(2026, 1, 5, 3, 47, 12, tzinfo=UTC)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


def open_store(state_dir: Path, **kwargs) -> PropertyStore:
    return PropertyStore.in_dir(state_dir, clock=ManualClock(CLOCK_START), **kwargs)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime: proof that nothing was touched."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


def run_python(code: str, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env, stdout=subprocess.PIPE, text=True, **kwargs,
    )


# -- the PropertiesService API ---------------------------------------------------------------------


def test_a_missing_state_is_an_empty_store_in_a_private_new_folder(state_dir: Path):
    store = open_store(state_dir)
    assert store.get_properties() == {}
    assert store.get_keys() == []
    assert store.get_property("anything") is None
    assert not store.restored_from_backup
    assert mode(state_dir) == 0o700


def test_properties_survive_a_reopen_and_deletes_stick(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("heartbeat", '{"status":"started"}')
    store.set_property("cursor", "12")
    store.delete_property("cursor")
    store.delete_property("never-set")  # like Apps Script: not an error

    again = open_store(state_dir)
    assert again.get_properties() == {"heartbeat": '{"status":"started"}'}
    assert again.get_keys() == ["heartbeat"]
    assert again.get_property("cursor") is None


def test_get_properties_is_a_copy(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("a", "1")
    store.get_properties()["a"] = "changed"
    assert store.get_property("a") == "1"


def test_set_properties_is_one_write_and_can_replace_everything(state_dir: Path):
    store = open_store(state_dir)
    store.set_properties({"a": "1", "b": "2", "c": "3"})
    assert store.write_count == 1
    store.set_properties({"b": "20", "d": "4"}, delete_all_others=True)
    assert store.write_count == 2
    assert open_store(state_dir).get_properties() == {"b": "20", "d": "4"}


def test_set_properties_checks_everything_before_changing_anything(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("a", "1")
    with pytest.raises(TypeError, match="'b' must be a string"):
        store.set_properties({"a": "2", "b": 3})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="non-empty string"):
        store.set_property("", "x")
    assert open_store(state_dir).get_properties() == {"a": "1"}
    assert store.write_count == 1


def test_json_helpers_round_trip_and_report_bad_text_by_key(state_dir: Path):
    store = open_store(state_dir)
    store.set_json("queue", {"tasks": [1, 2], "name": "Магазин №5"})
    assert store.get_property("queue") == '{"tasks":[1,2],"name":"Магазин №5"}'
    assert open_store(state_dir).get_json("queue") == {"tasks": [1, 2], "name": "Магазин №5"}
    assert store.get_json("missing", default=[]) == []
    store.set_property("plain", "not json")
    with pytest.raises(PropertyNotJSON, match="'plain' is not JSON"):
        store.get_json("plain")
    with pytest.raises(ValueError):
        store.set_json("bad", float("nan"))


def test_a_transaction_writes_once_and_its_reads_see_its_changes(state_dir: Path):
    store = open_store(state_dir)
    with store.transaction():
        store.set_json("task:1", {"status": "done"})
        store.set_property("cursor", "1")
        store.delete_property("cursor")
        assert store.get_keys() == ["task:1"]
        assert not store.path.exists()  # nothing on disk before the block ends
    assert store.write_count == 1
    assert open_store(state_dir).get_properties() == {"task:1": '{"status":"done"}'}


def test_an_exception_undoes_the_transaction_and_an_inner_block_is_a_savepoint(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("a", "1")
    with pytest.raises(RuntimeError), store.transaction():
        store.set_property("a", "2")
        raise RuntimeError("task crashed")
    assert store.get_property("a") == "1"

    with store.transaction():
        store.set_property("b", "kept")
        with pytest.raises(RuntimeError), store.transaction():
            store.set_property("c", "undone")
            raise RuntimeError
    assert store.get_properties() == {"a": "1", "b": "kept"}
    assert open_store(state_dir).get_properties() == {"a": "1", "b": "kept"}
    assert store.write_count == 2


def test_an_unchanged_state_is_not_written_again(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("a", "1")
    store.set_property("a", "1")
    store.delete_property("zzz")
    with store.transaction():
        store.set_property("a", "2")
        store.set_property("a", "1")
    assert store.write_count == 1


def test_the_file_is_a_plain_tinydb_database(state_dir: Path):
    store = open_store(state_dir)
    store.set_json("heartbeat", {"status": "finished"})
    db = TinyDB(store.path, storage=JSONStorage, access_mode="r")
    assert db.table("properties").get(doc_id=1) == {"heartbeat": '{"status":"finished"}'}
    assert db.table("meta").get(doc_id=1) == {"schema_version": 1}
    db.close()


def test_a_failed_write_leaves_file_and_memory_at_the_old_state(state_dir, monkeypatch):
    store = open_store(state_dir)
    store.set_property("a", "1")
    store.set_property("b", "2")
    before = snapshot(state_dir)

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        store.set_property("a", "changed")
    monkeypatch.undo()

    assert store.get_properties() == {"a": "1", "b": "2"}
    assert snapshot(state_dir) == before  # no temp file left, main and backup untouched
    store.set_property("c", "3")
    assert open_store(state_dir).get_properties() == {"a": "1", "b": "2", "c": "3"}


def test_a_read_only_store_refuses_changes(state_dir: Path):
    open_store(state_dir).set_property("a", "1")
    reader = open_store(state_dir, read_only=True)
    with pytest.raises(StateError, match="read-only"):
        reader.set_property("a", "2")
    assert open_store(state_dir).get_property("a") == "1"


# -- files: mode, atomicity, the last good copy ------------------------------------------------------


def test_state_files_are_private_whatever_the_umask(state_dir: Path):
    old_umask = os.umask(0)
    try:
        store = open_store(state_dir)
        store.set_property("a", "1")
        store.set_property("a", "2")
    finally:
        os.umask(old_umask)
    assert mode(state_dir) == 0o700
    assert mode(store.path) == 0o600
    assert mode(store.backup_path) == 0o600


def test_the_backup_is_private_even_if_the_main_file_was_not(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("a", "1")
    store.path.chmod(0o644)
    reopened = open_store(state_dir)
    reopened.set_property("a", "2")  # the 0644 file becomes the backup
    assert mode(reopened.backup_path) == 0o600
    assert mode(reopened.path) == 0o600


def test_the_backup_holds_the_previous_write(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("n", "1")
    assert parse_state(store.backup_path.read_bytes()).properties == {"n": "1"}  # from the first write
    store.set_property("n", "2")
    store.set_property("n", "3")
    assert parse_state(store.backup_path.read_bytes()).properties == {"n": "2"}
    assert parse_state(store.path.read_bytes()).properties == {"n": "3"}
    assert store.path.stat().st_ino != store.backup_path.stat().st_ino


def test_a_main_file_changed_behind_our_back_does_not_become_the_backup(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("n", "1")
    store.set_property("n", "2")
    store.path.write_text('{"edited": "by hand"}')  # in place, as an editor might
    store.set_property("n", "3")
    assert b"by hand" not in store.backup_path.read_bytes()
    assert parse_state(store.backup_path.read_bytes()).properties == {"n": "3"}


def test_without_hard_links_the_backup_is_a_copy(state_dir, monkeypatch):
    def no_links(*args):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    store = open_store(state_dir)
    for n in "123":
        store.set_property("n", n)
    assert parse_state(store.backup_path.read_bytes()).properties == {"n": "3"}
    assert mode(store.backup_path) == 0o600


def test_a_failed_backup_copy_reports_the_error_but_keeps_the_durable_change(state_dir, monkeypatch):
    def no_links(*args):
        raise OSError(1, "Operation not permitted")

    store = open_store(state_dir)
    store.set_property("n", "1")
    real_fsync, calls = os.fsync, []

    def third_fsync_fails(fd):  # main temp file, directory, then the backup's temp file
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "link", no_links)
    monkeypatch.setattr(os, "fsync", third_fsync_fails)
    with pytest.raises(OSError, match="No space"):
        store.set_property("n", "2")
    monkeypatch.undo()
    assert store.get_property("n") == "2"
    assert open_store(state_dir).get_property("n") == "2"
    assert parse_state(store.backup_path.read_bytes()).properties == {"n": "1"}


def test_a_writer_removes_temp_files_of_a_killed_writer_and_a_reader_does_not(state_dir: Path):
    open_store(state_dir).set_property("a", "1")
    stale = state_dir / ".properties.json.abc123.tmp"
    stale.write_text('{"half": ')
    open_store(state_dir, read_only=True)
    assert stale.exists()
    open_store(state_dir)
    assert not stale.exists()


CORRUPTIONS = {
    "truncated": lambda good: good[: len(good) // 2],
    "empty": lambda good: b"",
    "not json": lambda good: b"\x00\x01garbage",
    "not an object": lambda good: b"[]",
    "no properties table": lambda good: b'{"meta": {"1": {"schema_version": 1}}}',
    "a value that is not a string": lambda good: good.replace(b'"2"', b"2"),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_an_unreadable_main_file_is_restored_from_the_last_good_copy(state_dir, corruption):
    store = open_store(state_dir)
    store.set_property("n", "1")
    store.set_property("n", "2")
    bad = CORRUPTIONS[corruption](store.path.read_bytes())
    store.path.write_bytes(bad)

    restored = open_store(state_dir)
    assert restored.restored_from_backup
    report = restored.restore_report
    assert report.path == store.path
    assert report.reason  # says what was wrong, for the event
    assert report.moved_aside_to == state_dir / "properties.json.corrupt-20260105T034712Z"
    assert report.moved_aside_to.read_bytes() == bad  # kept for inspection
    assert restored.get_properties() == {"n": "1"}  # the backup is one write behind
    assert mode(restored.path) == 0o600

    restored.set_property("n", "3")
    clean = open_store(state_dir)
    assert not clean.restored_from_backup
    assert clean.get_property("n") == "3"


def test_a_missing_main_file_with_a_backup_is_restored_not_started_over(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("n", "1")
    store.set_property("n", "2")
    store.path.unlink()
    restored = open_store(state_dir)
    assert restored.restored_from_backup
    assert restored.restore_report.reason == "the file is missing"
    assert restored.restore_report.moved_aside_to is None
    assert restored.get_property("n") == "1"
    assert store.path.exists()


def test_two_restores_in_one_second_keep_both_corrupt_files(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("n", "1")
    store.set_property("n", "2")
    for junk in (b"first", b"second"):
        store.path.write_bytes(junk)
        open_store(state_dir)
    corrupt = sorted(p.name for p in state_dir.glob("properties.json.corrupt-*"))
    assert corrupt == [
        "properties.json.corrupt-20260105T034712Z",
        "properties.json.corrupt-20260105T034712Z-1",
    ]


def test_a_reader_uses_the_backup_without_changing_any_file(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("n", "1")
    store.set_property("n", "2")
    store.path.write_bytes(b"{torn")
    before = snapshot(state_dir)
    reader = open_store(state_dir, read_only=True)
    assert reader.restored_from_backup
    assert reader.restore_report.moved_aside_to is None
    assert reader.get_property("n") == "1"
    assert snapshot(state_dir) == before


@pytest.mark.parametrize("backup", [b"{torn", None])
def test_both_files_unreadable_is_a_clear_error_that_touches_nothing(state_dir, backup):
    store = open_store(state_dir)
    store.set_property("n", "1")
    store.set_property("n", "2")
    store.path.write_bytes(b'{"meta": {"1": {"schem')
    if backup is None:
        store.backup_path.unlink()
    else:
        store.backup_path.write_bytes(backup)
    before = snapshot(state_dir)

    with pytest.raises(StateUnreadable) as caught:
        open_store(state_dir)
    message = str(caught.value)
    assert str(store.path) in message and str(store.backup_path) in message
    assert "not valid JSON" in message
    assert ("missing" if backup is None else "not valid JSON") in message.split(".bak:")[1]
    assert "mv " in message  # how to move them aside
    assert snapshot(state_dir) == before


def test_a_missing_main_file_with_a_broken_backup_is_not_silently_started_over(state_dir):
    store = open_store(state_dir)
    store.set_property("n", "1")
    store.path.unlink()
    store.backup_path.write_bytes(b"")
    with pytest.raises(StateUnreadable, match="the file is empty"):
        open_store(state_dir)


# -- schema version and migrations --------------------------------------------------------------------


def test_the_schema_version_is_stored_and_a_newer_one_is_refused_untouched(state_dir: Path):
    store = open_store(state_dir)
    store.set_property("a", "1")
    assert store.schema_version == 1
    data = json.loads(store.path.read_text())
    data["meta"]["1"]["schema_version"] = 7
    store.path.write_text(json.dumps(data))
    before = snapshot(state_dir)
    with pytest.raises(StateVersionError, match="schema version 7.*up to 1.*newer sheet-monitor"):
        open_store(state_dir)
    with pytest.raises(StateVersionError):
        open_store(state_dir, read_only=True)
    assert snapshot(state_dir) == before


def test_migrations_run_once_in_order_and_are_persisted_in_one_write(state_dir: Path):
    open_store(state_dir).set_properties({"queue": "[1,2]", "old": "x"})
    calls = []

    def v1_to_v2(props):
        calls.append(1)
        props["queue"] = json.dumps({"tasks": json.loads(props["queue"])}, separators=(",", ":"))
        return props

    def v2_to_v3(props):
        calls.append(2)
        props.pop("old")
        return props

    migrations = {1: v1_to_v2, 2: v2_to_v3}
    store = open_store(state_dir, schema_version=3, migrations=migrations)
    assert calls == [1, 2]
    assert store.schema_version == 3
    assert store.get_properties() == {"queue": '{"tasks":[1,2]}'}
    assert store.write_count == 1
    assert json.loads(store.path.read_text())["meta"]["1"]["schema_version"] == 3

    open_store(state_dir, schema_version=3, migrations=migrations)
    assert calls == [1, 2]  # already at version 3: nothing runs again


def test_a_missing_migration_step_is_refused(state_dir: Path):
    open_store(state_dir).set_property("a", "1")
    with pytest.raises(StateVersionError, match="no migration from it to 2"):
        open_store(state_dir, schema_version=2, migrations={})


def test_a_reader_migrates_in_memory_only(state_dir: Path):
    open_store(state_dir).set_property("a", "1")
    before = snapshot(state_dir)
    reader = open_store(
        state_dir, read_only=True, schema_version=2, migrations={1: lambda p: {**p, "b": "2"}}
    )
    assert reader.get_properties() == {"a": "1", "b": "2"}
    assert snapshot(state_dir) == before


# -- the run lock --------------------------------------------------------------------------------------

HOLD_LOCK = """
    import sys
    from monitor.storage.lock import RunLock
    lock = RunLock(sys.argv[1])
    print(lock.try_acquire(), flush=True)
    sys.stdin.readline()
"""

TRY_LOCK = """
    import sys, time
    from monitor.storage.lock import RunLock
    started = time.monotonic()
    got = RunLock(sys.argv[1]).acquire(timeout=float(sys.argv[2]))
    print(got, round(time.monotonic() - started, 3))
"""


def try_lock_in_another_process(path: Path, timeout: float = 0) -> tuple[bool, float]:
    child = run_python(TRY_LOCK, str(path), str(timeout))
    out, _ = child.communicate(timeout=10)
    got, waited = out.split()
    return got == "True", float(waited)


def test_a_second_process_does_not_get_the_run_lock_and_learns_it_at_once(state_dir: Path):
    lock = RunLock.in_dir(state_dir)
    assert lock.try_acquire()
    assert mode(state_dir) == 0o700 and mode(lock.path) == 0o600
    got, waited = try_lock_in_another_process(lock.path)
    assert not got
    assert waited < 1.0
    got, waited = try_lock_in_another_process(lock.path, timeout=0.15)  # an admin command waits a bit
    assert not got and waited >= 0.15
    lock.release()
    assert try_lock_in_another_process(lock.path) == (True, pytest.approx(0, abs=1.0))


def test_the_run_lock_is_freed_when_its_holder_is_killed(state_dir: Path):
    path = state_dir / "run.lock"
    holder = run_python(HOLD_LOCK, str(path), stdin=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "True"
        assert not RunLock(path).try_acquire()
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=5)
    finally:
        holder.kill()
        holder.stdout.close()
        holder.stdin.close()
    assert RunLock(path).try_acquire()


def test_run_lock_instances_exclude_each_other_and_the_context_manager_refuses_when_held(
    state_dir: Path,
):
    first, second = RunLock.in_dir(state_dir), RunLock.in_dir(state_dir)
    with first:
        assert first.held
        assert first.try_acquire()  # already ours
        assert not second.try_acquire()
        with pytest.raises(RunLockHeld, match="run.lock"), second:
            pass
    assert not first.held
    assert second.try_acquire()
    second.release()
    second.release()  # harmless


def test_a_reader_needs_no_lock_while_a_writer_holds_it(state_dir: Path):
    with RunLock.in_dir(state_dir):
        open_store(state_dir).set_property("heartbeat", "started")
        assert open_store(state_dir, read_only=True).get_property("heartbeat") == "started"


# -- kill -9 ------------------------------------------------------------------------------------------

WRITE_FOREVER = """
    import sys
    from monitor.storage.store import PropertyStore
    store = PropertyStore(sys.argv[1])
    n = int(store.get_property("n") or 0)
    padding = "x" * 200_000  # big enough that a kill often lands inside a write
    print("ready", n, flush=True)
    while True:
        n += 1
        store.set_properties({"n": str(n), "payload": f"{n}:{padding}"})
        print(n, flush=True)
"""


def test_kill_9_at_random_moments_leaves_the_old_or_the_new_state(state_dir: Path):
    path = state_dir / "properties.json"
    rng = random.Random(20260105)
    kills_during_a_write = 0
    for _ in range(24):
        writer = run_python(WRITE_FOREVER, str(path))
        ready, start = writer.stdout.readline().split()
        assert ready == "ready"
        time.sleep(rng.uniform(0.0, 0.04))
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=5)
        acknowledged = [int(line) for line in writer.stdout.read().split()]
        writer.stdout.close()
        last_acknowledged = acknowledged[-1] if acknowledged else int(start)
        kills_during_a_write += any(state_dir.glob(".properties.json.*.tmp"))

        store = PropertyStore(path, read_only=True)
        assert not store.restored_from_backup, store.restore_report
        n = int(store.get_property("n") or 0)
        assert n in (last_acknowledged, last_acknowledged + 1)
        assert store.get_property("payload") == f"{n}:{'x' * 200_000}"
        parse_state(store.backup_path.read_bytes())  # the last good copy is whole too
    # The test only proves something if some kills interrupted a write.
    assert kills_during_a_write >= 3, kills_during_a_write
