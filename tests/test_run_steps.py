"""The run's step loop over a scripted reader: which task goes when (no HTTP, a manual clock)."""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime, timedelta

from monitor.checks import FormulaErrorsCheck, FreshnessCheck
from monitor.core.clock import ManualClock
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.engine.breaker import OPEN, BreakerState
from monitor.engine.quota import QuotaPacer
from monitor.engine.run import Run, RunSettings, SheetPlan
from monitor.engine.tasks import DONE
from monitor.state.runner_state import RunnerState

RANGE = "Stock!A1:B2"
ROWS = {"range": RANGE, "majorDimension": "ROWS", "values": [["SKU", 1]]}


def plans(count: int) -> list[SheetPlan]:
    check = (FormulaErrorsCheck(range=RANGE),)
    return [SheetPlan(id=f"s{n}", name=f"Store {n}", checks=check, ranges=(RANGE,), timezone=UTC)
            for n in range(count)]


UNAVAILABLE = SheetReadError(ErrorClass.TRANSIENT, 503, "UNAVAILABLE", "The service is unavailable.")
QUOTA = SheetReadError(ErrorClass.QUOTA, 429, "RESOURCE_EXHAUSTED", "Quota exceeded.")


class ScriptedReader:
    """Fails each spreadsheet's first ``failures[id]`` reads with ``error``, then answers one plain row."""

    def __init__(self, failures: dict[str, int], error: SheetReadError = UNAVAILABLE) -> None:
        self.failures = dict(failures)
        self.error = error
        self.reads: list[str] = []

    def read(self, spreadsheet_id, ranges, credential, timeout):
        self.reads.append(spreadsheet_id)
        if self.failures.get(spreadsheet_id, 0) > 0:
            self.failures[spreadsheet_id] -= 1
            raise self.error
        return [ROWS]

    def modified_time(self, spreadsheet_id, credential, timeout):
        raise AssertionError("no check needs it")


def make_run(
    reader: ScriptedReader, count: int, per_credential: int, clock: ManualClock, **settings_fields
) -> Run:
    fields = {"budget": timedelta(minutes=5), "round_interval": timedelta(minutes=5), "request_timeout": 2.0}
    settings = RunSettings(**{**fields, **settings_fields})
    return Run(run_id="run-1", settings=settings, plans=plans(count), state=RunnerState(), reader=reader,
               pacer=QuotaPacer(["sa-1.json"], per_credential=per_credential, per_project=300),
               clock=clock, save=lambda state: None, rng=random.Random(1))


def test_a_due_retry_that_must_wait_for_quota_is_still_retried_in_the_same_run():
    clock = ManualClock(datetime(2026, 1, 5, tzinfo=UTC))
    reader = ScriptedReader({"s0": 1})
    run = make_run(reader, count=2, per_credential=2, clock=clock)
    report = run.execute()
    # s0 failed, s1 used the minute's last read; s0's retry came due while the quota was spent.
    assert reader.reads == ["s0", "s1", "s0"]
    assert report.stop_reason == "round_done" and run.state.round.is_complete()
    assert all(task.status == DONE for task in run.state.round.tasks.values())


class SlowReader:
    """Every request lasts its whole timeout (on the manual clock); records each request's timeout."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.requests: list[tuple[str, float, float]] = []  # (kind, monotonic at start, timeout)

    def read(self, spreadsheet_id, ranges, credential, timeout):
        self.requests.append(("read", self.clock.monotonic(), timeout))
        self.clock.advance(timeout)
        return [ROWS]

    def modified_time(self, spreadsheet_id, credential, timeout):
        self.requests.append(("modified_time", self.clock.monotonic(), timeout))
        self.clock.advance(timeout)
        return "2026-01-05T00:00:00.000Z"


def test_a_second_request_for_the_same_task_gets_only_the_budget_left():
    clock = ManualClock(datetime(2026, 1, 5, tzinfo=UTC))
    reader = SlowReader(clock)
    checks = (FormulaErrorsCheck(range=RANGE), FreshnessCheck(source="modified_time", warn="> 1d"))
    plan = SheetPlan(id="s0", name="Store 0", checks=checks, ranges=(RANGE,), timezone=UTC,
                     needs_modified_time=True)
    settings = RunSettings(budget=timedelta(seconds=10), round_interval=timedelta(minutes=5),
                           request_timeout=5.0, reserve_seconds=3.0)
    run = Run(run_id="run-1", settings=settings, plans=[plan], state=RunnerState(), reader=reader,
              pacer=QuotaPacer(["sa-1.json"]), clock=clock, save=lambda state: None, rng=random.Random(1))
    run.execute()
    usable_until = run.deadline - settings.reserve_seconds
    assert [kind for kind, _, _ in reader.requests] == ["read", "modified_time"]
    assert all(start + timeout <= usable_until for _, start, timeout in reader.requests)


def test_a_quota_refusal_of_a_breakers_probe_gives_the_probe_back():
    clock = ManualClock(datetime(2026, 1, 5, tzinfo=UTC))
    reader = ScriptedReader({"s0": 1}, error=QUOTA)
    run = make_run(reader, count=1, per_credential=60, clock=clock)
    opened = clock.now() - timedelta(minutes=15)  # its cooldown just ended: the probe is due
    run.state.breakers["s0"] = BreakerState(
        state=OPEN, consecutive_failures=3, opened_at=opened, cooldown_seconds=900.0, first_opened_at=opened
    ).to_dict()
    run.execute()
    assert reader.reads == ["s0", "s0"]  # the probe again once the quota window refilled
    assert "s0" not in run.state.breakers and run.state.sheets["s0"].health == "ok"


def test_the_failure_that_finds_google_degraded_is_logged_like_any_other(caplog):
    clock = ManualClock(datetime(2026, 1, 5, tzinfo=UTC))
    reader = ScriptedReader({f"s{n}": 1 for n in range(8)})
    run = make_run(reader, count=8, per_credential=60, clock=clock)
    with caplog.at_level(logging.INFO, logger="monitor"):
        report = run.execute()
    assert report.stop_reason == "api_degraded" and len(reader.reads) == 8
    logged = [r.fields["spreadsheet_id"] for r in caplog.records if r.getMessage() == "task_retry"]
    assert logged == reader.reads  # SPEC 12: what happened to each spreadsheet is in the log
