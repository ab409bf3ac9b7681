"""A state written by the first release (tests/fixtures/first_release) loads and is rewritten in
today's layout."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from paths import FIXTURES

from monitor.engine import events
from monitor.engine.breaker import OPEN
from monitor.engine.health import ERROR, OK
from monitor.engine.heartbeat import RunOutcome
from monitor.engine.tasks import FAILED, PENDING, PROCESSING
from monitor.state import changing_state, read_state
from monitor.state.schema import SCHEMA_KEY
from monitor.storage import FileStore
from monitor.watchdog import store as watchdog_store
from tests.refs import a1

FIXTURE = FIXTURES / "first_release"
NOW = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "state"
    folder.mkdir()
    shutil.copy(FIXTURE / "properties.json", folder / "properties.json")
    return folder


def first_release_properties() -> dict[str, dict | list]:
    document = json.loads((FIXTURE / "properties.json").read_text())
    return {key: json.loads(value) for key, value in document["properties"]["1"].items()}


def test_every_document_of_the_first_release_is_read_into_its_type(state_dir):
    old = first_release_properties()
    state = read_state(state_dir)

    assert state.damaged == []
    assert state.round.id == old["round"]["id"]
    assert len(state.round) == len(old["round"]["tasks"])
    assert state.round.info.behind_reported  # flags.behind_round named this round
    statuses = {task.id: task.status for task in state.round.tasks.values()}
    assert PROCESSING in statuses.values() and FAILED in statuses.values()
    waiting = [task for task in state.round.tasks.values() if task.status is PENDING and task.next_attempt_at]
    assert waiting and waiting[0].last_error.http_status == 503

    assert set(state.health) == set(old["sheets"])
    assert {record.health for record in state.health.values()} >= {OK, ERROR}
    assert [breaker.state for breaker in state.breakers.values()] == [OPEN] * len(old["breakers"])
    assert set(state.dlq) == set(old["dlq"])
    assert all(entry.task.target == sid for sid, entry in state.dlq.items())
    assert set(state.mutes) == set(old["mutes"])
    assert state.retry_first.spreadsheet_ids == tuple(old["flags"]["retry_first"])
    assert state.heartbeat.run_id == old["heartbeat"]["run_id"]
    assert state.heartbeat.outcome is RunOutcome.OK
    assert state.heartbeat.stats.round.done == old["heartbeat"]["stats"]["round"]["done"]
    assert [run.run_id for run in state.runs.runs] == [run["run_id"] for run in old["runs"]]
    assert state.api.degraded
    assert set(state.quota.sent) == set(old["quota"]["sent"])
    # Which project the first release's sends went to is unknown: they count against every project.
    assert state.quota.every_project == tuple(old["quota"]["project"]) and state.quota.projects == {}
    assert [message.key for message in state.outbox.pending] == ["alert:fixture1"]
    assert state.outbox.halted.description == "Forbidden: bot was kicked"
    assert state.outbox.migrations == {"-100123": "-1009999"}
    assert set(state.alerts.alerted) == set(old["alerts"]["alerted"])


def test_the_first_release_events_become_one_typed_event_each(state_dir):
    state = read_state(state_dir)
    kinds = [type(event) for event in state.events]
    assert kinds == [
        events.HealthChanged, events.HealthChanged, events.DeadLettered, events.ReadableAgain,
        events.ApiRecovered, events.BreakerOpened, events.BreakerClosed, events.ApiDegraded,
        events.FallingBehind, events.CrashRecovered, events.StateRestored, events.DeliveryHalted,
    ]
    changed = next(iter(state.events))
    assert (changed.previous, changed.current) == ("ok", "warn")
    assert a1(changed.findings[0].cells) == ("Stock!F7",)


def test_a_writer_rewrites_the_first_release_layout_once_and_keeps_everything(state_dir):
    before = read_state(state_dir)
    with changing_state(state_dir, actor="admin-test", now=NOW) as session:
        assert session is not None
    store = FileStore.in_dir(state_dir, read_only=True)
    keys = store.get_keys()
    store.close()
    assert SCHEMA_KEY in keys
    assert not {"sheets", "flags", "events", "dlq", "breakers", "mutes"} & set(keys)  # the old collections
    assert sum(key.startswith("task/") for key in keys) == len(before.round)

    after = read_state(state_dir)
    assert after.round.info == before.round.info
    by_id = lambda rnd: sorted(rnd.tasks.values(), key=lambda task: task.id)  # noqa: E731
    assert by_id(after.round) == by_id(before.round)
    assert dict(after.health.items()) == dict(before.health.items())
    assert dict(after.dlq.items()) == dict(before.dlq.items())
    assert list(after.events) == list(before.events)
    assert after.outbox == before.outbox and after.alerts == before.alerts and after.quota == before.quota


def test_a_damaged_entry_of_the_first_release_is_set_aside_and_the_rest_migrates(state_dir):
    document = json.loads((state_dir / "properties.json").read_text())
    properties = document["properties"]["1"]
    sheets = json.loads(properties["sheets"])
    damaged_id = next(iter(sheets))
    sheets[damaged_id]["extra"] = 1
    properties["sheets"] = json.dumps(sheets)
    mutes = json.loads(properties["mutes"])
    mutes[next(iter(mutes))]["until"] = "tomorrow"
    properties["mutes"] = json.dumps(mutes)
    (state_dir / "properties.json").write_text(json.dumps(document))

    with changing_state(state_dir, actor="admin-test", now=NOW) as session:
        told = [event for event in session.state.events if isinstance(event, events.StateEntryDamaged)]
    expected = [f"sheets.{damaged_id}", f"mutes.{next(iter(mutes))}"]
    assert sorted(event.key for event in told) == sorted(expected)
    after = read_state(state_dir)
    assert damaged_id not in after.health and len(after.health) == len(sheets) - 1
    assert sorted(after.set_aside) == sorted(event.key for event in told)


def test_the_watchdog_carries_over_its_first_release_memory(tmp_path):
    shutil.copy(FIXTURE / "watchdog.json", tmp_path / "watchdog.json")
    store = FileStore(tmp_path / f"{watchdog_store.STORE_NAME}.json")
    try:
        state = watchdog_store.load_watchdog_state(store, tmp_path, NOW)
    finally:
        store.close()
    assert state.memory.status == "silent"
    assert state.memory.last_alert_at == datetime(2026, 11, 29, 9, 15, tzinfo=UTC)
    assert [message.key for message in state.outbox.pending] == ["watchdog:alert:abc"]
    assert state.outbox.pending[0].last_error.description == "Telegram unreachable"
    assert state.outbox.sent_keys == ("watchdog:recovered:1",)
    assert not (tmp_path / "watchdog.json").exists()  # carried over once, then removed
    reopened = FileStore(tmp_path / f"{watchdog_store.STORE_NAME}.json")
    try:
        assert watchdog_store.load_watchdog_state(reopened, tmp_path, NOW) == state
    finally:
        reopened.close()


def test_a_quota_log_without_a_project_log_counts_every_send_against_every_project():
    from monitor.state.schema import QUOTA, upgraded

    old = {"window_seconds": 61.0, "sent": {"sa-1.json": [10.0, 12.0], "sa-2.json": [11.0]}}
    log = QUOTA.validate(upgraded(QUOTA, old, 1))
    assert log.every_project == (10.0, 11.0, 12.0) and log.projects == {}
    newer = {"window_seconds": 61.0, "sent": {}, "projects": {"p": [1.0]}, "every_project": [],
             "paused_until": {}}
    again = QUOTA.validate(upgraded(QUOTA, newer, 1))
    assert again.projects == {"p": (1.0,)}  # already the newer shape: left as it is
