"""Metric histories are read when first used, not when the state opens: what that changes, and what not.

A run at 20,000 spreadsheets decoded 20,000 histories before its first read, of which it then used a
few hundred. Now each is held as its stored text until it is used. What must not change: what the
state shows (a lookup, a count, a listing: only what could be read), nothing lost (a document never
read is written back as it was stored, or not at all), nothing silent (a damaged one is set aside and
told by the save after it was found, as one found at the opening is). Once saved, a history is held
as its stored text again, the store's own string: one form of it, not two. On a real state folder.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from monitor.engine.events import StateEntryDamaged
from monitor.engine.health import OK, SheetHealth
from monitor.engine.history import Point, SheetHistory
from monitor.engine.unconfigured import forget_unconfigured
from monitor.state import changing_state, read_state
from monitor.state import schema as schema_module
from monitor.state.schema import DAMAGED_PREFIX, HISTORY
from monitor.storage import FileLocation

T0 = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
T1 = T0 + timedelta(hours=1)
A, B, C = (f"1sheet{letter}".ljust(44, "x") for letter in "ABC")
DAMAGED = '{"read_at": "2026-12-01T02:00:00Z", "colour": "red"}'  # valid JSON, an extra field


def history(sid: str) -> SheetHistory:
    return SheetHistory(T0, series={f"rows of {sid[6]}": (Point(T0, 12.0),)})


@pytest.fixture
def folder(tmp_path):
    """A state of three spreadsheets, each with its health and its history; B's history damaged."""
    with changing_state(tmp_path, actor="run-1", now=T0) as session:
        for sid in (A, B, C):
            session.state.health[sid] = SheetHealth(OK, since=T0, last_checked_at=T0)
            session.state.history[sid] = history(sid)
    damage(tmp_path, HISTORY.key(B), DAMAGED)
    return tmp_path


def damage(folder, key: str, raw: str) -> None:
    location = FileLocation(folder)
    with location.lock(), location.open() as store:
        store.update({key: raw})


def stored(folder) -> dict[str, str]:
    with FileLocation(folder).open(read_only=True) as store:
        return store.get_properties()


def told(events) -> list[StateEntryDamaged]:
    return [event for event in events if isinstance(event, StateEntryDamaged)]


def test_a_history_is_read_when_first_used_and_a_count_reads_them_all(folder):
    with changing_state(folder, actor="run-2", now=T1) as session:
        histories = session.state.history
        assert set(histories.unread()) == {A, B, C}  # nothing decoded at the opening
        assert histories.get(A) == history(A)
        assert set(histories.unread()) == {B, C}
        assert histories.ids() == {A, B, C}  # ids without reading: B's is among them until read
        assert len(histories) == 2 and set(histories) == {A, C}  # what could be read, and only that
        assert histories.unread() == {}


def test_a_saved_history_is_held_as_the_stores_own_text_until_used_again(folder):
    later = SheetHistory(T1, series={"rows of A": (Point(T0, 12.0), Point(T1, 13.0))})
    with changing_state(folder, actor="run-2", now=T1) as session:
        histories = session.state.history
        histories[A] = later
        assert histories.get(C) == history(C)  # read, unchanged
        assert set(histories.unread()) == {B}
        session.save()
        assert set(histories.unread()) == {A, B, C}  # decoded no more
        assert histories.unread()[A] is session.store.get_property(HISTORY.key(A))  # one string
        assert histories.unread()[C] is session.store.get_property(HISTORY.key(C))
        assert histories.get(A) == later and histories.get(C) == history(C)  # read back as saved
        changed = SheetHistory(T1, series={"rows of C": (Point(T1, 1.0),)})
        histories[C] = changed  # a change after the release is a change like any other
    assert read_state(folder).history.get(A) == later
    assert read_state(folder).history.get(C) == changed


