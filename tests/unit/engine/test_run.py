"""The run against the sandbox: real gspread, real google-auth, one shared manual clock.

The runner, the quota pacer and the sandbox's quota windows all read the same ManualClock, so a run
that must wait a minute for quota advances the clock instead of sleeping. Each run opens the state
folder as `sheet-monitor run` does (see run_fixtures.Bench).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest
from run_fixtures import kinds, of_run
from sandbox_bench import SandboxBench, sandbox_bench
from sandbox_fixtures import drive_caught_up

from monitor.checks import FormulaErrorsCheck, FreshnessCheck, ThresholdCheck
from monitor.engine.breaker import OPEN
from monitor.engine.events import (
    ApiDegraded,
    BreakerClosed,
    BreakerOpened,
    CrashRecovered,
    DeadLettered,
    HealthChanged,
    ReadableAgain,
)
from monitor.engine.fleet import MUTED, standing
from monitor.engine.health import ERROR, FAIL, OK
from monitor.engine.heartbeat import RunOutcome
from monitor.engine.inspect import SheetPlan
from monitor.engine.mutes import Mute
from monitor.engine.tasks import DONE, PENDING, PROCESSING
from monitor.google.reader import GspreadReader
from tests.refs import a1

CHECKS = (
    FormulaErrorsCheck(range="Stock!A1:C20"),
    ThresholdCheck(range="Stock!C2:C20", aggregate="min", warn="< 5", fail="< 0"),
)
BATCH_GET = "GET /v4/spreadsheets/{id}/values:batchGet"


def stock(quantity: float = 10, formula_error: bool = False) -> dict:
    rows = [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity], ["A-2", "Milk", 12]]
    if formula_error:
        rows[2][1] = "#REF!"
    return {"title": "Store", "tabs": {"Stock": rows}}


def sheet_id(n: int) -> str:
    return f"1sandboxSheet{n:04d}".ljust(44, "x")


@dataclass
class World(SandboxBench):
    """A Bench whose spreadsheets live in the sandbox and are read through real gspread."""

    def add_sheets(self, count: int, **payload) -> list[str]:
        ids = []
        for n in range(len(self.plans), len(self.plans) + count):
            ids.append(sheet_id(n))
            self.sandbox.google.store.put_control(sheet_id(n), stock(**payload))
            self.plans.append(
                SheetPlan(sheet_id(n), f"Store {n}", CHECKS, ("Stock!A1:C20", "Stock!C2:C20"))
            )
        return ids

    def use_credentials(self, paths) -> None:
        self.credentials = [str(path) for path in paths]
        self.reader = GspreadReader.from_credentials(endpoint=self.sandbox.base_url, timeout=2)

    def fault(self, spreadsheet: str, **spec) -> None:
        self.sandbox.google.faults.add({"spreadsheet": spreadsheet, **spec})

    def reads(self) -> int:
        return self.sandbox.google.stats.snapshot()["total"]


@pytest.fixture
def world(tmp_path):
    with sandbox_bench(World, tmp_path) as the_world:
        yield the_world


def test_a_round_checks_every_spreadsheet_once_and_records_health(world):
    healthy = world.add_sheets(3)
    broken = world.add_sheets(1, formula_error=True)
    low = world.add_sheets(1, quantity=-2)
    run = world.run(budget=timedelta(minutes=6))
    state = world.stored()
    assert run.report.stop_reason == "round_done"
    assert {sid: state.health[sid].health for sid in healthy + broken + low} == {
        **dict.fromkeys(healthy, OK),
        broken[0]: FAIL,
        low[0]: FAIL,
    }
    reads = world.sandbox.google.stats.snapshot()
    assert reads["by_endpoint"][BATCH_GET] == 5  # one request each
    assert state.heartbeat.outcome == RunOutcome.OK and state.heartbeat.finished_at
    changes = [event for event in state.events if isinstance(event, HealthChanged)]
    assert sorted(event.spreadsheet_id for event in changes) == sorted(broken + low)
    assert a1(state.health[broken[0]].findings[0].cells) == ("Stock!B3",)


def test_one_credential_at_60_a_minute_meets_no_429(world):
    world.add_sheets(130)
    run = world.run(budget=timedelta(minutes=6))
    stats = world.sandbox.google.stats.snapshot()
    assert run.report.counts.tasks_done == 130
    assert stats["by_status"].get("429", 0) == 0
    # 130 reads at 60/min cannot take less than two full windows; pacing should not take much more.
    assert 120 <= world.clock.monotonic() - run.started_monotonic <= 140


def test_three_credentials_carry_a_third_of_the_reads_each(world, tmp_path):
    world.use_credentials(world.sandbox.write_credentials(tmp_path / "more", 3))
    world.add_sheets(150)
    run = world.run(budget=timedelta(minutes=6))
    counts = sorted(run.report.counts.reads_by_credential.values())
    assert sum(counts) == 150
    assert counts[0] >= 45 and counts[-1] <= 55


def test_503_503_then_ok_recovers_in_the_same_run_while_others_go_on(world):
    flaky = world.add_sheets(1)[0]
    others = world.add_sheets(20)
    world.fault(flaky, statuses=[503, 503])
    run = world.run()
    state = world.stored()
    assert state.health[flaky].health == OK
    task = next(t for t in state.round.tasks.values() if t.target == flaky)
    assert [attempt.outcome for attempt in task.history] == ["transient", "transient", "ok"]
    assert task.history[0].error.http_status == 503
    # Others were read between the flaky one's attempts: it was not waited for idly.
    finished = {sid: state.health[sid].last_checked_at for sid in others}
    assert min(finished.values()) < state.health[flaky].last_checked_at
    assert run.report.counts.retries_scheduled == 2
    assert state.heartbeat.stats.counts.retries_by_class == {"transient": 2}


def test_three_503s_open_the_breaker_then_a_probe_after_cooldown_closes_it(world):
    sick = world.add_sheets(1)[0]
    world.add_sheets(2)
    world.fault(sick, statuses=[503], repeat=True)
    first = world.run()
    assert BreakerOpened.KIND in kinds(of_run(first))
    assert first.state.breakers[sick].state is OPEN
    assert first.state.health[sick].skipped == "breaker_open"
    assert sick not in first.state.dlq  # attempts remained: the next round probes it

    world.sandbox.google.faults.clear(sick)
    world.clock.advance(5 * 60)  # next round, but the 15-minute cooldown has not passed
    before = world.reads()
    second = world.run()
    assert world.stored().breakers[sick].state is OPEN
    assert world.reads() - before == 2  # only the two healthy ones
    skipped = next(t for t in second.state.round.tasks.values() if t.target == sick)
    assert skipped.history[-1].outcome == "skipped_breaker_open"

    world.clock.advance(15 * 60)
    probe = world.run()
    assert sick not in probe.state.breakers
    [closed] = [event for event in of_run(probe) if isinstance(event, BreakerClosed)]
    assert closed.spreadsheet_id == sick and closed.down_seconds >= 20 * 60
    assert probe.state.health[sick].health == OK


def test_quota_errors_never_trip_the_breaker(world):
    target = world.add_sheets(1)[0]
    world.add_sheets(2)
    world.fault(target, statuses=[429, 429, 429, 429])
    run = world.run()
    assert target not in run.state.breakers
    assert run.state.health[target].health == OK
    assert BreakerOpened.KIND not in kinds(run.state.events)
    task = next(t for t in run.state.round.tasks.values() if t.target == target)
    assert task.attempts == 1 and [a.outcome for a in task.history] == ["quota"] * 4 + ["ok"]


def test_permanent_errors_go_straight_to_the_dlq_and_recover_with_an_event(world):
    gone = world.add_sheets(1)[0]
    world.add_sheets(1)
    world.fault(gone, statuses=[403], repeat=True)
    first = world.run()
    entry = first.state.dlq.get(gone)
    assert entry.last_error.http_status == 403 and entry.occurrences == 1
    assert first.state.health[gone].health == ERROR
    assert kinds(of_run(first)).count(DeadLettered.KIND) == 1

    world.clock.advance(5 * 60)
    second = world.run()
    assert second.state.dlq.get(gone).occurrences == 2
    assert DeadLettered.KIND not in kinds(of_run(second))  # the episode was already reported

    world.sandbox.google.faults.clear(gone)
    world.clock.advance(5 * 60)
    third = world.run()
    assert gone not in third.state.dlq
    [readable] = [event for event in of_run(third) if isinstance(event, ReadableAgain)]
    assert readable.spreadsheet_id == gone and readable.health == OK
    assert readable.down_for_seconds == pytest.approx(600, abs=0.01)
    assert readable.last_error.http_status == 403


def test_a_renamed_tab_names_the_range_to_fix(world):
    renamed = world.add_sheets(1)[0]
    world.sandbox.google.store.put_control(renamed, {"title": "Store", "tabs": {"Stock (old)": [["SKU"]]}})
    run = world.run()
    error = run.state.dlq.get(renamed).last_error
    assert error.http_status == 400
    assert error.range == "Stock!A1:C20"


def test_many_spreadsheets_failing_in_a_row_end_the_run_with_one_event(world):
    world.add_sheets(30)
    world.fault("*", statuses=[503], repeat=True)
    run = world.run()
    assert run.report.outcome == RunOutcome.DEGRADED
    assert kinds(of_run(run)).count(ApiDegraded.KIND) == 1
    assert DeadLettered.KIND not in kinds(of_run(run))
    assert world.reads() < 15
    assert world.stored().api.degraded

    world.clock.advance(60)
    probe = world.run()  # still failing: one probe, then stop, no second event
    assert ApiDegraded.KIND not in kinds(of_run(probe))
    assert probe.report.counts.tasks == 1 and probe.report.outcome == RunOutcome.DEGRADED


def test_the_run_never_sleeps_past_its_budget(world):
    world.add_sheets(200)
    run = world.run(budget=timedelta(seconds=90))
    elapsed = world.clock.monotonic() - run.started_monotonic
    assert run.report.stop_reason == "budget"
    assert elapsed <= 90
    state = world.stored()
    assert state.round.counts()[DONE] == run.report.counts.tasks_done
    assert state.round.counts()[PROCESSING] == 0


def test_a_killed_run_leaves_tasks_that_the_next_run_reclaims(world):
    ids = world.add_sheets(3)
    world.per_credential = 1  # quota for one read only
    world.run(budget=timedelta(seconds=30))
    with world.session() as session:
        task = next(t for t in session.state.round.tasks.values() if t.status == PENDING)
        session.state.round.start(task)  # as a kill -9 during its request would leave it
    world.per_credential = 60
    run = world.run()
    assert CrashRecovered.KIND in kinds(of_run(run))
    assert {world.stored().health[sid].health for sid in ids} == {OK}


def test_a_freshness_check_on_the_file_reads_its_modified_time(world):
    stale = world.add_sheets(1)[0]
    payload = {**stock(), "modifiedTime": "2020-01-01T00:00:00Z"}
    world.sandbox.google.store.put_control(stale, payload)
    drive_caught_up(world.sandbox.google)  # Drive shows the stated modifiedTime at the file's moment
    check = FreshnessCheck(source="modified_time", warn="> 2h", fail="> 1d")
    world.plans[0] = replace(world.plans[0], checks=(check,), ranges=(), needs_modified_time=True)
    run = world.run()
    assert run.state.health[stale].health == FAIL
    assert "2020-01-01" in run.state.health[stale].findings[0].message
    assert BATCH_GET not in world.sandbox.google.stats.snapshot()["by_endpoint"]


def test_a_muted_spreadsheet_is_skipped_not_read(world):
    quiet, loud = world.add_sheets(2)
    with world.session() as session:
        now = world.clock.now()
        session.state.mutes[quiet] = Mute(until=now + timedelta(hours=1), reason="migration", muted_at=now)
    run = world.run()
    assert run.state.health[quiet].skipped == "muted"
    assert standing(run.state.health[quiet], run.state.mutes[quiet]) == MUTED
    assert run.report.counts.tasks == 1 and run.state.health[loud].health == OK


def test_a_run_that_could_read_nothing_is_degraded_for_the_watchdog(world):
    world.add_sheets(2)
    world.fault("*", statuses=[503], repeat=True)
    run = world.run(budget=timedelta(seconds=10))  # too short for the whole-API breaker's 8 failures
    assert run.report.counts.tasks > 0 and run.report.counts.tasks_done == 0
    assert world.stored().heartbeat.outcome == RunOutcome.DEGRADED
