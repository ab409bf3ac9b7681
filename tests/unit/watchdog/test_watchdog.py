"""One watchdog pass over a real state folder, sending to the fake Telegram over real HTTP: what people
hear and when, what is pinged, and that the runner's state is only ever read.

The watchdog's own store is tested in test_watchdog_store, the console script in test_watchdog_cli,
the pure verdicts and transitions in test_watchdog_judge. Time is a ManualClock; nothing sleeps.
"""

from __future__ import annotations

import io
import json
from datetime import timedelta, timezone

import pytest
from telegram_fixtures import closed_port_url
from watchdog_helpers import (
    SETTINGS,
    T0,
    Watchdog,
    heartbeat,
    runs_every_5_minutes,
    serving_pings,
    stored_outbox,
    texts,
    watchdog_documents,
    write_runner_state,
    write_watchdog_store,
)

from monitor.core.clock import ManualClock
from monitor.notify.documents import Outbox, PendingMessage
from monitor.notify.telegram import PrintingSender
from monitor.state.schema import OUTBOX
from monitor.storage import FileLocation
from monitor.watchdog import store as watchdog_store
from monitor.watchdog.judge import SILENT, STATE_MISSING, STATE_UNREADABLE
from monitor.watchdog.watch import watchdog_pass


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def pings():
    with serving_pings() as counter:
        yield counter


@pytest.fixture
def dog(tmp_path, clock, server, http, pings) -> Watchdog:
    return Watchdog(tmp_path / "state", clock, server.base_url, http, ping_url=pings.url)


def runner_files(state_dir) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(state_dir.glob("properties.json*"))}


def test_a_heartbeat_20_minutes_old_alerts_once_and_a_pass_15_minutes_later_says_nothing(
        dog, clock, fake, pings):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    report = dog.run()
    assert report.verdict.status == SILENT and report.said == "alert" and not report.delivery_failed
    assert len(texts(fake)) == 1
    assert "Monitor runs stopped" in texts(fake)[0] and "vps-1" in texts(fake)[0]
    assert "20 minutes ago" in texts(fake)[0]
    # An unhealthy pass does not say all is well: it pings the failure endpoint instead.
    assert pings.paths == ["/ping/3f1c/fail"] and report.pinged is None and report.failure_pinged is True

    clock.advance(15 * 60)
    report = dog.run()
    assert report.verdict.status == SILENT and report.said is None
    assert len(texts(fake)) == 1


def test_runs_resuming_give_one_recovered_message_with_the_outage_length(dog, clock, fake, pings):
    last_good = T0 - timedelta(minutes=20)
    write_runner_state(dog.state_dir, heartbeat(last_good), runs_every_5_minutes(last_good, 1))
    dog.run()
    clock.advance(30 * 60)  # runs resumed 10 minutes ago, every 5 minutes
    resumed = T0 + timedelta(minutes=20)
    runs = runs_every_5_minutes(last_good, 1) + runs_every_5_minutes(resumed, 3)
    write_runner_state(dog.state_dir, heartbeat(resumed + timedelta(minutes=10)), runs)
    report = dog.run()
    assert report.said == "recovered" and report.pinged is True
    assert len(texts(fake)) == 2
    assert "healthy again" in texts(fake)[1] and "lasted 40 minutes" in texts(fake)[1]
    assert pings.paths == ["/ping/3f1c/fail", "/ping/3f1c"]  # the outage's pass, then the recovery's

    clock.advance(15 * 60)
    write_runner_state(dog.state_dir, heartbeat(clock.now() - timedelta(minutes=2)), runs)
    assert dog.run().said is None
    assert len(texts(fake)) == 2
    assert len(pings.paths) == 3  # each healthy pass pings


def test_a_missing_state_file_alerts(dog, fake):
    report = dog.run()
    assert report.verdict.status == STATE_MISSING
    assert "state file missing" in texts(fake)[0]
    assert not FileLocation(dog.state_dir).exists()  # the watchdog created no runner state


def test_an_unreadable_state_file_alerts_without_touching_it(dog, fake):
    dog.state_dir.mkdir(parents=True)
    for name in ("properties.json", "properties.json.bak"):
        (dog.state_dir / name).write_text("{torn")
    report = dog.run()
    assert report.verdict.status == STATE_UNREADABLE
    assert "unreadable" in texts(fake)[0]
    assert runner_files(dog.state_dir) == {"properties.json": b"{torn", "properties.json.bak": b"{torn"}


