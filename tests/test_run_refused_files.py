"""Files Google serves differently from a spreadsheet: an Excel file kept in Drive, a file the
service account may not see, a spreadsheet in Drive's trash. Real gspread against the sandbox, which
answers each as Google does (docs/sandbox.md), and what people are told.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from run_fixtures import Bench

from monitor.checks import FormulaErrorsCheck, FreshnessCheck
from monitor.core import remedies
from monitor.core.clock import ManualClock
from monitor.engine.events import DeadLettered
from monitor.engine.health import ERROR
from monitor.engine.inspect import SheetPlan
from monitor.google.reader import GspreadReader
from monitor.notify.alerts import compose_alert
from monitor.notify.settings import AlertSettings
from monitor.sandbox.server import running_sandbox
from monitor.sandbox.telegram_html import parse_html

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
STOCK = {"Stock": [["SKU", "Qty"], ["A-1", 5]]}
FORMULAS = (FormulaErrorsCheck(range="Stock!A1:B20"),)
MODIFIED = (FreshnessCheck(source="modified_time", warn="> 1d"),)


@dataclass
class World(Bench):
    sandbox: object = None

    def add(self, sid: str, checks=FORMULAS, **payload) -> str:
        self.sandbox.google.store.put_control(sid, {"title": sid, "tabs": STOCK, **payload})
        ranges = tuple(check.range for check in checks if check.range)
        self.plans.append(SheetPlan(sid, f"Store {sid}", checks, ranges, UTC,
                                    needs_modified_time=not ranges))
        return sid

    def told(self) -> str:
        """The alert people would get for everything the runs recorded."""
        [message] = compose_alert(list(self.stored().events), {}, AlertSettings())
        return parse_html(message.text).text


@pytest.fixture
def world(tmp_path):
    clock = ManualClock(start=datetime.now(UTC))  # google-auth stamps its JWTs with the real time
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        world = World(None, [], tmp_path / "state", clock=clock, sandbox=sandbox)
        [credential] = sandbox.write_credentials(tmp_path / "secrets", 1)
        world.credentials = [str(credential)]
        world.reader = GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=2)
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
    assert "it is not shared with the service account" in world.told()
