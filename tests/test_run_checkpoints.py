"""Merged checkpoints: a task's lease still reaches the disk before any request that lasts."""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime, timedelta

import pytest

from monitor.checks import FormulaErrorsCheck
from monitor.core.clock import ManualClock
from monitor.engine.quota import QuotaPacer
from monitor.engine.run import Run, RunSettings, SheetPlan
from monitor.engine.tasks import PROCESSING
from monitor.state.runner_state import RunnerState, dump_state

RANGE = "Stock!A1:B2"
PLANS = [SheetPlan(id=f"s{n}", name=f"Store {n}", checks=(FormulaErrorsCheck(range=RANGE),), ranges=(RANGE,),
                   timezone=UTC) for n in range(3)]


class Reader:
    """Answers every read with one plain row after ``seconds`` of real time (a slow network)."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds

    def read(self, spreadsheet_id, ranges, credential, timeout):
        time.sleep(self.seconds)
        return [{"range": RANGE, "majorDimension": "ROWS", "values": [["SKU", 1]]}]

    def modified_time(self, spreadsheet_id, credential, timeout):
        raise AssertionError("no check needs it")


class Saves:
    """The save callback: keeps which tasks each save showed as processing."""

    def __init__(self, fail_on: int | None = None) -> None:
        self.processing: list[list[str]] = []
        self.fail_on = fail_on

    def __call__(self, state: RunnerState) -> None:
        if self.fail_on is not None and len(self.processing) == self.fail_on:
            raise OSError(28, "No space left on device")
        tasks = json.loads(dump_state(state)["round"] or "null")
        held = [t["target"] for t in (tasks or {"tasks": []})["tasks"] if t["status"] == PROCESSING]
        self.processing.append(held)


def run(reader: Reader, saves: Saves, checkpoint_every: float) -> Run:
    settings = RunSettings(budget=timedelta(minutes=5), round_interval=timedelta(minutes=5),
                           request_timeout=2.0, checkpoint_every=checkpoint_every)
    the_run = Run(run_id="run-1", settings=settings, plans=PLANS, state=RunnerState(), reader=reader,
                  pacer=QuotaPacer(["sa-1.json"], per_credential=1000, per_project=1000),
                  clock=ManualClock(datetime(2026, 1, 5, tzinfo=UTC)), save=saves, rng=random.Random(1))
    the_run.execute()
    return the_run


def test_without_merging_every_lease_is_saved_before_its_request():
    saves = Saves()
    run(Reader(), saves, checkpoint_every=0.0)
    assert [held for held in saves.processing if held] == [["s0"], ["s1"], ["s2"]]


def test_fast_requests_inside_the_merge_window_cost_no_save():
    saves = Saves()
    report = run(Reader(), saves, checkpoint_every=60.0).report
    assert report.ok == 3
    assert len(saves.processing) == 2  # the run's first and last checkpoints
    assert saves.processing[-1] == []


def test_a_request_outlasting_the_merge_window_has_its_lease_saved_while_it_waits():
    saves = Saves()
    run(Reader(seconds=0.12), saves, checkpoint_every=0.05)
    assert ["s0"] in saves.processing  # saved by the timer, while the read was in flight
    assert saves.processing[-1] == []


def test_a_failed_lease_save_stops_the_run_instead_of_failing_the_task():
    saves = Saves(fail_on=1)  # the first save after the run's start: a lease
    with pytest.raises(OSError, match="No space left"):
        run(Reader(seconds=0.12), saves, checkpoint_every=0.05)
