"""The watchdog's own store (``<state_dir>/watchdog-state.json``, lock ``watchdog``), through real passes:
made on the first pass, a damaged document set aside and started afresh, the first release's
``watchdog.json`` carried over once, and two overlapping passes never both writing."""

from __future__ import annotations

import io
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from paths import FIXTURES
from watchdog_helpers import (
    SETTINGS,
    T0,
    Watchdog,
    heartbeat,
    runs_every_5_minutes,
    stored_memory,
    stored_outbox,
    texts,
    watchdog_documents,
    write_runner_state,
    write_watchdog_store,
)

from monitor.core.clock import ManualClock
from monitor.core.timefmt import format_utc
from monitor.notify.telegram import PrintingSender
from monitor.state.schema import DAMAGED_PREFIX, OUTBOX
from monitor.storage import FileLocation
from monitor.watchdog import store as watchdog_store
from monitor.watchdog.judge import HEALTHY, SILENT
from monitor.watchdog.watch import watchdog_pass

FIRST_RELEASE = FIXTURES / "first_release"
STORE_FILE = f"{watchdog_store.STORE_NAME}.json"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def dog(tmp_path, clock, server, http) -> Watchdog:
    return Watchdog(tmp_path / "state", clock, server.base_url, http)


def store_files(state_dir: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(state_dir.glob(STORE_FILE + "*"))}


def test_the_first_pass_makes_the_store_with_its_two_documents(dog, fake):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=2)))
    assert not FileLocation(dog.state_dir).exists(watchdog_store.STORE_NAME)
    report = dog.run()
    assert report.verdict.healthy and report.said is None and texts(fake) == []
    documents = watchdog_documents(dog.state_dir)
    assert set(documents) == {"memory", "outbox"}
    assert watchdog_store.MEMORY.decode(documents["memory"]).status == HEALTHY
    assert stored_outbox(dog.state_dir).pending == ()


DAMAGED_DOCUMENTS = {
    "a memory that is a string": ("memory", '"silent"'),
    "a memory whose since is not a time": ("memory", '{"status": "silent", "since": "yesterday"}'),
    "a memory that is not JSON": ("memory", "{status: silent"),
    "an outbox without a list of pending messages": ("outbox", json.dumps({"pending": None})),
    "a pending message without its key": ("outbox", json.dumps({"pending": [{"text": "no key"}]})),
    "migrations that are not a mapping": ("outbox", json.dumps({"pending": [], "migrations": ["a", "b"]})),
}


@pytest.mark.parametrize("shape", DAMAGED_DOCUMENTS)
def test_a_damaged_document_is_set_aside_and_started_afresh_instead_of_failing_every_pass(
        dog, clock, fake, shape):
    key, raw = DAMAGED_DOCUMENTS[shape]
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    write_watchdog_store(dog.state_dir, {key: raw})
    report = dog.run()
    assert report.said == "alert" and not report.delivery_failed
    assert len(texts(fake)) == 1

    documents = watchdog_documents(dog.state_dir)
    kept = json.loads(documents[DAMAGED_PREFIX + key])
    assert kept["value"] == raw and kept["problem"] and kept["found_at"] == format_utc(T0)
    # A fresh, valid document in its place.
    assert watchdog_store.MEMORY.decode(documents["memory"]).status == SILENT
    assert OUTBOX.decode(documents["outbox"]).pending == ()

    clock.advance(15 * 60)
    assert dog.run().said is None  # the fresh memory remembers this outage: no second alert
    assert len(texts(fake)) == 1


# -- the first release's watchdog.json


NOV29 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)  # the fixture's outage began 09:00, alerted 09:15


@pytest.fixture
def first_release_dog(tmp_path, clock, server, http) -> Watchdog:
    state_dir = tmp_path / "state"
    write_runner_state(state_dir, heartbeat(datetime(2026, 11, 29, 8, 59, tzinfo=UTC)))
    shutil.copy(FIRST_RELEASE / "watchdog.json", state_dir / watchdog_store.LEGACY_FILE_NAME)
    clock.advance((NOV29 - clock.now()).total_seconds())
    return Watchdog(state_dir, clock, server.base_url, http)


def test_the_first_releases_memory_and_outbox_are_carried_over_once(first_release_dog, fake):
    dog = first_release_dog
    report = dog.run()
    # Its memory goes on: the outage was alerted at 09:15, so no new alert and no reminder yet...
    assert report.verdict.status == SILENT and report.said is None
    # ...and its outbox too: the alert Telegram could not take then is delivered now.
    assert [result.key for result in report.results] == ["watchdog:alert:abc"]
    assert texts(fake) == ["🚨 <b>Monitor runs stopped</b>"]  # as the first release composed it
    assert not (dog.state_dir / watchdog_store.LEGACY_FILE_NAME).exists()
    memory = json.loads(watchdog_documents(dog.state_dir)["memory"])
    assert memory["since"] == "2026-11-29T09:00:00.000Z"

    # A copy of the old file put back (a restored backup) is not read again: nothing is sent twice.
    shutil.copy(FIRST_RELEASE / "watchdog.json", dog.state_dir / watchdog_store.LEGACY_FILE_NAME)
    dog.clock.advance(15 * 60)
    assert dog.run().results == []
    assert len(texts(fake)) == 1


def test_the_outage_the_first_release_alerted_ends_with_its_length(first_release_dog, fake):
    dog = first_release_dog
    dog.run()
    dog.clock.advance(60 * 60)  # runs resumed at 10:40, every 5 minutes
    resumed = datetime(2026, 11, 29, 10, 40, tzinfo=UTC)
    write_runner_state(dog.state_dir, heartbeat(resumed + timedelta(minutes=15)),
                       runs_every_5_minutes(resumed, 4))
    assert dog.run().said == "recovered"
    assert "lasted 1 hour and 40 minutes" in texts(fake)[-1]  # from 09:00, as the first release remembered it


# -- one writer at a time


def test_a_pass_that_finds_another_pass_holding_the_watchdog_lock_skips_writing_nothing(dog, fake):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    other = FileLocation(dog.state_dir).lock(watchdog_store.LOCK_NAME)
    assert other.try_acquire()
    try:
        report = dog.run()
    finally:
        other.release()
    assert report.skipped and report.verdict is None and report.said is None
    assert texts(fake) == [] and store_files(dog.state_dir) == {}
    assert dog.run().said == "alert"  # once the other pass is done, the next one works


def test_two_overlapping_passes_never_both_write(tmp_path, clock):
    state_dir = tmp_path / "state"
    write_runner_state(state_dir, heartbeat(T0 - timedelta(minutes=2)))
    overlapping = []

    def one_pass(ping=None):
        return watchdog_pass(state_dir, SETTINGS, lambda outbox: PrintingSender(io.StringIO()), clock.now(),
                             heartbeat_url="http://127.0.0.1:9/ping", **({"ping": ping} if ping else {}))

    def second_pass_meanwhile(url: str) -> bool:
        # The first pass pings last, after saving, still holding the watchdog lock.
        before = store_files(state_dir)
        overlapping.append(one_pass(ping=lambda url: True))
        assert store_files(state_dir) == before  # the second pass wrote nothing
        return True

    first = one_pass(ping=second_pass_meanwhile)
    assert not first.skipped and first.pinged is True
    [second] = overlapping
    assert second.skipped and second.verdict is None and second.pinged is None
    assert stored_memory(state_dir).status == HEALTHY
