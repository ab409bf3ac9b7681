"""The watchdog's pure core: verdicts from what the runs left behind (``judge.judge_runner``) and the alert
memory's transitions (``memory.advance``). Time is an argument; boundaries are tested just before, at
and just after."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from watchdog_helpers import SETTINGS, T0, heartbeat, runs_every_5_minutes, settings

from monitor.engine.heartbeat import Heartbeat, RunOutcome, RunSummary
from monitor.notify.documents import Halt
from monitor.watchdog import judge as wd
from monitor.watchdog.outages import WatchdogMemory, advance


def reading(hb: Heartbeat | None, runs: list[RunSummary] = ()) -> wd.RunnerReading:
    return wd.RunnerReading(exists=True, heartbeat=hb, runs=tuple(runs))


def judge(hb: Heartbeat | None, runs: list[RunSummary], now: datetime, chosen=SETTINGS) -> wd.Verdict:
    return wd.judge_runner(reading(hb, runs), now, chosen)


# ---- verdicts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (timedelta(minutes=15) - timedelta(seconds=1), wd.HEALTHY),
        (timedelta(minutes=15), wd.HEALTHY),  # "at" max_silence is still within the allowed silence
        (timedelta(minutes=15) + timedelta(seconds=1), wd.SILENT),
    ],
    ids=["just-before", "at", "just-after"],
)
def test_silence_boundary_is_inclusive_of_max_silence(age, expected):
    assert judge(heartbeat(T0 - age), [], T0).status == expected


def test_the_newest_finish_counts_whether_it_is_in_runs_or_the_heartbeat():
    runs = runs_every_5_minutes(T0 - timedelta(hours=1), 3)
    running_now = heartbeat(None, started_at=T0 - timedelta(minutes=1))
    assert judge(running_now, runs, T0).status == wd.SILENT  # the latest finish is 50 min old
    runs.append(RunSummary("x", T0 - timedelta(minutes=3), T0 - timedelta(minutes=2), RunOutcome.OK))
    assert judge(running_now, runs, T0).status == wd.HEALTHY


@pytest.mark.parametrize(
    ("running_for", "expected"),
    [
        (timedelta(minutes=8) - timedelta(seconds=1), wd.HEALTHY),
        (timedelta(minutes=8), wd.HEALTHY),
        (timedelta(minutes=8) + timedelta(seconds=1), wd.STUCK),
    ],
    ids=["just-before", "at", "just-after"],
)
def test_a_run_past_budget_plus_grace_is_stuck(running_for, expected):
    # budget 6 min + stuck_grace 2 min; the previous run finished recently, so silence is no issue.
    started = T0 - running_for
    runs = runs_every_5_minutes(started - timedelta(minutes=1), 1)
    hb = heartbeat(None, started_at=started, budget=360)
    verdict = judge(hb, runs, T0, settings(max_silence=timedelta(minutes=30)))
    assert verdict.status == expected
    if expected == wd.STUCK:
        assert "run-1" in verdict.reason and "budget is 6 minutes" in verdict.reason
        assert verdict.began_at == started


def test_a_stuck_run_is_named_before_the_silence_it_causes():
    started = T0 - timedelta(minutes=40)
    assert judge(heartbeat(None, started_at=started), runs_every_5_minutes(started, 1), T0).status == wd.STUCK


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (["ok", "degraded", "degraded", "degraded"], wd.FAILING),
        (["ok", "ok", "degraded", "degraded"], wd.HEALTHY),
        (["degraded", "degraded", "degraded", "ok"], wd.HEALTHY),
        (["degraded", "degraded", "nothing_to_do"], wd.HEALTHY),
    ],
)
def test_the_last_n_runs_failing_is_an_outage(outcomes, expected):
    every_5 = runs_every_5_minutes(T0 - timedelta(minutes=5 * len(outcomes)), len(outcomes))
    runs = [replace(run, outcome=RunOutcome(outcome)) for run, outcome in zip(every_5, outcomes, strict=True)]
    last = runs[-1]
    verdict = judge(heartbeat(last.finished_at, outcome=last.outcome), runs, T0)
    assert verdict.status == expected
    if expected == wd.FAILING:
        assert "3 runs" in verdict.reason and "degraded" in verdict.reason
        assert verdict.began_at == runs[1].started_at  # the first run of the failing streak


def test_missing_and_unreadable_state_are_verdicts_of_their_own():
    assert wd.judge_runner(wd.RunnerReading(exists=False), T0, SETTINGS).status == wd.STATE_MISSING
    torn = wd.RunnerReading(exists=True, readable=False, error="not JSON at line 1")
    unreadable = wd.judge_runner(torn, T0, SETTINGS)
    assert unreadable.status == wd.STATE_UNREADABLE and "not JSON at line 1" in unreadable.reason
    never = judge(None, [], T0)  # a state no run ever wrote a heartbeat into
    assert never.status == wd.SILENT and "no run has ever finished" in never.reason


def test_naive_now_is_refused():
    with pytest.raises(ValueError, match="naive"):
        wd.judge_runner(reading(None), datetime(2026, 1, 1), SETTINGS)


# ---- transitions -------------------------------------------------------------------------------------


def test_one_alert_per_outage_reminders_at_the_slow_interval_then_one_recovery():
    chosen = settings(reminder_every=timedelta(hours=4))
    last_run = T0 - timedelta(minutes=20)
    first = advance(WatchdogMemory(), judge(heartbeat(last_run), [], T0, chosen), T0, chosen)
    assert first.kind == "alert" and len(first.messages) == 1
    assert first.memory.status == wd.SILENT and first.memory.since == last_run

    memory = first.memory
    for minutes in (15, 30, 4 * 60 - 1):
        now = T0 + timedelta(minutes=minutes)
        decision = advance(memory, judge(heartbeat(last_run), [], now, chosen), now, chosen)
        assert decision.messages == ()
        memory = decision.memory
    now = T0 + timedelta(hours=4)
    reminder = advance(memory, judge(heartbeat(last_run), [], now, chosen), now, chosen)
    assert reminder.kind == "reminder" and "Still down" in reminder.messages[0].text
    assert "4 hours and 20 minutes" in reminder.messages[0].text  # down since the last finished run


def test_a_change_of_kind_within_an_outage_sends_nothing_until_the_reminder():
    stuck = judge(heartbeat(None, started_at=T0 - timedelta(minutes=9)),
                  runs_every_5_minutes(T0 - timedelta(minutes=10), 1), T0)
    assert stuck.status == wd.STUCK
    alerted = advance(WatchdogMemory(), stuck, T0, SETTINGS)
    later = T0 + timedelta(minutes=15)
    silent = judge(heartbeat(T0 - timedelta(minutes=10)), [], later)
    decision = advance(alerted.memory, silent, later, SETTINGS)
    assert decision.messages == () and decision.memory.status == wd.SILENT
    assert decision.memory.since == alerted.memory.since


def test_recovery_reports_the_outage_from_the_last_good_run_to_the_first_good_one_after_it():
    last_good = T0 - timedelta(minutes=20)
    alerted = advance(WatchdogMemory(), judge(heartbeat(last_good), [], T0), T0, SETTINGS)
    resumed_at = T0 + timedelta(minutes=25)
    runs = runs_every_5_minutes(last_good - timedelta(minutes=10), 3)  # up to the last good run
    runs += runs_every_5_minutes(resumed_at, 3)
    now = resumed_at + timedelta(minutes=12)
    healthy = judge(heartbeat(resumed_at + timedelta(minutes=10)), runs, now)
    assert healthy.status == wd.HEALTHY and healthy.healthy_since == resumed_at
    decision = advance(alerted.memory, healthy, now, SETTINGS)
    assert decision.kind == "recovered" and len(decision.messages) == 1
    assert "lasted 45 minutes" in decision.messages[0].text  # 20 min before T0 to 25 min after
    assert decision.memory.status == wd.HEALTHY
    again = advance(decision.memory, healthy, now + timedelta(minutes=15), SETTINGS)
    assert again.messages == ()


def test_the_same_outage_composes_the_same_message_key():
    # A pass that crashed before saving its memory composes the alert again: the outbox must
    # recognise it by its key instead of sending it twice.
    verdict = judge(heartbeat(T0 - timedelta(minutes=20)), [], T0)
    first = advance(WatchdogMemory(), verdict, T0, SETTINGS)
    again = advance(WatchdogMemory(), verdict, T0, SETTINGS)
    assert first.messages[0].key == again.messages[0].key
    later = advance(WatchdogMemory(), verdict, T0 + timedelta(minutes=15), SETTINGS)
    assert later.messages[0].key != first.messages[0].key


def test_runs_that_work_while_telegram_refuses_the_chat_are_not_healthy():
    runs = runs_every_5_minutes(T0 - timedelta(minutes=30), 6)
    halt = Halt(T0 - timedelta(minutes=25), 401, "Unauthorized", "-1001")
    halted = replace(reading(heartbeat(T0 - timedelta(minutes=2)), runs), halts={"": halt})
    verdict = wd.judge_runner(halted, T0, SETTINGS)
    assert verdict.status == wd.DELIVERY_HALTED and not verdict.healthy
    assert verdict.began_at == halt.at and "-1001" in verdict.reason and "401 Unauthorized" in verdict.reason
    decision = advance(WatchdogMemory(), verdict, T0, SETTINGS)
    assert decision.kind == "alert" and "Alerts cannot reach Telegram" in decision.messages[0].text
