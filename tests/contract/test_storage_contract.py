"""The storage contract (monitor/storage/contract.py), checked once against every backend.

A new backend joins by adding a branch to the ``backend`` fixture: nothing else here may know which
backend it runs against. What only one backend does (files, journal, crash safety) is tested in its
own module (tests/unit/storage/test_storage_file.py, tests/process/test_storage_crash.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from monitor.core.clock import ManualClock
from monitor.storage import FileStore, LockHeld, MemoryBacking, MemoryStore, PropertyStore, StateError

CLOCK_START = datetime(2026, 1, 5, 3, 47, 12, tzinfo=UTC)


@dataclass
class Backend:
    """Opens stores on one shared state, as separate processes opening one state would."""

    name: str
    factory: Callable[..., PropertyStore]
    opened: list[PropertyStore] = field(default_factory=list)

    def open(self, *, read_only: bool = False) -> PropertyStore:
        store = self.factory(read_only=read_only)
        self.opened.append(store)
        return store


@pytest.fixture(params=["memory", "file", "redis"])
def backend(request, tmp_path) -> Iterator[Backend]:
    """The one place that knows how each backend is set up."""
    if request.param == "redis":
        location = request.getfixturevalue("redis_location")
        opened = Backend("redis", lambda read_only: location.open(read_only=read_only))
    elif request.param == "memory":
        backing = MemoryBacking()
        opened = Backend("memory", lambda read_only: MemoryStore(backing, read_only=read_only))
    else:
        state_dir = tmp_path / "state"
        opened = Backend("file", lambda read_only: FileStore.in_dir(
            state_dir, read_only=read_only, clock=ManualClock(CLOCK_START)))
    yield opened
    for store in opened.opened:
        store.close()


# -- reads and writes ------------------------------------------------------------------------------


def test_a_new_state_is_empty(backend):
    store = backend.open()
    assert store.get_properties() == {}
    assert store.get_keys() == []
    assert store.get_property("anything") is None
    assert store.restore_report is None and not store.restored_from_backup
    assert not store.read_only


def test_properties_survive_a_reopen_and_deletes_stick(backend):
    store = backend.open()
    store.set_property("heartbeat", '{"status":"started"}')
    store.set_property("cursor", "12")
    store.delete_property("cursor")
    store.delete_property("never-set")  # like Apps Script: not an error
    store.close()

    again = backend.open()
    assert again.get_properties() == {"heartbeat": '{"status":"started"}'}
    assert again.get_keys() == ["heartbeat"]
    assert again.get_property("cursor") is None


def test_what_a_writer_wrote_is_seen_by_a_reader_opened_later_even_before_close(backend):
    writer = backend.open()
    writer.update({"a": "1", "b": "2"})
    writer.update({"b": "3"}, deleted=["a"])
    assert backend.open(read_only=True).get_properties() == {"b": "3"}


def test_get_properties_is_a_copy(backend):
    store = backend.open()
    store.set_property("a", "1")
    store.get_properties()["a"] = "changed"
    assert store.get_property("a") == "1"


def test_get_keys_are_sorted_and_filtered_by_prefix(backend):
    store = backend.open()
    store.set_properties({"task:b": "1", "dlq:a": "2", "task:a": "3", "task": "4"})
    assert store.get_keys() == ["dlq:a", "task", "task:a", "task:b"]
    assert store.get_keys("task:") == ["task:a", "task:b"]
    assert store.get_keys("none:") == []


def test_update_sets_and_deletes_several_keys_in_one_write(backend):
    store = backend.open()
    store.update({"a": "1", "b": "2", "c": "3"})
    store.update({"b": "20", "d": "4"}, deleted=["a", "c", "missing"])
    assert store.write_count == 2
    assert store.get_properties() == {"b": "20", "d": "4"}
    assert backend.open(read_only=True).get_properties() == {"b": "20", "d": "4"}


def test_set_properties_is_one_write_and_can_replace_everything(backend):
    store = backend.open()
    store.set_properties({"a": "1", "b": "2", "c": "3"})
    assert store.write_count == 1
    store.set_properties({"b": "20", "d": "4"}, delete_all_others=True)
    assert store.write_count == 2
    assert backend.open(read_only=True).get_properties() == {"b": "20", "d": "4"}
    store.delete_all_properties()
    assert backend.open(read_only=True).get_properties() == {}


BAD_UPDATES = {
    "a value that is not a string": ({"a": "2", "b": 3}, [], TypeError, "'b' must be a string"),
    "an empty key": ({"": "x"}, [], ValueError, "non-empty string"),
    "a key that is not a string": ({1: "x"}, [], ValueError, "non-empty string"),
    "a None value": ({"a": None}, [], TypeError, "'a' must be a string"),
    "an empty key to delete": ({"a": "2"}, [""], ValueError, "non-empty string"),
    "a key to delete that is not a string": ({"a": "2"}, [None], ValueError, "non-empty string"),
    "a key both set and deleted": ({"a": "2"}, ["a"], ValueError, "both set and deleted"),
    "one string as the keys to delete": ({}, "ab", TypeError, "single string"),
}


@pytest.mark.parametrize("case", BAD_UPDATES)
def test_every_key_and_value_is_checked_before_anything_changes(backend, case):
    values, deleted, error, message = BAD_UPDATES[case]
    store = backend.open()
    store.set_properties({"a": "1", "b": "1"})
    with pytest.raises(error, match=message):
        store.update(values, deleted)
    assert store.get_properties() == {"a": "1", "b": "1"}
    assert store.write_count == 1
    assert backend.open(read_only=True).get_properties() == {"a": "1", "b": "1"}


def test_the_single_key_writers_check_too(backend):
    store = backend.open()
    with pytest.raises(ValueError, match="non-empty string"):
        store.set_property("", "x")
    with pytest.raises(TypeError, match="must be a string"):
        store.set_property("a", 1)
    with pytest.raises(ValueError, match="non-empty string"):
        store.delete_property("")
    assert store.write_count == 0


def test_an_update_that_changes_nothing_writes_nothing(backend):
    store = backend.open()
    store.set_property("a", "1")
    store.set_property("a", "1")
    store.delete_property("zzz")
    store.update()
    store.update({"a": "1"}, deleted=["zzz"])
    store.set_properties({"a": "1"}, delete_all_others=True)
    assert store.write_count == 1


def test_keys_and_values_round_trip_exactly(backend):
    awkward = {
        "Магазин №5": "остатки",
        'a "quoted" key': 'a "quoted" value',
        "line\nbreak": "line\nbreak\r\n\u2028",
        "tab\tand \\ backslash": "\x00 nul and \x1f",
        "empty value": "",
        "emoji ♻️": "not JSON {",
        "big": "x" * 1_000_000,
    }
    store = backend.open()
    store.set_properties(awkward)
    store.update({"after": "1"})
    assert store.get_properties() == {**awkward, "after": "1"}
    store.close()
    assert backend.open(read_only=True).get_properties() == {**awkward, "after": "1"}


# -- read-only, closed -----------------------------------------------------------------------------

WRITES = {
    "update": lambda store: store.update({"a": "2"}),
    "set_property": lambda store: store.set_property("a", "2"),
    "delete_property": lambda store: store.delete_property("a"),
    "set_properties": lambda store: store.set_properties({"b": "1"}),
    "delete_all_properties": lambda store: store.delete_all_properties(),
}


@pytest.mark.parametrize("write", WRITES)
def test_a_read_only_store_refuses_every_write(backend, write):
    backend.open().set_property("a", "1")
    reader = backend.open(read_only=True)
    assert reader.read_only
    with pytest.raises(StateError, match="read-only"):
        WRITES[write](reader)
    assert reader.get_properties() == {"a": "1"}
    assert backend.open(read_only=True).get_properties() == {"a": "1"}


def test_a_closed_store_refuses_writes_and_closing_twice_is_harmless(backend):
    store = backend.open()
    store.set_property("a", "1")
    store.close()
    store.close()
    with pytest.raises(StateError, match="closed"):
        store.set_property("a", "2")
    assert backend.open().get_properties() == {"a": "1"}


def test_the_store_is_a_context_manager_that_closes(backend):
    with backend.open() as store:
        store.set_property("a", "1")
    with pytest.raises(StateError, match="closed"):
        store.set_property("a", "2")


# -- readers see whole updates ---------------------------------------------------------------------


def test_readers_see_only_complete_updates_while_a_writer_works_and_reopens(backend):
    """Each update moves three keys to the same number and replaces the one marker key: a reader that
    saw half an update would find two numbers, or no marker, or two."""
    backend.open().update({"x": "0", "y": "0", "z": "0", "marker:0": "0"})
    updates, stop, reading = 150, threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            reading.wait(5)
            store = backend.open()
            for n in range(1, updates + 1):
                time.sleep(0.0005)  # let the readers in: a fast backend would finish before they start
                store.update({"x": str(n), "y": str(n), "z": str(n), f"marker:{n}": str(n)},
                             deleted=[f"marker:{n - 1}"])
                if n % 20 == 0:  # closing is where a backend may reorganise its files
                    store.close()
                    store = backend.open()
            store.close()
        except BaseException as exc:  # pragma: no cover - reported by the assertion below
            failures.append(exc)
        finally:
            stop.set()

    writer = threading.Thread(target=write)
    writer.start()
    seen = set()
    while not stop.is_set() or not seen:
        reading.set()
        reader = backend.open(read_only=True)
        properties = reader.get_properties()
        reader.close()
        numbers = {properties["x"], properties["y"], properties["z"]}
        markers = reader.get_keys("marker:")
        assert len(numbers) == 1 and markers == [f"marker:{properties['x']}"], properties
        seen.add(properties["x"])
    writer.join()
    assert not failures, failures
    assert backend.open(read_only=True).get_property("x") == str(updates)
    assert len(seen) > 1  # the readers really ran while the writer did


# -- locks -----------------------------------------------------------------------------------------


def test_lock_instances_exclude_each_other_and_the_context_manager_refuses_when_held(backend):
    first, second = backend.open().lock(), backend.open().lock()
    with first:
        assert first.held and not second.held
        assert first.try_acquire()  # already ours
        assert not second.try_acquire()
        with pytest.raises(LockHeld, match="run"), second:
            pass
    assert not first.held
    assert second.try_acquire()
    second.release()
    second.release()  # harmless
    assert not second.held


def test_a_lock_waits_up_to_its_timeout_and_no_longer(backend):
    holder, waiter = backend.open().lock(), backend.open().lock()
    assert holder.try_acquire()
    started = time.monotonic()
    assert not waiter.acquire(timeout=0.15)
    assert 0.15 <= time.monotonic() - started < 1.0
    releaser = threading.Timer(0.05, holder.release)  # released from another thread
    releaser.start()
    try:
        assert waiter.acquire(timeout=5)
    finally:
        releaser.join()
    assert waiter.held and not holder.held
    waiter.release()


def test_locks_of_different_names_are_independent_and_any_store_can_make_them(backend):
    writer, reader = backend.open(), backend.open(read_only=True)
    run, watchdog = writer.lock(), writer.lock("watchdog")
    assert run.try_acquire() and watchdog.try_acquire()
    assert not reader.lock("run").try_acquire()  # a read-only store's lock is the same lock
    assert not reader.lock("watchdog").try_acquire()
    run.release()
    assert reader.lock("run").try_acquire()
    watchdog.release()


@pytest.mark.parametrize("name", ["", "../run", "a/b", ".hidden", "two words", None])
def test_a_lock_name_must_be_a_plain_name(backend, name):
    with pytest.raises(ValueError, match="lock name"):
        backend.open().lock(name)


# -- the state's documents on every backend -------------------------------------------------------------


def test_a_spreadsheets_incident_is_saved_and_read_back_whole_and_only_what_changed_is_written(backend):
    """Incidents (monitor.engine.incidents) live in the state on every backend: what alerts, reminders
    and every view read must come back exactly as the run left it."""
    from monitor.engine.incidents import Action, Incident, Told
    from monitor.engine.mutes import Mute
    from monitor.state.repository import StateRepository

    now = CLOCK_START
    incident = Incident("abcdefgh", "s1", "Store <1>", "access_lost", now,
                        told=(Told("-1001234567890", 42, now),), acked_by="@ivan", acked_at=now,
                        actions=(Action(now, "@ivan", "acknowledged"),))
    store = backend.open()
    repository = StateRepository(store)
    state = repository.load()
    state.incidents["s1"] = incident
    state.mutes["s1"] = Mute(until=now, reason="rebuilt", muted_at=now, name="Store <1>", by="@ivan",
                             until_fixed=True)
    repository.save(state)
    again = StateRepository(backend.open(read_only=True)).load()
    assert again.incidents["s1"] == incident and again.mutes["s1"] == state.mutes["s1"]
    assert again.damaged == []
    state.incidents["s1"] = incident.with_told(Told("-1001234567890", 43, now))
    before = dict(store.get_properties())
    repository.save(state)
    changed = {key for key, value in store.get_properties().items() if before.get(key) != value}
    assert changed == {"incident/s1"}


def test_maintenance_windows_and_those_told_are_saved_and_read_back_whole_and_only_what_changed_is_written(
        backend):
    """The windows started from the chat (monitor.engine.maintenance) and those the alert memory holds
    as told come back exactly as saved on every backend: a window's silence and its end depend on them."""
    from dataclasses import replace
    from datetime import timedelta

    from monitor.engine.maintenance import end_maintenance, start_maintenance
    from monitor.state.repository import StateRepository

    now = CLOCK_START
    store = backend.open()
    repository = StateRepository(store)
    state = repository.load()
    everything = start_maintenance(state, now, now + timedelta(hours=2), "@ivan", "moving <servers>")
    tagged = start_maintenance(state, now, now + timedelta(hours=1), "Ivan (id 42)", "backup", ["s1", "s2"],
                               ("moscow",))
    state.alerts = replace(state.alerts, maintenance=(everything, tagged))
    repository.save(state)
    again = StateRepository(backend.open(read_only=True)).load()
    assert again.maintenance == state.maintenance and again.maintenance.windows == (tagged, everything)
    assert again.alerts.maintenance == (everything, tagged) and again.damaged == []
    before = dict(store.get_properties())
    later = now + timedelta(minutes=5)
    state.maintenance = replace(state.maintenance, windows=(tagged,))
    repository.save(state)
    changed = {key for key, value in store.get_properties().items() if before.get(key) != value}
    assert changed == {"maintenance"}
    assert end_maintenance(state, later, "@olga", spreadsheet_ids=["s2"]) == [tagged]
    repository.save(state)
    assert StateRepository(backend.open(read_only=True)).load().maintenance.windows == ()
