"""A read refused for good, told with what a person needs to act on it: the service account's
e-mail to share with (403), the tabs the spreadsheet has when a range names one that is not there
(400), and what a 404 means. Real gspread against the sandbox, which answers as Google does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

import pytest
from sandbox_bench import SandboxBench, sandbox_bench

from monitor.checks import Check, FormulaErrorsCheck, FreshnessCheck
from monitor.engine.inspect import SheetPlan

TABS = {"Stock 2024": [["SKU", "Qty"], ["A-1", 5]], "Archive": [["old"]]}


@dataclass
class World(SandboxBench):
    def add(self, sid: str, range_: str, *more: Check) -> str:
        self.sandbox.google.store.put_control(sid, {"title": sid, "tabs": TABS})
        checks = (FormulaErrorsCheck(range=range_), *more)
        self.plans.append(SheetPlan(sid, f"Store {sid}", checks, (range_,)))
        return sid

    def account(self) -> str:
        with open(self.credentials[0], encoding="utf-8") as key_file:
            return json.load(key_file)["client_email"]


@pytest.fixture
def world(tmp_path):
    with sandbox_bench(World, tmp_path) as world:
        yield world


def test_a_spreadsheet_not_shared_is_told_with_the_address_to_share_it_with(world):
    sid = world.add("1noaccess".ljust(44, "x"), "Stock 2024!A1:B20")
    world.sandbox.google.faults.add({"spreadsheet": sid, "statuses": [403], "repeat": True})
    world.run(budget=timedelta(minutes=2))
    assert world.stored().dlq[sid].last_error.account == world.account()
    told = world.told()
    assert f"cannot be read: it is not shared with the service account {world.account()}." in told
    assert "To fix: share the spreadsheet with that e-mail, Viewer is enough." in told  # named once
    assert told.count(world.account()) == 1


def test_a_refusal_of_the_time_zone_request_is_told_with_the_address_too(world):
    """A freshness check on a range has the spreadsheet's time zone asked first: its 403 is the one
    people hear."""
    sid = world.add("1noaccess".ljust(44, "x"), "Stock 2024!A1:B20",
                    FreshnessCheck(range="Stock 2024!B2:B", warn="> 2h"))
    world.sandbox.google.faults.add({"spreadsheet": sid, "statuses": [403], "repeat": True})
    world.run(budget=timedelta(minutes=2))
    assert world.stored().dlq[sid].last_error.account == world.account()
    assert f"it is not shared with the service account {world.account()}" in world.told()


def test_a_range_on_a_missing_tab_is_told_as_a_tab_renamed_with_the_tabs_found(world):
    sid = world.add("1renamed".ljust(44, "x"), "Stock!A1:H500")
    world.run(budget=timedelta(minutes=2))
    assert world.stored().dlq[sid].last_error.tabs == ("Stock 2024", "Archive")
    told = world.told()
    assert "cannot be read: the tab “Stock” is missing or was renamed" in told
    assert "(the config reads Stock!A1:H500)" in told
    assert "tabs found: “Stock 2024”, “Archive”" in told


def test_the_request_for_the_tabs_counts_against_the_quota_like_any_read(world):
    """Google counts the tabs' request on arrival; a pacer that did not would send past the quota."""
    sid = world.add("1renamed".ljust(44, "x"), "Stock!A1:H500")
    world.run(budget=timedelta(minutes=2))
    assert world.stored().dlq[sid].last_error.tabs is not None
    sent = world.stored().quota.sent[world.credentials[0]]
    assert len(sent) == 2  # the refused batchGet and the spreadsheets.get for the tabs
