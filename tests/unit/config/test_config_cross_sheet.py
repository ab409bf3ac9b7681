"""Cross-sheet checks at load: the other spreadsheet named by id or name, the range it lends added to
its own batchGet, mistakes told with place and fix; and what check-config counts for them."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_fixtures import FULL, SHEET_A, SHEET_B, error_of, load, secrets_folder
from paths import REPO

from monitor import admin
from monitor.config.model import Lend

AGREES = ('[{ kind = "cross_sheet", range = "Sales!B2:B", other = "Store 014", '
          'other_range = "Stock!F2:F", name = "sales match stock" }]')


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


def with_cross(other: str = "Store 014") -> str:
    return FULL.replace(
        'checks = [{ kind = "threshold", range = "Sales!B2:B", aggregate = "sum", fail = "== 0" }]',
        "checks = " + AGREES.replace('"Store 014"', f'"{other}"'))


def test_the_other_spreadsheet_named_by_name_lends_its_range_to_its_own_batch_get(folder):
    config = load(folder, with_cross())
    plain = load(folder, FULL)
    store, sales = config.sheets_by_id[SHEET_A], config.sheets_by_id[SHEET_B]
    assert dict(sales.others) == {"sales match stock": SHEET_A}
    assert store.lends == (Lend("Stock!F2:F", "sum"),)
    assert store.ranges == plain.sheets_by_id[SHEET_A].ranges  # Stock!F2:F was read already
    assert store.fingerprint != plain.sheets_by_id[SHEET_A].fingerprint  # read again, to lend it
    cross = admin.config_plan(config)["cross_sheet"]
    assert cross == {"checks": 1, "ranges_lent": 1, "extra_reads_per_round": 0,
                     "reads_per_change_of_keys": 0}


def test_the_other_spreadsheet_may_be_named_by_id(folder):
    config = load(folder, with_cross(SHEET_A))
    assert dict(config.sheets_by_id[SHEET_B].others) == {"sales match stock": SHEET_A}


def test_an_other_spreadsheet_not_in_the_config_is_an_error_with_place_and_fix(folder):
    text = with_cross("Store 999")
    message = error_of(folder, text)
    line = text[:text.index('other = "Store 999"')].count("\n") + 1
    assert f"monitor.toml:{line}: sheets[1].checks[0].other:" in message  # the check's own line
    assert "other spreadsheet 'Store 999' is not in the config" in message
    assert "add it to [[sheets]]" in message


def test_a_cross_sheet_check_on_its_own_spreadsheet_is_an_error(folder):
    message = error_of(folder, with_cross(SHEET_B))
    assert "compares with another spreadsheet, not its own" in message


def test_the_guide_s_examples_of_change_header_cross_sheet_and_anomaly_checks_are_valid_checks():
    import re
    import tomllib

    from monitor.checks import CHECK_KINDS

    guide = (REPO / "docs/configuration.md").read_text()
    section = guide[guide.index("### Change over time"):guide.index("### Time zones")]
    blocks = re.findall(r"```toml\n(.*?)```", section, re.S)
    checks = [check for block in blocks for check in tomllib.loads(block)["checks"]]
    kinds = [CHECK_KINDS[check["kind"]].model_validate(check).kind for check in checks]
    assert sorted(set(kinds)) == ["anomaly", "change", "cross_sheet", "headers_changed"]


def test_a_linked_spreadsheet_keeps_every_other_field_as_it_was(folder):
    """The link is built field by field (faster than ``dataclasses.replace``): a field added to
    ``Sheet`` and not copied there would be lost for every spreadsheet with a cross-sheet check."""
    from dataclasses import fields, replace

    from monitor.config.cross import _linked

    sheet = replace(load(folder, FULL).sheets_by_id[SHEET_A], owner="@anna", always_read=True)
    lends = (Lend("Stock!Z2:Z", "sum"),)
    linked = _linked(sheet, (("sales match stock", SHEET_B),), lends)
    changed = {"others", "lends", "ranges", "fingerprint"}
    assert {field.name for field in fields(sheet)} - changed == {
        "id", "name", "profile", "tags", "checks", "origin", "needs_modified_time", "max_age", "always_read",
        "owner"}
    assert all(getattr(linked, field.name) == getattr(sheet, field.name) for field in fields(sheet)
               if field.name not in changed)
    assert linked.lends == lends and "Stock!Z2:Z" in linked.ranges
