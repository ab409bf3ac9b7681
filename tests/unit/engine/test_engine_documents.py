"""The engine's small parts around the run: the event log, the state's queries, the run history, mutes
and the run's settings from a config. Pure: ``now`` comes in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from config_fixtures import FULL, load, secrets_folder

from monitor.engine.breaker import HALF_OPEN, OPEN, BreakerPolicy, BreakerState
from monitor.engine.events import ApiDegraded
from monitor.engine.heartbeat import RUNS_KEPT, RunHistory, RunOutcome, RunSummary
from monitor.engine.mutes import Mute
from monitor.engine.runner_state import EVENTS_KEPT, EventLog, RunnerState
from monitor.engine.settings import RunSettings

NOW = datetime(2026, 3, 2, 3, 47, tzinfo=UTC)


def degraded(n: int) -> ApiDegraded:
    return ApiDegraded(at=NOW + timedelta(seconds=n), run_id="run-1", failing_in_a_row=n)


def test_events_come_out_in_the_order_they_came_in_past_nine_and_after_a_reload():
    log = EventLog()
    for n in range(12):
        log.add(degraded(n))
    assert [event.failing_in_a_row for event in log] == list(range(12))  # "10" sorts after "9"
    reloaded = EventLog({int(key): event for key, event in log.pending()})
    reloaded.add(degraded(12))
    assert [event.failing_in_a_row for event in reloaded][-2:] == [11, 12]  # numbered on, not over


def test_the_notifier_removes_the_events_it_turned_into_messages():
    log = EventLog()
    for n in range(3):
        log.add(degraded(n))
    keys = [key for key, _ in log.pending()]
    log.documents.mark_saved()
    log.remove(keys[:2])
    assert [event.failing_in_a_row for event in log] == [2] and len(log) == 1
    assert log.documents.pending_changes() == ({}, set(keys[:2]))


def test_beyond_the_limit_the_oldest_undelivered_events_go():
    log = EventLog()
    for n in range(EVENTS_KEPT + 5):
        log.add(degraded(n))
    assert len(log) == EVENTS_KEPT
    assert next(iter(log)).failing_in_a_row == 5


def test_a_mute_silences_until_its_end_and_not_at_it():
    mute = Mute(until=NOW + timedelta(hours=1), reason="migration", muted_at=NOW)
    state = RunnerState(mutes={"s1": mute})
    assert state.is_muted("s1", NOW + timedelta(minutes=59)) and state.active_mutes(NOW) == {"s1": mute}
    assert not state.is_muted("s1", NOW + timedelta(hours=1))
    assert state.active_mutes(NOW + timedelta(hours=1)) == {}
    assert not state.is_muted("s2", NOW)


def test_open_breakers_are_those_not_closed_in_id_order():
    state = RunnerState(breakers={
        "s3": BreakerState(OPEN, 3, opened_at=NOW, cooldown_seconds=900),
        "s1": BreakerState(HALF_OPEN, 3, opened_at=NOW, cooldown_seconds=900, probe_started_at=NOW),
        "s2": BreakerState(consecutive_failures=2),  # counting, but closed
    })
    assert state.open_breakers() == ["s1", "s3"]


def test_a_state_as_loaded_has_nothing_to_save_and_an_assignment_is_a_change():
    state = RunnerState(runs=RunHistory(), mutes={"s1": Mute(until=NOW, reason="x")})
    assert state.changed_singles == set() and state.mutes.pending_changes() == ({}, set())
    state.runs = state.runs.add(RunSummary("run-1", NOW, NOW, RunOutcome.OK))
    assert state.changed_singles == {"runs"}


def test_the_run_history_keeps_the_latest_runs_oldest_first():
    history = RunHistory()
    for n in range(RUNS_KEPT + 3):
        history = history.add(RunSummary(f"run-{n}", NOW, NOW, RunOutcome.OK))
    assert len(history.runs) == RUNS_KEPT
    assert (history.runs[0].run_id, history.runs[-1].run_id) == ("run-3", f"run-{RUNS_KEPT + 2}")


def test_the_run_settings_of_a_config(tmp_path):
    config = load(secrets_folder(tmp_path), FULL)
    settings = RunSettings.from_config(config)
    assert settings.budget == timedelta(minutes=4, seconds=30)
    assert settings.round_interval == timedelta(minutes=5) and settings.request_timeout == 30.0
    assert settings.breaker == BreakerPolicy(4, timedelta(minutes=15), timedelta(hours=1))
    assert RunSettings.from_config(config, timedelta(seconds=20)).budget == timedelta(seconds=20)