def test_a_history_not_saved_yet_is_never_let_go(folder):
    later = SheetHistory(T1, series={"rows of A": (Point(T1, 2.0),)})
    with changing_state(folder, actor="run-2", now=T1) as session:
        histories = session.state.history
        histories[A] = later
        stored_text = lambda sid: session.store.get_property(HISTORY.key(sid))  # noqa: E731
        histories.release([A], stored_text)  # even named as saved: its change is not on the store
        assert A not in histories.unread() and histories.changed(A)
        del histories[C]
        histories.release([C], stored_text)
        assert C not in histories and C not in histories.unread()
    after = read_state(folder).history
    assert after.get(A) == later and C not in after


def test_a_damaged_history_is_not_there_when_used_and_the_next_save_sets_it_aside_and_tells_it(folder):
    with changing_state(folder, actor="run-2", now=T1) as session:
        state = session.state
        assert told(state.events) == [] and state.damaged == []  # not read at the opening: not found
        assert state.history.get(B) is None and B not in state.history
        assert [damage.key for damage in state.damaged] == [HISTORY.key(B)]
        session.save()
        assert state.damaged == []
        [event] = told(state.events)
    assert event.key == HISTORY.key(B) and event.run_id == "run-2"
    assert event.set_aside_as == DAMAGED_PREFIX + HISTORY.key(B)
    after = stored(folder)
    assert HISTORY.key(B) not in after
    kept = json.loads(after[DAMAGED_PREFIX + HISTORY.key(B)])
    assert kept == {"problem": event.problem, "found_at": "2026-12-01T04:00:00.000Z", "value": DAMAGED}
    assert read_state(folder).set_aside == [HISTORY.key(B)]


def test_a_damaged_history_nobody_used_stays_stored_as_it_was_until_a_run_uses_it(folder):
    with changing_state(folder, actor="admin-mute", now=T1) as session:
        session.state.health[A] = SheetHealth(OK, since=T0, last_checked_at=T1)  # a change, saved
    assert stored(folder)[HISTORY.key(B)] == DAMAGED  # not lost, not rewritten
    assert told(read_state(folder).events) == []
    with changing_state(folder, actor="run-3", now=T1) as session:
        session.state.history.get(B)
    [event] = told(read_state(folder).events)
    assert event.key == HISTORY.key(B) and event.run_id == "run-3"


def test_forgetting_an_unconfigured_spreadsheet_sets_its_damaged_history_aside_not_dropped(folder):
    with changing_state(folder, actor="run-2", now=T1) as session:
        state = session.state
        gone = forget_unconfigured(state, [A, C], T1, "run-2", state.events.add)
        assert gone == [B]
    after = stored(folder)
    assert HISTORY.key(B) not in after
    assert json.loads(after[DAMAGED_PREFIX + HISTORY.key(B)])["value"] == DAMAGED
    assert [event.key for event in told(read_state(folder).events)] == [HISTORY.key(B)]


def test_a_whole_save_writes_the_unread_histories_back_as_they_were_stored(folder):
    before = stored(folder)
    with changing_state(folder, actor="run-2", now=T1) as session:
        session.repository.save_all(session.state)
        assert set(session.state.history.unread()) == {A, B, C}
    after = stored(folder)
    assert all(after[HISTORY.key(sid)] == before[HISTORY.key(sid)] for sid in (A, B, C))


def test_histories_of_an_older_version_are_read_and_upgraded_at_the_opening(folder, monkeypatch):
    # A release whose history is version 2 opens this state (version 1): it reads every history now,
    # upgraded, because the whole save that follows writes them in its shape under its schema.
    monkeypatch.setattr(HISTORY, "version", 2)
    monkeypatch.setitem(schema_module.UPGRADES, ("history", 1), lambda value: value)
    with changing_state(folder, actor="run-2", now=T1) as session:
        state = session.state
        assert state.history.unread() == {}
        assert set(state.history) == {A, C}
        [event] = told(state.events)  # found at the opening, as any damage is there
        assert event.key == HISTORY.key(B)
    assert json.loads(stored(folder)["schema"])["documents"]["history"] == 2
