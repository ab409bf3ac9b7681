"""Runners sharing one state, judged and named: the watchdog's verdicts over several runners, event
keys that two runners never share, and a runner's name in the config."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from watchdog_helpers import SETTINGS

from monitor.config import StateConfig
from monitor.config.sections import host_runner_name
from monitor.engine.events import CrashRecovered
from monitor.engine.heartbeat import Heartbeat, RunOutcome, RunSummary
from monitor.engine.runner_state import EventLog, is_event_key
from monitor.watchdog.judge import HEALTHY, RUNNER_STOPPED, SILENT, RunnerReading, judge_runner
from monitor.watchdog.outages import WatchdogMemory, advance

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def finished(run_id: str, minutes_ago: float) -> tuple[Heartbeat, tuple[RunSummary, ...]]:
    """A runner whose last run finished ``minutes_ago`` minutes before NOW."""
    end = NOW - timedelta(minutes=minutes_ago)
    start = end - timedelta(minutes=1)
    beat = Heartbeat(run_id=run_id, started_at=start, budget_seconds=300, finished_at=end,
                     outcome=RunOutcome.OK)
    return beat, (RunSummary(run_id, start, end, RunOutcome.OK),)


def reading(**runners) -> RunnerReading:
    return RunnerReading(exists=True, runners=dict(runners))


def test_runners_that_all_finished_lately_are_healthy():
    verdict = judge_runner(reading(a=finished("r1", 2), b=finished("r2", 4)), NOW, SETTINGS)
    assert verdict.status == HEALTHY


def test_one_runner_silent_while_the_others_carry_on_is_told_by_name():
    verdict = judge_runner(reading(a=finished("r1", 2), b=finished("r2", 40), c=finished("r3", 3)), NOW,
                           SETTINGS)
    assert verdict.status == RUNNER_STOPPED
    assert "runner b: no run has finished since" in verdict.reason
    assert "meanwhile 2 other runners worked" in verdict.reason
    assert verdict.began_at == NOW - timedelta(minutes=40)


def test_one_runner_silent_just_at_the_allowed_silence_is_not_yet_stopped():
    limit = SETTINGS.max_silence.total_seconds() / 60
    judged = judge_runner(reading(a=finished("r1", 1), b=finished("r2", limit)), NOW, SETTINGS)
    assert judged.status == HEALTHY
    assert judge_runner(reading(a=finished("r1", 1), b=finished("r2", limit + 0.01)), NOW,
                    SETTINGS).status == RUNNER_STOPPED


def test_all_runners_silent_is_the_monitor_silent():
    verdict = judge_runner(reading(a=finished("r1", 30), b=finished("r2", 40)), NOW, SETTINGS)
    assert verdict.status == SILENT


def test_a_runner_stuck_in_a_run_while_another_works_is_a_stopped_runner():
    stuck = Heartbeat(run_id="r9", started_at=NOW - timedelta(minutes=30), budget_seconds=300)
    verdict = judge_runner(reading(a=finished("r1", 1), b=(stuck, ())), NOW, SETTINGS)
    assert verdict.status == RUNNER_STOPPED
    assert "runner b: run r9 started" in verdict.reason
    assert "meanwhile 1 other runner worked" in verdict.reason


def test_one_runners_outage_is_told_once_and_its_recovery_once():
    stopped = judge_runner(reading(a=finished("r1", 1), b=finished("r2", 40)), NOW, SETTINGS)
    first = advance(WatchdogMemory(), stopped, NOW, SETTINGS)
    again = advance(first.memory, stopped, NOW + timedelta(minutes=5), SETTINGS)
    back = judge_runner(reading(a=finished("r1", 1), b=finished("r3", 1)), NOW, SETTINGS)
    recovered = advance(again.memory, back, NOW + timedelta(minutes=10), SETTINGS)
    assert (first.kind, again.kind, recovered.kind) == ("alert", None, "recovered")
    assert "A monitor runner stopped" in first.messages[0].text


def test_two_runners_adding_their_next_event_write_two_keys():
    event = CrashRecovered(at=NOW, run_id="r", previous_run_id=None, reclaimed=1, poisoned=0)
    host_a, host_b = EventLog({5: event}, suffix="host-a"), EventLog({5: event}, suffix="host-b")
    host_a.add(event)
    host_b.add(event)
    keys = {key for key, _ in host_a.pending()} | {key for key, _ in host_b.pending()}
    assert keys == {"000000000005", "000000000006.host-a", "000000000006.host-b"}
    assert EventLog(dict.fromkeys(keys, event)).pending()[0][0] == "000000000005"  # still in order


@pytest.mark.parametrize("key", ["000000000042", "000000000042.host-a", "000000000042.db1_b"])
def test_event_keys_read_back(key):
    assert is_event_key(key)


@pytest.mark.parametrize("key", ["42x", "000000000042.", "000000000042.-a", "000000000042.a.b", "x.host"])
def test_event_keys_of_another_shape_are_damage(key):
    assert not is_event_key(key)


def test_a_runners_name_defaults_to_the_host_name_and_is_checked():
    assert StateConfig().runner == host_runner_name()
    assert StateConfig(runner="db1-b").runner == "db1-b"
    with pytest.raises(ValueError, match="two cron lines on one host need two names"):
        StateConfig(runner="db1.example.org")
    with pytest.raises(ValueError, match="1 to 63 letters"):
        StateConfig(runner="-a")


def test_a_host_name_with_dots_and_odd_characters_makes_a_valid_name(monkeypatch):
    monkeypatch.setattr("socket.gethostname", lambda: "web+1.example.org")
    assert host_runner_name() == "web-1"
