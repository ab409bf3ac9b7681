"""An alert links a finding's tab to its first bad cell when the tab's id is known: the request for
the spreadsheet's time zone asks for its tabs too, at no extra read. Real gspread against the sandbox.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

import pytest
from sandbox_bench import SandboxBench, sandbox_bench

from monitor.checks import FormulaErrorsCheck, FreshnessCheck
from monitor.engine.fleet import Fleet
from monitor.engine.inspect import SheetPlan
from monitor.notify.alerts import compose_alert
from monitor.notify.settings import AlertSettings

TABS = {"Log": [["when"], [46000]], "Stock": [["SKU", "Qty"], ["A-1", 5], ["A-2", "#DIV/0!"]]}
ERRORS = FormulaErrorsCheck(range="Stock!A1:B5")
FRESH = FreshnessCheck(range="Log!A2:A", warn="> 1000d")


@dataclass
class World(SandboxBench):
    def add(self, sid: str, *checks) -> str:
        self.sandbox.google.store.put_control(sid, {"title": sid, "tabs": TABS})
        ranges = tuple(dict.fromkeys(check.range for check in checks))
        self.plans.append(SheetPlan(sid, f"Store {sid}", checks, ranges))
        return sid

    def links(self) -> list[str]:
        [message] = compose_alert(list(self.stored().events), Fleet({}), AlertSettings())
        return re.findall(r'href="([^"]+)"', message.text.replace("&amp;", "&"))

    def gid_of(self, sid: str, title: str) -> int:
        return next(tab.gid for tab in self.stored().health[sid].tabs if tab.title == title)


@pytest.fixture
def world(tmp_path):
    with sandbox_bench(World, tmp_path) as world:
        yield world


def test_a_spreadsheet_whose_zone_is_read_links_the_tab_to_its_first_bad_cell(world):
    sid = world.add("1zoned".ljust(44, "x"), ERRORS, FRESH)
    world.run(budget=timedelta(minutes=2))
    gid = world.gid_of(sid, "Stock")
    assert f"https://docs.google.com/spreadsheets/d/{sid}/edit#gid={gid}&range=B3" in world.links()
    assert world.stored().health[sid].findings[0].gid == gid


def test_without_a_zone_read_the_alert_links_the_spreadsheet_and_no_read_is_added(world):
    sid = world.add("1plain".ljust(44, "x"), ERRORS)
    world.run(budget=timedelta(minutes=2))
    assert world.links() == [f"https://docs.google.com/spreadsheets/d/{sid}"]
    assert "is failing: Stock: 1 cell shows #DIV/0! (B3)" in world.told()  # the tab leads, unlinked
    assert world.stored().heartbeat.stats.counts.reads_by_credential == {world.credentials[0]: 1}
