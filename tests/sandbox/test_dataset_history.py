"""A generated dataset judged over two rounds, as the manifest says: the stores checked against the
head office's catalogue, and the breakages made after the first read (rows dropped, a column renamed)
caught by the second, with their history kept in the state between runs. Real run_once, gspread and
sandbox; faults left out (tests/unit/engine/test_round.py covers them)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from sandbox_fixtures import drive_caught_up, served_dataset

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from sheet_sandbox.dataset import AFTER_FIRST_READ, apply_edits

pytestmark = pytest.mark.waits  # two whole rounds in this process: started first (tests/conftest.py)

SHEETS = 190  # every kind of breakage once at least (len(BREAKAGES) / BROKEN_SHARE)
FAULT_KINDS = {"flaky", "server_error", "slow", "hang", "access_removed"}  # faults left out: served plainly


def a_round(served, config, clock) -> None:
    for _ in range(5):
        run_once(config, budget=timedelta(minutes=4), clock=clock, messages_to=io.StringIO())
        if served.state().round.is_complete():
            return
        clock.advance(300)
    raise AssertionError("the round did not complete in five runs")


def test_two_rounds_judge_every_generated_spreadsheet_as_its_manifest_says(tmp_path):
    clock = ManualClock(start=datetime.now(UTC))
    with served_dataset(tmp_path, SHEETS, seed=3, clock=clock, faults=False, read_per_user=600,
                        read_per_project=3000) as served:
        config = load_config(served.config_path, {})
        a_round(served, config, clock)
        first = served.state()
        for entry in served.dataset.sheets:
            if entry.kind in AFTER_FIRST_READ:
                assert first.health[entry.id].health == "ok", entry  # nothing to compare with yet
        apply_edits(served.dataset, served.sandbox.google)
        drive_caught_up(served.sandbox.google)  # the next round is built once Drive's feed has them
        clock.advance(config.run.round_interval.total_seconds())
        a_round(served, config, clock)
        state = served.state()
    seen = set()
    for entry in served.dataset.sheets:
        if entry.kind in FAULT_KINDS:
            continue
        seen.add(entry.kind)
        assert state.health[entry.id].health == entry.expect, (entry, state.health[entry.id])
    assert {"unknown_sku", "rows_dropped", "headers_renamed", "catalogue"} <= seen
    renamed = served.dataset.of_kind("headers_renamed")[0]
    [finding] = state.health[renamed.id].findings
    assert "removed ['Product']; added ['Item']" in finding.message
