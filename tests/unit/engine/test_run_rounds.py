"""Rounds across runs, recovery from killed runs, and what each run leaves behind (no HTTP).

Each ``Bench.run`` is one cron run over the state the previous one saved (the in-memory twin of the
store, or a state folder); time moves only when a test or the run's waits move the ManualClock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from run_fixtures import FORBIDDEN, SETTINGS, Bench, Killed, ScriptedReader, kinds, of_run, plans

from monitor.config.model import Lend
from monitor.core.errors import POISON
from monitor.core.timefmt import format_utc
from monitor.engine.api_health import ApiState
from monitor.engine.events import ApiRecovered, CrashRecovered, DeadLettered, FallingBehind
from monitor.engine.fleet import MUTED, standing
from monitor.engine.health import ERROR, OK, SheetHealth
from monitor.engine.heartbeat import RoundProgress, RunOutcome, RunStats, StopReason
from monitor.engine.history import Linked
from monitor.engine.inspect import SheetPlan
from monitor.engine.mutes import Mute
from monitor.engine.pacer import ONE_PROJECT
from monitor.engine.round_order import round_order
from monitor.engine.run_counts import RunCounts
from monitor.engine.runner_state import RetryFirst, RunnerState
from monitor.engine.tasks import DONE, FAILED, POISON_INTERRUPTIONS, PROCESSING, tick_slack
from monitor.state.repository import encode_all
from monitor.storage import MemoryLocation

INTERVAL = SETTINGS.round_interval
SETTINGS_NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def bench(count: int, reader=None, **fields) -> Bench:
    return Bench(reader or ScriptedReader(), plans(count), MemoryLocation(), **fields)


def later(the_bench: Bench, delta: timedelta) -> None:
    """Move the clock to ``delta`` after the current round started (the next cron tick, say)."""
    started = the_bench.stored().round.started_at
    the_bench.clock.advance((started + delta - the_bench.clock.now()).total_seconds())


# -- rounds ------------------------------------------------------------------------------------------------


def test_a_finished_round_leaves_nothing_to_do_until_its_interval_has_passed():
    the_bench = bench(3)
    first = the_bench.run()
    assert first.report.stop_reason == "round_done" and first.report.counts.tasks_done == 3
    due = INTERVAL - tick_slack(INTERVAL)  # the next cron tick, less what its start-up may gain
    later(the_bench, due - timedelta(milliseconds=1))
    idle = the_bench.run()
    assert idle.report.outcome == RunOutcome.NOTHING_TO_DO and idle.report.counts.tasks == 0
    assert the_bench.stored().heartbeat.outcome == RunOutcome.NOTHING_TO_DO
    later(the_bench, due)
    second = the_bench.run()
    assert second.report.counts.tasks_done == 3 and second.state.round.id != first.state.round.id


def test_the_next_tick_starts_a_new_round_though_its_run_got_there_a_little_sooner():
    # Cron starts runs one interval apart, but a round starts after its run's start-up, which varies
    # from run to run: the next tick may look at the finished round a second before a whole interval
    # has passed since it started. Waiting for the tick after would leave every change unread for
    # two intervals instead of one.
    the_bench = bench(3)
    first = the_bench.run()
    later(the_bench, INTERVAL - timedelta(seconds=1))
    second = the_bench.run()
    assert second.report.counts.tasks_done == 3 and second.state.round.id != first.state.round.id


def test_a_new_round_reads_the_longest_unchecked_spreadsheets_first():
    reader = ScriptedReader()
    the_bench = bench(3, reader)
    with the_bench.session() as session:
        now = the_bench.clock.now()
        for sid, hours in (("s1", 1), ("s2", 2)):
            checked = now - timedelta(hours=hours)
            session.state.health[sid] = SheetHealth(OK, since=checked, last_checked_at=checked)
    the_bench.run()
    assert reader.reads == ["s0", "s2", "s1"]  # never checked first, then by last check


def test_a_new_round_puts_retries_first_then_lenders_each_group_longest_unchecked_first():
    lends = Linked(lends=(Lend("Stock!F2:F", "sum"),))
    lenders = {"s1", "s3", "s4", "s6"}
    ordered = [SheetPlan(id=f"s{n}", name=f"Store {n}", checks=(), ranges=("Stock!A1:B",),
                         links=lends if f"s{n}" in lenders else Linked()) for n in range(8)]
    now = SETTINGS_NOW
    hours = {"s0": 1, "s1": 2, "s2": 3, "s3": 1, "s5": 2, "s6": 5, "s7": 2}  # s4: never checked
    health = {sid: SheetHealth(OK, since=now - timedelta(hours=h), last_checked_at=now - timedelta(hours=h))
              for sid, h in hours.items()}
    state = RunnerState(health=health, retry_first=RetryFirst(("s7", "s3", "s0", "s6")))
    order = round_order(state, {plan.id: plan for plan in ordered}, now)
    # Retried lenders (s6, then s3), retried others (s7, then s0), lenders (s4 never checked, then
    # s1), the rest (s2, then s5): in each, the longest unchecked first.
    assert order == ["s6", "s3", "s7", "s0", "s4", "s1", "s2", "s5"]


def test_a_dlq_retry_between_rounds_is_taken_by_the_next_round_and_only_by_it():
    reader = ScriptedReader()
    the_bench = bench(4, reader)
    the_bench.run()
    with the_bench.session() as session:
        session.state.retry_first = RetryFirst(("s2",))
    later(the_bench, INTERVAL)
    reader.reads.clear()
    the_bench.run()
    assert reader.reads == ["s2", "s0", "s1", "s3"]
    assert the_bench.stored().retry_first == RetryFirst()  # taken
    later(the_bench, INTERVAL)
    reader.reads.clear()
    the_bench.run()
    assert reader.reads == ["s0", "s1", "s2", "s3"]  # every one checked at the same instant: config order


def test_a_dlq_retry_asked_during_a_round_waits_for_the_next_round():
    reader = ScriptedReader()
    the_bench = bench(3, reader, per_credential=1)
    the_bench.run(budget=timedelta(seconds=30))  # quota for one read: the round goes on next run
    with the_bench.session() as session:
        session.state.retry_first = RetryFirst(("s0",))
    later(the_bench, INTERVAL)
    the_bench.run(budget=timedelta(seconds=30))
    assert the_bench.stored().retry_first == RetryFirst(("s0",))  # the continuing round did not take it
    assert reader.reads == ["s0", "s1"]


def test_falling_behind_is_told_once_per_round_just_after_three_intervals():
    the_bench = bench(5, per_credential=1)  # one read per run: the round drags on
    the_bench.run(budget=timedelta(seconds=30))
    later(the_bench, 3 * INTERVAL)
    at_the_limit = the_bench.run(budget=timedelta(seconds=30))
    assert FallingBehind.KIND not in kinds(of_run(at_the_limit))
    later(the_bench, 3 * INTERVAL + timedelta(seconds=1))
    behind = the_bench.run(budget=timedelta(seconds=30))
    [event] = [e for e in of_run(behind) if isinstance(e, FallingBehind)]
    assert (event.done, event.total, event.round_id) == (2, 5, behind.state.round.id)
    assert the_bench.stored().round.info.behind_reported
    later(the_bench, 4 * INTERVAL)
    assert FallingBehind.KIND not in kinds(of_run(the_bench.run(budget=timedelta(seconds=30))))


# -- spreadsheets that come and go --------------------------------------------------------------------------


def test_tasks_of_spreadsheets_removed_from_the_config_are_dropped_not_dead_lettered():
    reader = ScriptedReader()
    the_bench = bench(4, reader, per_credential=1)
    the_bench.run(budget=timedelta(seconds=30))
    the_bench.plans = the_bench.plans[:2]
    later(the_bench, INTERVAL)
    run = the_bench.run()
    assert sorted(task.target for task in run.state.round.tasks.values()) == ["s0", "s1"]
    assert run.report.stop_reason == "round_done" and not run.state.dlq
    assert len(the_bench.stored().round) == 2


def test_spreadsheets_muted_when_a_round_starts_are_left_out_and_shown_skipped():
    reader = ScriptedReader()
    the_bench = bench(3, reader)
    with the_bench.session() as session:
        now = the_bench.clock.now()
        session.state.mutes["s1"] = Mute(until=now + timedelta(hours=1), reason="migration", muted_at=now)
        session.state.mutes["s2"] = Mute(until=now, reason="ended just now", muted_at=now)
    run = the_bench.run()
    assert reader.reads == ["s0", "s2"]  # a mute that has ended silences nothing
    assert [task.target for task in run.state.round.tasks.values()] == ["s0", "s2"]
    assert run.state.health["s1"].skipped == "muted"
    assert standing(run.state.health["s1"], run.state.mutes["s1"]) == MUTED


def test_a_spreadsheet_muted_during_a_round_is_skipped_not_read():
    reader = ScriptedReader()
    the_bench = bench(3, reader, per_credential=1)
    the_bench.run(budget=timedelta(seconds=30))
    with the_bench.session() as session:
        now = the_bench.clock.now()
        session.state.mutes["s2"] = Mute(until=now + timedelta(hours=1), reason="migration", muted_at=now)
    later(the_bench, timedelta(minutes=2))  # the round goes on (and ends within its interval)
    run = the_bench.run(budget=timedelta(seconds=30))
    assert reader.reads == ["s0", "s1"] and run.state.health["s2"].skipped == "muted"
    skipped = next(t for t in run.state.round.tasks.values() if t.target == "s2")
    assert skipped.status == DONE and skipped.history[-1].outcome == "skipped_muted"


# -- killed runs --------------------------------------------------------------------------------------------


def killed_holding(the_bench: Bench, target: str, times: int) -> None:
    """``times`` runs killed during ``target``'s request, each with its lease saved before the request."""
    the_bench.reader.script[target] = [Killed()] * times
    for _ in range(times):
        with pytest.raises(Killed):
            the_bench.run(checkpoint_every=0.0)


