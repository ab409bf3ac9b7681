"""Merged checkpoints in a run: a task's lease still reaches the store before any request that lasts.

What each save left in the store is read back as the watchdog reads it (``read_state``, no lock), so
"saved" means stored. The merge window is measured on the run's ManualClock, which only the run's
waits move; the lease timer waits in real time, so the slow reader here sleeps a tenth of a second.
"""

from __future__ import annotations

import time

import pytest
from run_fixtures import ROWS, Bench, plans

from monitor.engine.tasks import PROCESSING
from monitor.state import StateSession
from monitor.storage import MemoryLocation


class Reader:
    """Answers every read with one plain row after ``seconds`` of real time (a slow network)."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds

    def read(self, spreadsheet_id, ranges, credential, timeout):
        time.sleep(self.seconds)
        return [ROWS for _ in ranges]

    def modified_time(self, spreadsheet_id, credential, timeout):
        raise NotImplementedError("no check needs it")


class Saves:
    """The run's checkpoint: saves the session, then notes which tasks the store shows processing."""

    def __init__(self, bench: Bench, fail_on: int | None = None) -> None:
        self.bench = bench
        self.processing: list[list[str]] = []
        self.fail_on = fail_on

    def __call__(self, session: StateSession) -> None:
        if self.fail_on is not None and len(self.processing) == self.fail_on:
            raise OSError(28, "No space left on device")
        session.save()
        stored = self.bench.stored().round
        tasks = stored.tasks.values() if stored else ()
        self.processing.append(sorted(task.target for task in tasks if task.status is PROCESSING))


def run(reader: Reader, checkpoint_every: float, fail_on: int | None = None) -> tuple[Bench, Saves]:
    bench = Bench(reader, plans(3), MemoryLocation(), per_credential=1000, per_project=1000)
    saves = Saves(bench, fail_on)
    with bench.opened(save=saves, checkpoint_every=checkpoint_every) as the_run:
        the_run.execute()
    return bench, saves


def test_without_merging_every_lease_is_saved_before_its_request():
    _, saves = run(Reader(), checkpoint_every=0.0)
    assert [held for held in saves.processing if held] == [["s0"], ["s1"], ["s2"]]
    assert saves.processing[-1] == []


def test_fast_requests_inside_the_merge_window_cost_no_save():
    bench, saves = run(Reader(), checkpoint_every=60.0)
    assert len(saves.processing) == 2  # the run's first and last checkpoints
    assert saves.processing[-1] == []
    assert bench.stored().round.is_complete()  # the last one saved every task's result


def test_a_request_outlasting_the_merge_window_has_its_lease_saved_while_it_waits():
    _, saves = run(Reader(seconds=0.12), checkpoint_every=0.05)
    assert ["s0"] in saves.processing  # saved by the timer, while the read was in flight
    assert saves.processing[-1] == []


def test_a_failed_lease_save_stops_the_run_instead_of_failing_the_task():
    with pytest.raises(OSError, match="No space left"):
        run(Reader(seconds=0.12), checkpoint_every=0.05, fail_on=1)  # the first save after the start
