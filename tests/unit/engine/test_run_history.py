"""Change over time, headers changed and cross-sheet checks in real runs: real gspread against the
sandbox, the state in a folder reopened by every run (so the history survives restarts)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from sandbox_bench import SandboxBench, sandbox_bench
from sandbox_fixtures import drive_caught_up

from monitor.checks import ChangeCheck, CrossSheetCheck, HeadersChangedCheck
from monitor.config.model import Lend
from monitor.engine.health import FAIL, OK, WARN
from monitor.engine.history import Linked
from monitor.engine.inspect import SheetPlan
from monitor.engine.mutes import Mute
from tests.refs import a1

BATCH_GET = "GET /v4/spreadsheets/{id}/values:batchGet"
ORDERS = "1sandboxOrders".ljust(44, "x")
LEDGER = "1sandboxLedger".ljust(44, "x")
ROUND = timedelta(minutes=6)


def orders(rows: int = 4, headers=("SKU", "Product", "Qty")) -> dict:
    lines = [list(headers)] + [[f"A-{n}", "Tea", 10] for n in range(1, rows + 1)]
    return {"title": "Orders", "tabs": {"Orders": lines}}


def ledger(total: float = 40, skus=("A-1", "A-2", "A-3", "A-4")) -> dict:
    return {"title": "Ledger", "tabs": {"Totals": [["Total", total]], "Skus": [[sku] for sku in skus]}}


@dataclass
class World(SandboxBench):
    def put(self, spreadsheet: str, payload: dict) -> None:
        self.sandbox.google.store.put_control(spreadsheet, payload)
        drive_caught_up(self.sandbox.google)  # the next round's feed tells an edit

    def next_round(self):
        self.clock.advance(ROUND.total_seconds())
        return self.run(budget=timedelta(minutes=2))

    def batch_gets(self) -> int:
        return self.sandbox.google.stats.snapshot()["by_endpoint"][BATCH_GET]


@pytest.fixture
def world(tmp_path):
    with sandbox_bench(World, tmp_path) as the_world:
        yield the_world


def watch_orders(world: World, *checks) -> None:
    world.put(ORDERS, orders())
    world.plans.append(SheetPlan(ORDERS, "Orders", checks, tuple(dict.fromkeys(c.range for c in checks))))


def test_rows_dropping_between_runs_fail_and_the_history_survives_each_restart(world):
    check = ChangeCheck(range="Orders!A2:A", fail="< -30")
    watch_orders(world, check)
    world.next_round()
    assert world.stored().health[ORDERS].health == OK
    world.put(ORDERS, orders(rows=2))
    world.next_round()
    state = world.stored()
    [finding] = state.health[ORDERS].findings
    assert (finding.status, finding.message) == (
        "fail", "row_count 2, -50 % since the previous read (4), < -30 %")
    assert [point.value for point in state.history[ORDERS].series[check.name]] == [2]
    world.next_round()  # unchanged: the drop is in the past, and no point is added for a value that held
    assert world.stored().health[ORDERS].health == OK


def test_renamed_headers_are_told_with_the_old_and_new_lists(world):
    watch_orders(world, HeadersChangedCheck(range="Orders!1:1"))
    world.next_round()
    world.put(ORDERS, orders(headers=("SKU", "Item", "Qty")))
    world.next_round()
    [finding] = world.stored().health[ORDERS].findings
    assert finding.status == WARN
    assert finding.message == ("headers changed since the last read (removed ['Product']; added ['Item']): "
                               "was ['SKU', 'Product', 'Qty'], now ['SKU', 'Item', 'Qty']")


def cross_world(world: World, check: CrossSheetCheck) -> None:
    world.put(ORDERS, orders())
    world.put(LEDGER, ledger())
    lend = Lend(check.other_range, "keys" if check.match == "keys" else check.aggregate)
    world.plans += [
        SheetPlan(ORDERS, "Orders", (check,), (check.range,), links=Linked({check.name: LEDGER})),
        SheetPlan(LEDGER, "Ledger", (), (check.other_range,), links=Linked(lends=(lend,))),
    ]


def test_totals_that_drift_apart_fail_when_only_the_other_side_changed(world):
    check = CrossSheetCheck(range="Orders!C2:C", other="Ledger", other_range="Totals!B1")
    cross_world(world, check)
    world.next_round()
    assert world.stored().health[ORDERS].health == OK
    assert world.batch_gets() == 2  # the other side rides in the Ledger's own batchGet
    world.put(LEDGER, ledger(total=55))
    world.next_round()
    [finding] = world.stored().health[ORDERS].findings
    assert finding.message == "sum 40 here, 55 in Ledger Totals!B1: they differ by 15"


def mute_orders(world: World) -> None:
    with world.session() as session:  # not read while muted: only the Ledger's read can judge it
        now = world.clock.now()
        session.state.mutes[ORDERS] = Mute(until=now + timedelta(days=1), reason="test", muted_at=now)


def test_a_lenders_read_judges_a_total_again_without_reading_its_dependent(world):
    check = CrossSheetCheck(range="Orders!C2:C", other="Ledger", other_range="Totals!B1")
    cross_world(world, check)
    world.next_round()
    reads = world.batch_gets()
    mute_orders(world)
    world.put(LEDGER, ledger(total=41))
    world.next_round()
    assert world.batch_gets() == reads + 1  # the Ledger alone
    [finding] = world.stored().health[ORDERS].findings
    assert finding.message == "sum 40 here, 41 in Ledger Totals!B1: they differ by 1"


def test_keys_that_changed_on_the_other_side_make_the_next_round_read_the_dependent(world):
    check = CrossSheetCheck(range="Orders!A2:A", other="Ledger", other_range="Skus!A1:A", match="keys")
    cross_world(world, check)
    world.next_round()
    assert world.stored().health[ORDERS].changed_at is None
    mute_orders(world)
    world.put(LEDGER, ledger(skus=("A-1", "A-2", "A-4")))
    world.next_round()
    assert world.stored().health[ORDERS].changed_at is not None  # read by the next round it is in
    with world.session() as session:
        session.state.mutes.pop(ORDERS)
    world.next_round()
    [finding] = world.stored().health[ORDERS].findings
    assert finding.message == "1 of 4 keys are not in Ledger Skus!A1:A: 'A-3' (Orders!A4)"
    assert a1(finding.cells) == ("Orders!A4",)


def test_an_other_side_that_cannot_be_read_is_a_clear_finding(world):
    check = CrossSheetCheck(range="Orders!C2:C", other="Ledger", other_range="Totals!B1")
    cross_world(world, check)
    world.sandbox.google.faults.add({"spreadsheet": LEDGER, "statuses": [404], "repeat": True})
    world.next_round()
    world.next_round()  # the Ledger is dead-lettered by now, whichever was read first
    health = world.stored().health[ORDERS]
    [finding] = health.findings
    assert health.health == FAIL
    assert finding.message.startswith("cannot compare with Ledger Totals!B1: ")


def test_a_dependent_read_before_the_keys_it_compares_with_is_read_again_in_the_same_round(world):
    check = CrossSheetCheck(range="Orders!A2:A", other="Ledger", other_range="Skus!A1:A", match="keys")
    cross_world(world, check)
    world.put(LEDGER, ledger(skus=("A-1", "A-2", "A-4")))
    world.sandbox.google.faults.add({"spreadsheet": LEDGER, "statuses": [503]})  # read after the Orders
    world.next_round()
    [finding] = world.stored().health[ORDERS].findings
    assert finding.message == "1 of 4 keys are not in Ledger Skus!A1:A: 'A-3' (Orders!A4)"
    assert world.batch_gets() == 4  # Orders twice, the Ledger's 503 and its retry


def test_a_spreadsheet_removed_from_the_config_leaves_no_history_behind(world):
    watch_orders(world, ChangeCheck(range="Orders!A2:A", fail="< -30"))
    world.next_round()
    assert ORDERS in world.stored().history
    world.plans = []
    world.next_round()
    assert ORDERS not in world.stored().history