def test_a_task_a_killed_run_left_processing_is_reclaimed_and_read():
    reader = ScriptedReader()
    the_bench = bench(2, reader)
    killed_holding(the_bench, "s1", 1)
    assert {t.target: t.status for t in the_bench.stored().round.tasks.values()} == {
        "s0": DONE, "s1": PROCESSING}
    run = the_bench.run()
    [event] = [e for e in of_run(run) if isinstance(e, CrashRecovered)]
    assert (event.reclaimed, event.poisoned, event.previous_run_id) == (1, 0, "run-1")
    assert reader.reads == ["s0", "s1", "s1"] and run.state.health["s1"].health == OK
    task = next(t for t in run.state.round.tasks.values() if t.target == "s1")
    assert task.interruptions == 1 and task.status == DONE


def test_a_task_that_killed_three_runs_is_dead_lettered_as_poison():
    reader = ScriptedReader()
    the_bench = bench(2, reader)
    killed_holding(the_bench, "s1", POISON_INTERRUPTIONS)
    run = the_bench.run()
    recovered = [e for e in of_run(run) if isinstance(e, CrashRecovered)]
    assert [(e.reclaimed, e.poisoned) for e in recovered] == [(0, 1)]
    [dead] = [e for e in of_run(run) if isinstance(e, DeadLettered)]
    assert dead.spreadsheet_id == "s1" and dead.error.error_class == POISON
    assert reader.reads == ["s0", "s1", "s1", "s1"]  # the poison is never read again this round
    assert run.state.health["s1"].health == ERROR and run.state.dlq["s1"].last_error.error_class == POISON
    assert next(t for t in run.state.round.tasks.values() if t.target == "s1").status == FAILED


