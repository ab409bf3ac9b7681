"""The run against the sandbox: real gspread, real google-auth, one shared manual clock.

The runner, the quota pacer and the sandbox's quota windows all read the same ManualClock, so a run
that must wait a minute for quota advances the clock instead of sleeping.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from monitor.checks import FormulaErrorsCheck, ThresholdCheck
from monitor.core.clock import ManualClock
from monitor.engine.quota import QuotaPacer
from monitor.engine.run import Run, RunSettings, SheetPlan
from monitor.google.reader import GspreadReader
from monitor.sandbox.server import running_sandbox
from monitor.state import events
from monitor.state.runner_state import RunnerState, dump_state, load_state
from monitor.storage import FileStore

CHECKS = (
    FormulaErrorsCheck(range="Stock!A1:C20"),
    ThresholdCheck(range="Stock!C2:C20", aggregate="min", warn="< 5", fail="< 0"),
)
SETTINGS = RunSettings(
    budget=timedelta(minutes=6),
    round_interval=timedelta(minutes=5),
    request_timeout=2.0,
    failure_threshold=3,
    cooldown=timedelta(minutes=15),
)


def stock(quantity: float = 10, formula_error: bool = False) -> dict:
    rows = [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity], ["A-2", "Milk", 12]]
    if formula_error:
        rows[2][1] = "#REF!"
    return {"title": "Store", "tabs": {"Stock": rows}}


def sheet_id(n: int) -> str:
    return f"1sandboxSheet{n:04d}".ljust(44, "x")


@dataclass
class World:
    sandbox: object
    clock: ManualClock
    credentials: list[Path]
    state_dir: Path
    plans: list[SheetPlan]

    def add_sheets(self, count: int, **payload) -> list[str]:
        ids = []
        for n in range(len(self.plans), len(self.plans) + count):
            ids.append(sheet_id(n))
            self.sandbox.google.store.put_control(sheet_id(n), stock(**payload))
            self.plans.append(
                SheetPlan(sheet_id(n), f"Store {n}", CHECKS, ("Stock!A1:C20", "Stock!C2:C20"), UTC)
            )
        return ids

    def fault(self, spreadsheet: str, **spec) -> None:
        self.sandbox.google.faults.add({"spreadsheet": spreadsheet, **spec})

    def state(self) -> RunnerState:
        store = FileStore.in_dir(self.state_dir, read_only=True)
        return load_state(store.get_properties())

    def run(self, settings: RunSettings = SETTINGS, per_credential: int = 60, **overrides) -> Run:
        store = FileStore.in_dir(self.state_dir)
        state = load_state(store.get_properties())
        names = [str(path) for path in self.credentials]
        pacer = QuotaPacer(names, per_credential=per_credential, per_project=300)
        pacer.restore(state.quota)
        reader = GspreadReader.from_credentials(self.credentials, endpoint=self.sandbox.base_url, timeout=2)
        run = Run(
            run_id=f"run-{self.clock.now():%H%M%S}",
            settings=replace(settings, **overrides),
            plans=self.plans,
            state=state,
            reader=reader,
            pacer=pacer,
            clock=self.clock,
            save=lambda current: store.set_properties(dump_state(current)),
            rng=random.Random(7),
        )
        run.execute()
        store.close()
        return run


@pytest.fixture
def world(tmp_path):
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time.
    clock = ManualClock(start=datetime.now(UTC))
    with running_sandbox(clock=clock, telegram=False) as sandbox:
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        yield World(sandbox, clock, credentials, tmp_path / "state", [])


def kinds(run_or_state) -> list[str]:
    state = run_or_state.state if isinstance(run_or_state, Run) else run_or_state
    return [event["kind"] for event in state.events]


def test_a_round_checks_every_spreadsheet_once_and_records_health(world):
    healthy = world.add_sheets(3)
    broken = world.add_sheets(1, formula_error=True)
    low = world.add_sheets(1, quantity=-2)
    run = world.run()
    state = world.state()
    assert run.report.stop_reason == "round_done"
    assert {sid: state.sheets[sid].health for sid in healthy + broken + low} == {
        **dict.fromkeys(healthy, "ok"),
        broken[0]: "fail",
        low[0]: "fail",
    }
    reads = world.sandbox.google.stats.snapshot()
    assert reads["by_endpoint"]["GET /v4/spreadsheets/{id}/values:batchGet"] == 5  # one request each
    assert state.heartbeat["outcome"] == "ok" and state.heartbeat["finished_at"]
    assert kinds(state).count(events.HEALTH_CHANGED) == 2


def test_one_credential_at_60_a_minute_meets_no_429(world):
    world.add_sheets(130)
    started = world.clock.monotonic()
    run = world.run()
    stats = world.sandbox.google.stats.snapshot()
    assert run.report.ok == 130
    assert stats["by_status"].get("429", 0) == 0
    # 130 reads at 60/min cannot take less than two full windows; pacing should not take much more.
    assert 120 <= world.clock.monotonic() - started <= 140


def test_three_credentials_carry_a_third_of_the_reads_each(world, tmp_path):
    world.credentials = world.sandbox.write_credentials(tmp_path / "more", 3)
    world.add_sheets(150)
    run = world.run()
    counts = sorted(run.report.reads_by_credential.values())
    assert sum(counts) == 150
    assert counts[0] >= 45 and counts[-1] <= 55


def test_503_503_then_ok_recovers_in_the_same_run_while_others_go_on(world):
    flaky = world.add_sheets(1)[0]
    others = world.add_sheets(20)
    world.fault(flaky, statuses=[503, 503])
    run = world.run()
    state = world.state()
    assert state.sheets[flaky].health == "ok"
    history = [
        entry["outcome"]
        for entry in state.round.tasks[
            next(t.id for t in state.round.tasks.values() if t.target == flaky)
        ].history
    ]
    assert history == ["transient", "transient", "ok"]
    # Others were read between the flaky one's attempts: it was not waited for idly.
    finished = {sid: state.sheets[sid].last_checked_at for sid in others}
    assert min(finished.values()) < state.sheets[flaky].last_checked_at
    assert run.report.retries_scheduled == 2


def test_three_503s_open_the_breaker_then_a_probe_after_cooldown_closes_it(world):
    sick = world.add_sheets(1)[0]
    world.add_sheets(2)
    world.fault(sick, statuses=[503], repeat=True)
    first = world.run()
    assert events.BREAKER_OPENED in kinds(first)
    assert first.state.breakers[sick]["state"] == "open"
    assert first.state.sheets[sick].skipped == "breaker_open"

    world.sandbox.google.faults.clear(sick)
    world.clock.advance(5 * 60)  # next round, but the 15-minute cooldown has not passed
    before = world.sandbox.google.stats.snapshot()["total"]
    world.run()
    assert world.state().breakers[sick]["state"] == "open"
    assert world.sandbox.google.stats.snapshot()["total"] - before == 2  # only the two healthy ones

    world.clock.advance(15 * 60)
    probe = world.run()
    assert sick not in probe.state.breakers
    assert events.BREAKER_CLOSED in kinds(probe)
    assert probe.state.sheets[sick].health == "ok"


def test_quota_errors_never_trip_the_breaker(world):
    target = world.add_sheets(1)[0]
    world.add_sheets(2)
    world.fault(target, statuses=[429, 429, 429, 429])
    run = world.run()
    assert target not in run.state.breakers
    assert run.state.sheets[target].health == "ok"
    assert events.BREAKER_OPENED not in kinds(run)


def test_permanent_errors_go_straight_to_the_dlq_and_recover_with_an_event(world):
    gone = world.add_sheets(1)[0]
    world.add_sheets(1)
    world.fault(gone, statuses=[403], repeat=True)
    first = world.run()
    entry = first.state.dlq.get(gone)
    assert entry.last_error["http_status"] == 403 and entry.occurrences == 1
    assert first.state.sheets[gone].health == "error"
    assert kinds(first).count(events.DEAD_LETTERED) == 1

    world.clock.advance(5 * 60)
    second = world.run()
    assert second.state.dlq.get(gone).occurrences == 2
    assert kinds(second).count(events.DEAD_LETTERED) == 1  # the episode was already reported

    world.sandbox.google.faults.clear(gone)
    world.clock.advance(5 * 60)
    third = world.run()
    assert gone not in third.state.dlq
    assert third.state.events[-1]["kind"] == events.RECOVERED
    assert third.state.events[-1]["details"]["down_for_seconds"] == pytest.approx(600, abs=0.01)


def test_a_renamed_tab_names_the_range_to_fix(world):
    renamed = world.add_sheets(1)[0]
    world.sandbox.google.store.put_control(renamed, {"title": "Store", "tabs": {"Stock (old)": [["SKU"]]}})
    run = world.run()
    error = run.state.dlq.get(renamed).last_error
    assert error["http_status"] == 400
    assert error["range"] == "Stock!A1:C20"


def test_many_spreadsheets_failing_in_a_row_end_the_run_with_one_event(world):
    world.add_sheets(30)
    world.fault("*", statuses=[503], repeat=True)
    run = world.run()
    assert run.report.outcome == "degraded"
    assert kinds(run).count(events.API_DEGRADED) == 1
    assert events.DEAD_LETTERED not in kinds(run)
    assert world.sandbox.google.stats.snapshot()["total"] < 15

    world.clock.advance(60)
    probe = world.run()  # still failing: one probe, then stop, no second event
    assert kinds(probe).count(events.API_DEGRADED) == 1
    assert probe.report.tasks == 1


def test_the_run_never_sleeps_past_its_budget(world):
    world.add_sheets(200)
    run = world.run(budget=timedelta(seconds=90))
    elapsed = world.clock.monotonic() - run.started_monotonic
    assert run.report.stop_reason == "budget"
    assert elapsed <= 90
    state = world.state()
    assert state.round.counts()["done"] == run.report.ok
    assert state.round.counts()["processing"] == 0


def test_a_killed_run_leaves_tasks_that_the_next_run_reclaims(world):
    ids = world.add_sheets(3)
    world.run(budget=timedelta(seconds=30), per_credential=1)  # quota for one read only
    store = FileStore.in_dir(world.state_dir)
    state = load_state(store.get_properties())
    task = next(t for t in state.round.tasks.values() if t.status == "pending")
    task.status = "processing"  # as a kill -9 during its request would leave it
    store.set_properties(dump_state(state))
    store.close()
    run = world.run()
    assert events.CRASH_RECOVERED in kinds(run)
    assert {world.state().sheets[sid].health for sid in ids} == {"ok"}


def test_a_freshness_check_on_the_file_reads_its_modified_time(world):
    from monitor.checks import FreshnessCheck

    stale = world.add_sheets(1)[0]
    payload = {**stock(), "modifiedTime": "2020-01-01T00:00:00Z"}
    world.sandbox.google.store.put_control(stale, payload)
    check = FreshnessCheck(source="modified_time", warn="> 2h", fail="> 1d")
    world.plans[0] = replace(world.plans[0], checks=(check,), ranges=(), needs_modified_time=True)
    run = world.run()
    assert run.state.sheets[stale].health == "fail"
    assert "2020-01-01" in run.state.sheets[stale].findings[0]["message"]


def test_a_spreadsheet_muted_during_a_round_is_skipped_not_read(world):
    quiet, loud = world.add_sheets(2)
    until = (world.clock.now() + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    store = FileStore.in_dir(world.state_dir)
    state = load_state(store.get_properties())
    state.mutes[quiet] = {"until": until, "reason": "migration"}
    store.set_properties(dump_state(state))
    store.close()
    run = world.run()
    assert run.state.sheets[quiet].shown == "skipped" and run.state.sheets[quiet].skipped == "muted"
    assert run.report.tasks == 1 and run.state.sheets[loud].health == "ok"


def test_a_run_that_could_read_nothing_is_degraded_for_the_watchdog(world):
    world.add_sheets(2)
    world.fault("*", statuses=[503], repeat=True)
    run = world.run(budget=timedelta(seconds=10))  # too short for the whole-API breaker's 8 failures
    assert run.report.tasks > 0 and run.report.ok == 0
    assert run.state.heartbeat["outcome"] == "degraded"
