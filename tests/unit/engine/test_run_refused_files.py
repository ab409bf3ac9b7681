"""Files Google serves differently from a spreadsheet: an Excel file kept in Drive, a file the
service account may not see, a spreadsheet in Drive's trash. Real gspread against the sandbox, which
answers each as Google does (docs/sandbox.md), and what people are told.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
import requests
from sandbox_bench import SandboxBench, sandbox_bench

from monitor.checks import FormulaErrorsCheck, FreshnessCheck
from monitor.core import remedies
from monitor.engine.events import DeadLettered, SpreadsheetRestored, SpreadsheetTrashed
from monitor.engine.health import ERROR, OK
from monitor.engine.inspect import SheetPlan
from monitor.google.drive_feed import DriveChangeFeed

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
STOCK = {"Stock": [["SKU", "Qty"], ["A-1", 5]]}
FORMULAS = (FormulaErrorsCheck(range="Stock!A1:B20"),)
MODIFIED = (FreshnessCheck(source="modified_time", warn="> 1d"),)


@dataclass
class World(SandboxBench):
    def add(self, sid: str, checks=FORMULAS, **payload) -> str:
        self.sandbox.google.store.put_control(sid, {"title": sid, "tabs": STOCK, **payload})
        ranges = tuple(check.range for check in checks if check.range)
        self.plans.append(SheetPlan(sid, f"Store {sid}", checks, ranges,
                                    needs_modified_time=not ranges))
        return sid

    def trash(self, sid: str, trashed: bool = True) -> None:
        """What the spreadsheet's owner does in Drive: files.update with ``trashed``."""
        token = self.sandbox.google.auth.mint_token("owner@example.com")
        with requests.Session() as session:
            session.trust_env = False
            answer = session.patch(f"{self.sandbox.base_url}/drive/v3/files/{sid}", timeout=5,
                                   json={"trashed": trashed}, headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text

    def next_round(self):
        self.clock.advance(360)  # past the round interval: a new round asks Drive
        return self.run(budget=timedelta(minutes=2))


@pytest.fixture
def world(tmp_path):
    with sandbox_bench(World, tmp_path) as world:
        yield world


def test_an_excel_file_is_dead_lettered_at_once_and_the_alert_says_to_convert_it(world):
    sid = world.add("xlsx-1", mimeType=XLSX)
    world.run(budget=timedelta(minutes=2))
    state = world.stored()
    entry = state.dlq[sid]
    assert (entry.last_error.http_status, entry.last_error.google_status) == (400, "FAILED_PRECONDITION")
    assert entry.task.attempts == 1 and state.health[sid].health is ERROR  # retrying cannot help
    [event] = [event for event in state.events if isinstance(event, DeadLettered)]
    assert remedies.remedy(event.error) == remedies.NOT_A_SPREADSHEET
    assert "choose File > Save as Google Sheets" in world.told()


def test_a_file_drive_will_not_show_is_drives_not_found_and_the_alert_says_share_it(world):
    # A spreadsheet checked only by its modifiedTime is read through Drive alone: when the service
    # account loses access, Drive answers 404 "File not found", never the Sheets API's 403.
    sid = world.add("1hidden".ljust(44, "x"), checks=MODIFIED)
    world.sandbox.google.faults.add({"spreadsheet": sid, "statuses": [403], "repeat": True})
    world.run(budget=timedelta(minutes=2))
    error = world.stored().dlq[sid].last_error
    assert (error.http_status, error.message) == (404, f"File not found: {sid}.")
    assert "or not shared with the service account" in world.told()


def test_a_spreadsheet_put_in_the_trash_is_told_once_and_its_way_back_too(world):
    world.changes = DriveChangeFeed(world.reader, world.credentials[0])
    sid = world.add("1trashed".ljust(44, "x"))
    kept = world.add("1kept".ljust(44, "x"))
    world.run(budget=timedelta(minutes=2))  # the feed's first position; every spreadsheet is read
    world.trash(sid)
    world.next_round()
    state = world.stored()
    [trashed] = [event for event in state.events if isinstance(event, SpreadsheetTrashed)]
    assert trashed.spreadsheet_id == sid and set(state.feed.trashed) == {sid}
    assert state.health[sid].health is OK  # Google still serves it: its checks pass, until it is gone
    assert "is in Google Drive's trash: still checked, but Drive deletes it for good 30 days" in world.told()
    world.sandbox.google.store.put_control(kept, {"title": kept, "tabs": STOCK})  # an edit elsewhere
    world.next_round()
    assert len([e for e in world.stored().events if isinstance(e, SpreadsheetTrashed)]) == 1  # once
    world.trash(sid, trashed=False)
    world.next_round()
    state = world.stored()
    [restored] = [event for event in state.events if isinstance(event, SpreadsheetRestored)]
    assert (restored.spreadsheet_id, restored.trashed_at) == (sid, trashed.at) and not state.feed.trashed