# -- what a run leaves behind -------------------------------------------------------------------------------


def test_the_heartbeat_says_running_while_the_run_works_then_its_outcome_and_stats():
    the_bench = bench(2, ScriptedReader({"s1": 1}))
    with the_bench.opened() as run:
        run.begin()
        beating = the_bench.stored().heartbeat  # saved by the first checkpoint, read without the lock
        assert (beating.outcome, beating.run_id, beating.finished_at) == (RunOutcome.RUNNING, "run-1", None)
        while run.step():
            pass
        run.end()
    heartbeat = the_bench.stored().heartbeat
    assert heartbeat.outcome == RunOutcome.OK
    assert format_utc(heartbeat.finished_at) == format_utc(the_bench.clock.now())  # stored to the ms
    assert heartbeat.stats == RunStats(
        counts=RunCounts(tasks=3, tasks_done=2, dead_lettered=0, retries_scheduled=1,
                         reads_by_credential={"sa-1.json": 3}, reads_by_project={ONE_PROJECT: 3},
                         retries_by_class={"transient": 1}, read_seconds_buckets=(3, 0, 0, 0, 0, 0, 0, 0, 0)),
        duration_seconds=run.report.duration_seconds, stop_reason=StopReason.ROUND_DONE,
        round=RoundProgress(run.state.round.id, pending=0, processing=0, done=2, failed=0),
        mean_read_seconds=0.0, concurrency=1,
    )
    later(the_bench, INTERVAL)
    the_bench.run()
    stored = the_bench.stored()
    assert stored.heartbeat.previous_run_id == "run-1"
    assert [(r.run_id, r.outcome) for r in stored.runs.runs] == [
        ("run-1", RunOutcome.OK), ("run-2", RunOutcome.OK)]


def test_a_run_that_finds_the_api_degraded_probes_once_and_tells_of_the_recovery():
    the_bench = bench(3)
    since = the_bench.clock.now() - timedelta(minutes=10)
    with the_bench.session() as session:
        session.state.api = ApiState(degraded=True, degraded_since=since)
    run = the_bench.run()
    assert [e for e in of_run(run) if isinstance(e, ApiRecovered)] == [
        ApiRecovered(at=the_bench.clock.now(), run_id="run-1", degraded_since=since)
    ]
    assert the_bench.stored().api == ApiState() and run.report.counts.tasks_done == 3


def test_a_run_that_finds_the_api_still_degraded_stops_after_one_probe_without_a_second_alert():
    reader = ScriptedReader({"s0": 1})
    the_bench = bench(3, reader)
    with the_bench.session() as session:
        session.state.api = ApiState(degraded=True, degraded_since=the_bench.clock.now())
    run = the_bench.run()
    assert reader.reads == ["s0"] and run.report.outcome == RunOutcome.DEGRADED
    assert kinds(of_run(run)) == []


@pytest.mark.parametrize("where", ["memory", "folder"])
def test_the_state_a_run_saved_is_read_back_equal_to_the_one_it_had(where, tmp_path):
    location = MemoryLocation() if where == "memory" else tmp_path / "state"
    reader = ScriptedReader({"s0": 2, "s1": [FORBIDDEN], "s3": 3})
    the_bench = Bench(reader, plans(6), location, per_credential=4)
    with the_bench.session() as session:
        now = the_bench.clock.now()
        session.state.mutes["s5"] = Mute(until=now + timedelta(hours=2), reason="audit", muted_at=now)
    run = the_bench.run()
    assert run.state.dlq and run.state.breakers and len(run.state.events)  # a varied state
    assert encode_all(the_bench.stored()) == encode_all(run.state)