def test_a_heartbeat_stored_with_another_offset_is_the_same_instant(dog, fake):
    # A first-release or hand-edited state may hold times with an offset; they compare as instants.
    finished = T0 - timedelta(minutes=10)
    write_runner_state(dog.state_dir, heartbeat(finished))
    location = FileLocation(dog.state_dir)
    with location.lock(), location.open() as store:
        document = json.loads(store.get_property("heartbeat"))
        document["finished_at"] = finished.astimezone(timezone(timedelta(hours=3))).isoformat()
        store.update({"heartbeat": json.dumps(document)})
    report = dog.run()
    assert report.verdict.healthy and report.verdict.last_finished_at == finished
    assert texts(fake) == []


def test_the_pass_reads_while_a_run_holds_the_run_lock(dog, fake):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    lock = FileLocation(dog.state_dir).lock()
    assert lock.try_acquire()
    try:
        assert dog.run().said == "alert"
    finally:
        lock.release()
    assert len(texts(fake)) == 1


def test_the_watchdog_keeps_its_memory_in_its_own_private_store(dog):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    before = runner_files(dog.state_dir)
    dog.run()
    documents = watchdog_documents(dog.state_dir)
    assert watchdog_store.MEMORY.decode(documents["memory"]).status == SILENT
    outbox = OUTBOX.decode(documents["outbox"])
    assert outbox.pending == () and len(outbox.sent_keys) == 1
    own_files = list(dog.state_dir.glob("watchdog-state.json*"))
    assert own_files and {oct(path.stat().st_mode & 0o777) for path in own_files} == {"0o600"}
    assert runner_files(dog.state_dir) == before  # the runner's state untouched


def test_a_telegram_outage_loses_nothing_and_duplicates_nothing(tmp_path, clock, server, http, fake):
    write_runner_state(tmp_path, heartbeat(T0 - timedelta(minutes=20)))
    down = Watchdog(tmp_path, clock, closed_port_url(), http)
    report = down.run()
    assert report.said == "alert" and report.delivery_failed and report.undelivered == 1
    clock.advance(15 * 60)
    assert down.run().delivery_failed  # still down: still owed, nothing composed twice
    assert len(stored_outbox(tmp_path).pending) == 1

    clock.advance(15 * 60)
    report = Watchdog(tmp_path, clock, server.base_url, http).run()
    assert not report.delivery_failed and report.undelivered == 0
    assert len(texts(fake)) == 1 and "Monitor runs stopped" in texts(fake)[0]


def test_an_outage_over_before_its_alert_could_be_sent_is_told_once_by_the_recovery(
        tmp_path, clock, server, http, fake):
    """A wrong bot token stops the runs' alerts and the watchdog's alike: its "Alerts cannot reach
    Telegram" waits in its outbox. Once the token is fixed, the chat hears one recovery saying what
    happened, not that stale alert just before it."""
    write_runner_state(tmp_path, heartbeat(T0 - timedelta(minutes=20)))
    down = Watchdog(tmp_path, clock, closed_port_url(), http)
    assert down.run().said == "alert" and len(stored_outbox(tmp_path).pending) == 1
    clock.advance(30 * 60)
    runs = runs_every_5_minutes(clock.now() - timedelta(minutes=12), 3)
    write_runner_state(tmp_path, heartbeat(clock.now() - timedelta(minutes=2)), runs)
    report = Watchdog(tmp_path, clock, server.base_url, http).run()
    assert report.said == "recovered" and report.undelivered == 0
    [recovered] = texts(fake)
    assert "healthy again" in recovered
    assert "Its alert could not reach this chat while it lasted." in recovered
    assert "Monitor runs stopped" not in recovered.split("\n")[0]


def test_a_backlog_left_by_the_send_budget_is_not_a_delivery_failure(dog, fake):
    write_runner_state(dog.state_dir, heartbeat(T0 - timedelta(minutes=20)))
    held = Outbox(pending=tuple(PendingMessage(f"held-{n}", f"held {n}", T0, attempts=1) for n in range(2)))
    write_watchdog_store(dog.state_dir, {"outbox": OUTBOX.encode(held)})
    report = dog.run(send_budget=2)
    assert [result.outcome for result in report.results] == ["sent", "sent"]
    assert report.undelivered == 1 and not report.delivery_failed  # the alert goes next pass
    assert texts(fake) == ["held 0", "held 1"]


def test_without_telegram_the_alert_is_printed(tmp_path, clock):
    write_runner_state(tmp_path, heartbeat(T0 - timedelta(minutes=20)))
    out = io.StringIO()
    report = watchdog_pass(tmp_path, SETTINGS, lambda outbox: PrintingSender(out), clock.now())
    assert not report.delivery_failed
    assert "Monitor runs stopped" in out.getvalue() and "<b>" not in out.getvalue()
