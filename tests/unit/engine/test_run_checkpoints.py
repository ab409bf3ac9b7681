"""Checkpoints in a run: every read's lease reaches the store before its request; results are merged.

What each save left in the store is read back as the watchdog reads it (``read_state``, no lock), so
"saved" means stored. Reads overlap on the run's ManualClock (``SimulatedReads``): no real waiting.
"""

from __future__ import annotations

import pytest
from run_fixtures import ROWS, Bench, SimulatedReads, plans

from monitor.engine.tasks import PROCESSING
from monitor.state import StateSession
from monitor.storage import MemoryLocation


class Reader:
    """Answers every read with one plain row, noting which tasks the store shows processing as each
    request goes out."""

    def __init__(self) -> None:
        self.bench: Bench | None = None
        self.stored_at_request: list[tuple[str, list[str]]] = []

    def read(self, spreadsheet_id, ranges, credential, timeout):
        self.stored_at_request.append((spreadsheet_id, processing(self.bench)))
        return [ROWS for _ in ranges]

    def modified_time(self, spreadsheet_id, credential, timeout):
        raise NotImplementedError("no check needs it")


def processing(bench: Bench) -> list[str]:
    stored = bench.stored().round
    tasks = stored.tasks.values() if stored else ()
    return sorted(task.target for task in tasks if task.status is PROCESSING)


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
        self.processing.append(processing(self.bench))


def run(checkpoint_every: float, *, seconds: dict[str, float] | None = None, sheets: int = 3,
        max_in_flight: int = 3, fail_on: int | None = None) -> tuple[Bench, Saves, Reader]:
    """A run over ``sheets`` spreadsheets whose reads last ``seconds[id]`` (default 0.5 s) and overlap
    (a credential each: a credential's first read goes alone)."""
    reader, lasts = Reader(), seconds or {}
    bench = Bench(reader, plans(sheets), MemoryLocation(), per_credential=1000, per_project=1000,
                  credentials=tuple(f"sa-{n}.json" for n in range(1, sheets + 1)),
                  make_reads=lambda clock: SimulatedReads(reader, clock, lambda sheet: lasts.get(sheet, 0.5)))
    reader.bench = bench
    saves = Saves(bench, fail_on)
    with bench.opened(save=saves, checkpoint_every=checkpoint_every, max_in_flight=max_in_flight) as the_run:
        the_run.execute()
    return bench, saves, reader


def test_every_read_in_flight_is_stored_as_processing_before_its_request_even_when_merging():
    _, _, reader = run(checkpoint_every=60.0)
    assert reader.stored_at_request == [("s0", ["s0"]), ("s1", ["s0", "s1"]), ("s2", ["s0", "s1", "s2"])]


def test_results_closer_than_the_window_are_merged_and_the_last_save_holds_them_all():
    bench, saves, _ = run(checkpoint_every=60.0)
    # The start, one lease per read, the end: the three results arrive together and cost no save.
    assert len(saves.processing) == 5
    assert saves.processing[-1] == []
    assert bench.stored().round.is_complete()


def test_a_merged_result_is_saved_once_its_window_passes_while_another_read_is_still_in_flight():
    # s0 answers 0.1 s after both leases were saved: its result is merged (owed), and saved at 0.2 s,
    # while s1 is still out (it answers at 5 s).
    bench, saves, _ = run(checkpoint_every=0.2, seconds={"s0": 0.1, "s1": 5.0}, sheets=2, max_in_flight=2)
    assert saves.processing[:4] == [[], ["s0"], ["s0", "s1"], ["s1"]]
    assert saves.processing[-1] == []
    assert bench.stored().round.is_complete()


def test_a_failed_lease_save_stops_the_run_instead_of_failing_the_task():
    with pytest.raises(OSError, match="No space left"):
        run(checkpoint_every=0.05, fail_on=1)  # the first save after the start: s0's lease
