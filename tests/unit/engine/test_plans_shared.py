"""Plans share what identical spreadsheets share: one ``Linked`` for the same cross-sheet links."""

from __future__ import annotations

from dataclasses import replace

import pytest
from config_fixtures import FULL, SHEET_A, SHEET_B, load, secrets_folder

from monitor.engine.history import NO_LINKS
from monitor.engine.inspect import SheetPlan, plans_of

CROSS = ('[{ kind = "cross_sheet", range = "Sales!B2:B", other = "Store 014", '
         'other_range = "Stock!F2:F", name = "sales match stock" }]')


@pytest.fixture
def config(tmp_path):
    text = FULL.replace(
        'checks = [{ kind = "threshold", range = "Sales!B2:B", aggregate = "sum", fail = "== 0" }]',
        "checks = " + CROSS)
    return load(secrets_folder(tmp_path), text)


def test_each_plan_has_its_links_and_a_plan_without_any_the_one_empty_links(config, tmp_path):
    plans = {plan.id: plan for plan in plans_of(config)}
    assert dict(plans[SHEET_B].links.others) == {"sales match stock": SHEET_A}
    assert plans[SHEET_B].links.lends == ()
    assert [lend.range for lend in plans[SHEET_A].links.lends] == ["Stock!F2:F"]
    assert SheetPlan.of(load(secrets_folder(tmp_path / "plain"), FULL).sheets[0], config).links is NO_LINKS
    assert not hasattr(plans[SHEET_A], "__dict__")  # slotted: one plan per spreadsheet


def test_spreadsheets_with_the_same_links_share_one(config):
    sales = config.sheets_by_id[SHEET_B]
    twin = replace(sales, id="1twin".ljust(44, "x"), name="Store 015")
    shared: dict = {}
    first, second = SheetPlan.of(sales, config, shared), SheetPlan.of(twin, config, shared)
    assert first.links is second.links
    assert SheetPlan.of(config.sheets_by_id[SHEET_A], config, shared).links is not first.links
    assert first.links == SheetPlan.of(sales, config).links  # as one made on its own
