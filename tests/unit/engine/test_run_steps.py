"""The run's step loop over a scripted reader: which task goes when, and for how long (no HTTP).

Time is a ManualClock shared by the run, the quota pacer and the readers that "take" time; the state
is the in-memory twin of the store, opened as a run opens it (see run_fixtures).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from run_fixtures import FORBIDDEN, QUOTA, RANGE, ROWS, Bench, ScriptedReader, plans

from monitor.checks import FormulaErrorsCheck, FreshnessCheck
from monitor.core.clock import ManualClock
from monitor.engine.breaker import OPEN, BreakerState
from monitor.engine.health import OK
from monitor.engine.heartbeat import RunOutcome
from monitor.engine.inspect import SheetPlan, ZoneAnswer
from monitor.engine.tasks import DONE, PENDING
from monitor.storage import MemoryLocation

LOADING = {"range": RANGE, "majorDimension": "ROWS", "values": [["SKU", "Loading..."]]}
NOT_VALUES = {"range": RANGE, "majorDimension": "ROWS", "values": 5}  # no check can make sense of it


def bench(reader, count: int, **fields) -> Bench:
    return Bench(reader, plans(count), MemoryLocation(), **fields)


def probe_due(the_bench: Bench, sid: str) -> None:
    """Store an open breaker for ``sid`` whose cooldown has just ended: the next read is its probe."""
    with the_bench.session() as session:
        opened = the_bench.clock.now() - timedelta(minutes=15)
        session.state.breakers[sid] = BreakerState(
            OPEN, consecutive_failures=3, opened_at=opened, cooldown_seconds=900.0, first_opened_at=opened
        )


def history(run_or_state, target: str) -> list[str]:
    state = getattr(run_or_state, "state", run_or_state)
    task = next(task for task in state.round.tasks.values() if task.target == target)
    return [attempt.outcome for attempt in task.history]


# -- quota ---------------------------------------------------------------------------------------------


def test_a_due_retry_that_must_wait_for_quota_is_still_retried_in_the_same_run():
    reader = ScriptedReader({"s0": 1})
    run = bench(reader, 2, per_credential=2).run()
    # s0 failed, s1 used the minute's last read; s0's retry came due while the quota was spent.
    assert reader.reads == ["s0", "s1", "s0"]
    assert run.report.stop_reason == "round_done" and run.state.round.is_complete()
    assert all(task.status == DONE for task in run.state.round.tasks.values())


def test_a_quota_refusal_waits_for_the_pacer_and_counts_no_attempt():
    reader = ScriptedReader({"s0": [QUOTA, QUOTA]})
    the_bench = bench(reader, 1)
    run = the_bench.run()
    assert reader.reads == ["s0", "s0", "s0"]
    assert history(run, "s0") == ["quota", "quota", "ok"]
    task = next(iter(run.state.round.tasks.values()))
    assert task.attempts == 1 and task.last_error is None
    assert "s0" not in run.state.breakers and run.report.counts.retries_scheduled == 0
    # Each refusal paused the credential for a whole window (60 s + 1 s margin) before the next try.
    assert the_bench.clock.monotonic() - run.started_monotonic == 2 * 61.0


def test_a_quota_refusal_of_a_breakers_probe_gives_the_probe_back():
    reader = ScriptedReader({"s0": 1}, error=QUOTA)
    the_bench = bench(reader, 1)
    probe_due(the_bench, "s0")
    run = the_bench.run()
    assert reader.reads == ["s0", "s0"]  # the probe again once the quota window refilled
    assert "s0" not in run.state.breakers and run.state.health["s0"].health == OK


# -- the budget ------------------------------------------------------------------------------------------


class SlowReader:
    """Every request lasts ``seconds`` (its whole timeout when None) on the manual clock; records each
    request as (kind, monotonic at its start, its timeout)."""

    def __init__(self, clock: ManualClock, seconds: float | None = None) -> None:
        self.clock = clock
        self.seconds = seconds
        self.requests: list[tuple[str, float, float]] = []

    def _take(self, kind: str, timeout: float) -> None:
        self.requests.append((kind, self.clock.monotonic(), timeout))
        self.clock.advance(timeout if self.seconds is None else self.seconds)

    def read(self, spreadsheet_id, ranges, credential, timeout):
        self._take("read", timeout)
        return [ROWS for _ in ranges]

    def modified_time(self, spreadsheet_id, credential, timeout):
        self._take("modified_time", timeout)
        return datetime(2026, 1, 5, tzinfo=UTC)

    def time_zone(self, spreadsheet_id, credential, timeout):
        self._take("time_zone", timeout)
        return ZoneAnswer("Etc/GMT")


def test_a_second_request_for_the_same_task_gets_only_the_budget_left():
    clock = ManualClock()
    reader = SlowReader(clock)
    checks = (FormulaErrorsCheck(range=RANGE), FreshnessCheck(source="modified_time", warn="> 1d"))
    plan = SheetPlan(id="s0", name="Store 0", checks=checks, ranges=(RANGE,), needs_modified_time=True)
    run = Bench(reader, [plan], MemoryLocation(), clock=clock).run(
        budget=timedelta(seconds=10), request_timeout=5.0, reserve_seconds=3.0
    )
    usable_until = run.deadline - run.settings.reserve_seconds
    timeouts = [(kind, timeout) for kind, _, timeout in reader.requests]
    assert timeouts == [("read", 5.0), ("modified_time", 2.0)]  # no zone: Drive's time is an instant
    assert all(start + timeout <= usable_until for _, start, timeout in reader.requests)


def test_a_task_starts_with_exactly_the_minimum_request_time_left_and_not_with_less():
    clock = ManualClock()
    # 4 s budget - 3 s reserve: exactly the 1 s minimum is usable at the start.
    just_enough = Bench(SlowReader(clock, seconds=0.001), plans(3), MemoryLocation(), clock=clock)
    run = just_enough.run(budget=timedelta(seconds=4))
    assert [timeout for _, _, timeout in just_enough.reader.requests] == [1.0]  # cut to what is usable
    assert run.report.stop_reason == "budget" and run.report.counts.tasks == 1

    clock = ManualClock()
    too_little = Bench(SlowReader(clock, seconds=0.001), plans(3), MemoryLocation(), clock=clock)
    run = too_little.run(budget=timedelta(seconds=3.999))
    assert too_little.reader.requests == [] and run.report.stop_reason == "budget"
    assert run.state.heartbeat.finished_at is not None  # it still ended properly


def test_while_a_retry_is_the_only_work_the_run_sleeps_exactly_until_it_is_due():
    the_bench = bench(ScriptedReader({"s0": 1}), 1)
    with the_bench.opened() as run:
        run.begin()
        assert run.step()  # s0 fails: a retry in 3 s and some jitter
        due = run.state.round.tasks[next(iter(run.state.round.tasks))].next_attempt_at
        assert run.step()  # nothing else is due: sleep
        assert the_bench.clock.now() == due
        assert run.step()  # the retry
        assert not run.step() and run.report.stop_reason == "round_done"
        run.end()
    assert history(the_bench.stored(), "s0") == ["transient", "ok"]


def test_the_run_never_sleeps_past_its_usable_budget():
    the_bench = bench(ScriptedReader({"s0": 1}), 1)
    run = the_bench.run(budget=timedelta(seconds=5))  # 2 s usable; the retry is due in 3 s or more
    assert run.report.stop_reason == "budget"
    assert the_bench.clock.monotonic() - run.started_monotonic == 5 - run.settings.reserve_seconds
    task = next(iter(the_bench.stored().round.tasks.values()))
    assert task.status == PENDING and task.next_attempt_at is not None  # the next run retries it


# -- what a read's failure does ---------------------------------------------------------------------------


def test_cells_still_loading_are_read_again_later_without_touching_the_breaker():
    reader = ScriptedReader({"s0": [LOADING]})
    run = bench(reader, 2).run()
    assert reader.reads == ["s0", "s1", "s0"]
    assert history(run, "s0") == ["loading", "ok"]
    assert "s0" not in run.state.breakers and run.report.counts.retries_scheduled == 1
    assert run.state.health["s0"].health == OK


def test_a_spreadsheet_whose_checks_crash_is_retried_then_dead_lettered_while_others_go_on(caplog):
    reader = ScriptedReader({"s0": [NOT_VALUES] * 3})
    with caplog.at_level(logging.ERROR, logger="monitor"):
        run = bench(reader, 2).run()
    assert history(run, "s0") == ["uncertain"] * 3
    entry = run.state.dlq["s0"]
    assert entry.last_error.error_class == "uncertain" and "could not evaluate" in entry.last_error.message
    assert run.state.health["s1"].health == OK
    assert [r.getMessage() for r in caplog.records].count("task_crashed") == 3


def test_a_permanent_error_is_dead_lettered_at_once():
    reader = ScriptedReader({"s0": [FORBIDDEN]})
    run = bench(reader, 2).run()
    assert reader.reads == ["s0", "s1"] and history(run, "s0") == ["permanent"]
    assert run.state.dlq["s0"].last_error.http_status == 403 and "s0" not in run.state.breakers
    assert run.report.counts.dead_lettered == 1 and run.report.outcome == "ok"


def test_the_failure_that_finds_google_degraded_is_logged_like_any_other(caplog):
    reader = ScriptedReader({f"s{n}": 1 for n in range(8)})
    with caplog.at_level(logging.INFO, logger="monitor"):
        run = bench(reader, 8).run()
    assert run.report.stop_reason == "api_degraded" and len(reader.reads) == 8
    logged = [r.fields["spreadsheet_id"] for r in caplog.records if r.getMessage() == "task_retry"]
    assert logged == reader.reads  # what happened to each spreadsheet is in the log
    # The task that found Google degraded waits for a later run; nothing was dead-lettered.
    assert all(task.status == PENDING for task in run.state.round.tasks.values())
    assert not run.state.dlq


def test_google_degraded_is_saved_when_noticed_so_a_run_killed_then_still_leaves_a_probe_owed():
    reader = ScriptedReader({f"s{n}": 1 for n in range(8)})
    the_bench = bench(reader, 12)
    with the_bench.opened(api_degraded_after=8, checkpoint_every=0) as run:
        run.begin()
        while run.step():
            pass
        stored = the_bench.stored()  # as a kill -9 before end() would leave it
        assert stored.api.degraded and stored.api.degraded_since is not None
        run.end()


def test_a_run_stopped_by_a_degraded_api_reads_nothing_more():
    reader = ScriptedReader({f"s{n}": 1 for n in range(8)})
    run = bench(reader, 12).run(api_degraded_after=8)
    assert len(reader.reads) == 8 and run.report.outcome == "degraded"
    assert not run.step()  # a stopped run stays stopped


def test_cells_still_loading_on_a_breakers_probe_give_the_probe_back():
    reader = ScriptedReader({"s0": [LOADING]})
    the_bench = bench(reader, 1)
    probe_due(the_bench, "s0")
    run = the_bench.run()
    # "Loading..." says nothing about whether the spreadsheet can be read: the retry is the probe.
    assert reader.reads == ["s0", "s0"] and history(run, "s0") == ["loading", "ok"]
    assert "s0" not in run.state.breakers and run.state.health["s0"].health == OK


def test_retries_failing_together_at_the_end_of_a_round_are_not_taken_for_google_failing():
    # Every other spreadsheet fails three times: their first tries are interleaved with answers, but
    # their retries all come due at the round's end, eight failures of different sheets in a row.
    reader = ScriptedReader({f"s{n}": 3 for n in range(0, 16, 2)})
    run = bench(reader, 16).run()
    assert run.report.stop_reason == "round_done" and run.report.outcome == RunOutcome.OK
    assert not run.state.api.degraded
    assert reader.reads.count("s0") == 3  # each tried until its breaker opened


def test_first_tries_of_different_spreadsheets_failing_in_a_row_still_stop_the_run():
    reader = ScriptedReader({f"s{n}": 3 for n in range(8)})
    run = bench(reader, 10).run()
    assert run.report.stop_reason == "api_degraded" and run.state.api.degraded
    assert reader.reads == [f"s{n}" for n in range(8)]


def test_every_reason_a_run_stops_is_said_in_words_and_stored_as_the_enum():
    from monitor.cli.run import STOP_REASONS
    from monitor.engine.heartbeat import Heartbeat, RunStats, StopReason
    from monitor.state.schema import HEARTBEAT

    assert set(STOP_REASONS) == set(StopReason)
    assert all(words.strip() for words in STOP_REASONS.values())
    for reason in StopReason:
        stats = RunStats(stop_reason=reason)
        beat = Heartbeat("run-1", datetime(2026, 12, 2, tzinfo=UTC), 270.0, stats=stats)
        assert HEARTBEAT.decode(HEARTBEAT.encode(beat)).stats.stop_reason is reason
