"""Cells IMPORTRANGE and GOOGLEFINANCE are still computing, and imports refused their source, read by
runs through real gspread against the sandbox (which shows them as Google does, docs/sandbox.md).

A value not known yet is never judged: the read is tried again, with Google's details, and only what
is known then is judged. A refused import is a finding of its own, with what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from sandbox_bench import SandboxBench, sandbox_bench

from monitor.checks import FormulaErrorsCheck, ThresholdCheck
from monitor.engine.events import DeadLettered, HealthChanged
from monitor.engine.health import FAIL, OK
from monitor.engine.inspect import SheetPlan
from monitor.google.reader import GspreadReader

SID = "1computing".ljust(44, "x")
IMPORT = '=IMPORTRANGE("https://docs.google.com/spreadsheets/d/1src", "Stock!C2:C3")'
FINANCE = '=GOOGLEFINANCE("NASDAQ:GOOG", "price")'
CHECKS = (FormulaErrorsCheck(range="Stock!A1:C3"),
          ThresholdCheck(range="Stock!C2:C3", aggregate="min", warn="< 5", fail="< 0"))
BATCH_GET, GET = "GET /v4/spreadsheets/{id}/values:batchGet", "GET /v4/spreadsheets/{id}"


def stock(quantity) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"],
                                                 ["A-1", "Tea", quantity], ["A-2", "Milk", 12]]}}


class ComputedAfterReads:
    """The real reader; after ``reads`` reads the spreadsheet's value is computed at Google (its
    contents change without an edit, as IMPORTRANGE's do)."""

    def __init__(self, inner: GspreadReader, sandbox, reads: int, computed) -> None:
        self.inner, self.sandbox, self.left, self.computed = inner, sandbox, reads, computed

    def _count(self) -> None:
        self.left -= 1
        if self.left == 0:
            self.sandbox.google.store.put_control(SID, stock(self.computed), touch=False)

    def read(self, *args):
        try:
            return self.inner.read(*args)
        finally:
            self._count()

    def read_detailed(self, *args):
        try:
            return self.inner.read_detailed(*args)
        finally:
            self._count()

    def modified_time(self, *args):
        return self.inner.modified_time(*args)


@dataclass
class World(SandboxBench):
    def put(self, quantity) -> None:
        self.sandbox.google.store.put_control(SID, stock(quantity))
        self.plans[:] = [SheetPlan(SID, "Store 1", CHECKS, ("Stock!A1:C3", "Stock!C2:C3"))]

    def requests(self) -> dict[str, int]:
        return self.sandbox.google.stats.snapshot()["by_endpoint"]

    def history(self) -> list[str]:
        [task] = self.stored().round.tasks.values()
        return [attempt.outcome for attempt in task.history]


@pytest.fixture
def world(tmp_path):
    with sandbox_bench(World, tmp_path) as world:
        yield world


def test_a_cell_still_loading_is_read_again_and_judged_once_computed(world):
    world.put({"formula": IMPORT, "value": {"loading": True}})
    world.reader = ComputedAfterReads(world.reader, world.sandbox, 1, {"formula": IMPORT, "value": 3})
    world.run(budget=timedelta(minutes=2))
    state = world.stored()
    assert world.history() == ["loading", "ok"] and world.requests() == {BATCH_GET: 1, GET: 1}
    assert state.health[SID].health == "warn"  # the computed 3 is below 5: judged, once known
    assert not [e for e in state.events if isinstance(e, HealthChanged) and e.current == FAIL]


def test_an_import_that_may_not_read_its_source_is_its_own_finding_with_what_to_do(world):
    world.put({"formula": IMPORT, "value": {"error": "#REF!",
                                            "message": "You need to connect these sheets."}})
    world.run(budget=timedelta(minutes=2))
    state = world.stored()
    # The batchGet showed only "#REF!", the code IMPORTRANGE also shows while computing: the retry
    # asked for the details, which say the import is refused, for good.
    assert world.history() == ["loading", "ok"] and world.requests() == {BATCH_GET: 1, GET: 1}
    record = state.health[SID]
    assert record.health == FAIL and record.findings[0].check == "imports"
    assert "IMPORTRANGE may not read its source (#REF! You need to connect these sheets.)" in world.told()
    assert "click Allow access" in world.told() and SID not in state.dlq


def test_an_external_na_that_never_resolves_is_judged_at_the_last_try_not_dead_lettered(world):
    world.put({"formula": FINANCE, "value": "#N/A"})
    world.run(budget=timedelta(minutes=4))
    state = world.stored()
    assert world.history() == ["loading"] * 4 + ["ok"]  # five tries, as for cells still loading
    assert world.requests() == {BATCH_GET: 1, GET: 4}
    assert state.health[SID].health == FAIL and SID not in state.dlq
    assert state.health[SID].findings[0].message == "1 cell shows #N/A (Stock!C2)"


def test_an_ordinary_formula_error_costs_one_more_read_and_is_judged_then(world):
    world.put({"formula": "=VLOOKUP(A2, Prices!A:B, 2)", "value": "#N/A"})
    world.run(budget=timedelta(minutes=2))
    assert world.history() == ["loading", "ok"] and world.requests() == {BATCH_GET: 1, GET: 1}
    assert world.stored().health[SID].health == FAIL


def test_the_read_with_details_goes_at_once_but_a_computing_import_waits_its_backoff(world):
    # A plain read's #N/A says nothing of whether anything computes: the question was short, and the
    # read with details asks at once. What the details say may be computing waits as cells loading do.
    world.put({"formula": FINANCE, "value": "#N/A"})
    world.run(budget=timedelta(minutes=4))
    [task] = world.stored().round.tasks.values()
    tried = [attempt.at for attempt in task.history]
    waits = [(later - earlier).total_seconds() for earlier, later in zip(tried, tried[1:], strict=False)]
    assert waits[0] < 1.5  # the plain read, then the one with details: a read's time apart, no 3 s
    assert all(wait >= 9 for wait in waits[1:])  # then 9, 27, 81 s: its computing may end


def test_loading_that_never_ends_is_dead_lettered_with_what_it_means(world):
    world.put({"formula": IMPORT, "value": {"loading": True}})
    world.run(budget=timedelta(minutes=4))
    state = world.stored()
    assert world.history() == ["loading"] * 5
    [dead] = [e for e in state.events if isinstance(e, DeadLettered)]
    assert "Stock!C2 still shows Loading..." in dead.error.message
    assert "cells were still computing (IMPORTRANGE, GOOGLEFINANCE, IMPORTXML)" in world.told()
    assert state.health[SID].health != OK
