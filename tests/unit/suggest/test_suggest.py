"""The suggested checks, from workbooks written by hand: what each kind of column proposes, the
bounds never tighter than today's values pass, and the TOML a config loads."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime, timedelta

import pytest
from suggest_catching import BASE_CONFIG

from monitor.checks import evaluate_all, health_of
from monitor.config import load_config
from monitor.core.a1 import parse_a1
from monitor.suggest import (
    Dated,
    TabValues,
    Workbook,
    check_models,
    propose,
    propose_all,
    render_toml,
    templates,
)
from monitor.suggest import survey as survey_of

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
EPOCH = datetime(1899, 12, 30, tzinfo=UTC)


def serial(moment: datetime) -> Dated:
    return Dated((moment - EPOCH) / timedelta(days=1))


def stock_rows(quantities=(12, 40, 7), newest=timedelta(hours=2)) -> list[tuple]:
    rows = [("SKU", "Supplier", "Quantity", "Updated")]
    for n, quantity in enumerate(quantities):
        rows.append((f"SKU-{n:03d}", "Volga", quantity, serial(NOW - newest - timedelta(days=n))))
    return rows


def workbook(*tabs: tuple[str, list], sheet_id: str = "1" + "a" * 43, title: str = "Store 1") -> Workbook:
    return Workbook(sheet_id, title, "UTC", tuple(TabValues(name, tuple(rows)) for name, rows in tabs))


def proposal_of(*books: Workbook):
    [group] = templates([survey_of(book, NOW, UTC) for book in books])
    return propose(group, "suggested")


def by_kind(proposal) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for suggested in proposal.checks:
        found.setdefault(suggested.check["kind"], []).append(suggested.check)
    return found


def judged(book: Workbook, proposal) -> list:
    """The proposal's checks over ``book``'s values, as a batchGet of their ranges would answer."""
    tabs = {tab.title: tab for tab in book.tabs}
    ranges = {}
    for check in check_models(proposal):
        if check.range not in ranges:
            ranges[check.range] = _value_range(tabs, check.range)
    return evaluate_all(check_models(proposal), ranges, NOW + timedelta(minutes=5), UTC)


def _value_range(tabs, text: str) -> dict:
    r = parse_a1(text)
    rows = tabs[r.sheet].rows[r.start_row - 1:]
    cut = [list(row[r.start_col - 1:r.end_col]) for row in rows]
    while cut and not cut[-1]:
        cut.pop()
    return {"range": text, "values": [[float(v) if isinstance(v, Dated) else v for v in row] for row in cut]}


def test_a_table_proposes_its_headers_rows_key_completeness_freshness_and_bounds():
    proposal = proposal_of(workbook(("Stock", stock_rows())))
    kinds = by_kind(proposal)
    [headers] = kinds["headers"]
    assert headers == {"kind": "headers", "range": "Stock!A1:D", "header_row": 1,
                       "required": ["SKU", "Supplier", "Quantity", "Updated"]}
    assert kinds["formula_errors"] == [{"kind": "formula_errors", "range": "Stock!A1:D"}]
    assert kinds["not_empty"] == [{"kind": "not_empty", "range": "Stock!A2:D"}]
    assert kinds["change"] == [{"kind": "change", "range": "Stock!A2:D", "fail": "< -30"}]
    assert [check["column"] for check in kinds["duplicates"]] == ["SKU"]  # Supplier repeats
    assert [check["column"] for check in kinds["missing"]] == ["SKU", "Supplier", "Quantity", "Updated"]
    [fresh] = kinds["freshness"]
    assert fresh == {"kind": "freshness", "range": "Stock!D2:D", "warn": "> 1d", "fail": "> 3d"}
    hard, usual = kinds["invalid"]
    assert (hard["name"], hard["min"], hard["max"]) == ("Quantity bounds (Stock)", 0, 500)
    assert (usual["name"], usual["min"], usual["max"], usual["severity"]) == (
        "Quantity usual range (Stock)", 5, 100, "warn")
    saw = {s.check["kind"]: s.saw for s in proposal.checks}
    assert saw["freshness"] == "column 'Updated' holds dates, newest 2 h ago: freshness warn > 1d, fail > 3d"


def test_the_proposal_passes_the_data_it_came_from():
    books = [workbook(("Stock", stock_rows(quantities, newest)))
             for quantities, newest in (((1, 2, 3), timedelta(minutes=5)), ((0.5, 900, 3), timedelta(days=3)),
                                        ((-4, 10), timedelta(hours=20)))]
    proposal = proposal_of(*books)
    for book in books:
        results = judged(book, proposal)
        assert health_of(results) == "ok", [r.message for r in results if r.status != "ok"]


@pytest.mark.parametrize(("low", "high", "hard", "usual"), [
    (5, 480, (0, 5000), (5, 1000)),
    (39.5, 1490, (0, 20000), (20, 5000)),
    (-3, 7, (-50, 100), (-10, 20)),
    (0, 0.3, (0, 5), (None, 1)),
])
def test_bounds_are_round_figures_outside_what_the_values_show(low, high, hard, usual):
    rows = [("Item", "Amount"), ("a", low), ("b", high)]
    invalid = by_kind(proposal_of(workbook(("T", rows))))["invalid"]
    assert (invalid[0]["min"], invalid[0]["max"]) == hard
    assert (invalid[1].get("min"), invalid[1].get("max")) == usual


def test_dates_ahead_of_now_or_long_past_propose_no_freshness():
    ahead = [("Task", "Due"), ("a", serial(NOW + timedelta(days=3))), ("b", serial(NOW))]
    old = [("Task", "Done"), ("a", serial(NOW - timedelta(days=400))),
           ("b", serial(NOW - timedelta(days=500)))]
    for rows, said in ((ahead, "newest ahead of now"), (old, "newest 400 d old")):
        proposal = proposal_of(workbook(("T", rows)))
        assert "freshness" not in by_kind(proposal)
        assert any(said in note for note in proposal.notes), proposal.notes


def test_a_tab_without_a_header_row_is_checked_for_formula_errors_only():
    notes = [("Manager", "A. Ivanova"), ("Note", "Stock count on Mondays")]
    proposal = proposal_of(workbook(("Notes", notes)))
    assert [s.check for s in proposal.checks] == [{"kind": "formula_errors", "range": "Notes!A1:B"}]
    assert "tab 'Notes' has no header row" in proposal.notes[0]


def test_a_header_below_a_title_row_and_right_of_column_a_is_found():
    rows = [("Stock report",), (), ("", "SKU", "Qty"), ("", "A-1", 3), ("", "A-2", 4)]
    kinds = by_kind(proposal_of(workbook(("Stock", rows))))
    assert kinds["headers"][0]["range"] == "Stock!B3:C" and kinds["headers"][0]["header_row"] == 3
    assert kinds["formula_errors"] == [{"kind": "formula_errors", "range": "Stock!A1:C"}]


def test_formula_errors_seen_today_are_proposed_switched_off():
    rows = [*stock_rows(), ("SKU-009", "#REF!", 3, serial(NOW))]
    proposal = proposal_of(workbook(("Stock", rows)))
    [errors] = [s for s in proposal.checks if s.check["kind"] == "formula_errors"]
    assert not errors.enabled and "1 cell show a formula error today (B5)" in errors.saw
    assert "formula_errors" not in {check.kind for check in check_models(proposal)}
    text = render_toml([proposal], "heading")
    assert '  # { kind = "formula_errors", range = "Stock!A1:D" },' in text
    # The column with an error is not complete text: no bounds or key are read into it.
    assert "Supplier" not in {c.get("column") for c in by_kind(proposal).get("duplicates", [])}


def test_a_blank_or_a_missing_word_today_drops_its_column_from_the_missing_checks():
    rows = [("SKU", "Note"), ("A-1", ""), ("A-2", "n/a"), ("A-3", "ok")]
    proposal = proposal_of(workbook(("T", rows)))
    assert [c["column"] for c in by_kind(proposal)["missing"]] == ["SKU"]
    assert any("column 'Note' of 'T' is blank in some rows" in note for note in proposal.notes)


def test_spreadsheets_of_two_templates_get_two_profiles_and_a_catalogue_a_cross_sheet_check():
    catalogue = workbook(("Items", [("SKU", "Name"), *((f"SKU-{n:03d}", f"Item {n}") for n in range(10))]),
                         sheet_id="1" + "c" * 43, title="Catalogue")
    stores = [workbook(("Stock", stock_rows()), sheet_id=f"1{n}" + "s" * 42, title=f"Store {n}")
              for n in range(2)]
    groups = templates(survey_of(book, NOW, UTC) for book in [*stores, catalogue])
    first, second = propose_all(groups, "shop")
    assert (first.profile, second.profile) == ("shop", "shop_2")
    assert [title for _, title in first.sheets] == ["Store 0", "Store 1"]
    [cross] = by_kind(first)["cross_sheet"]
    assert cross == {"kind": "cross_sheet", "range": "Stock!A2:A", "other": "Catalogue",
                     "other_range": "Items!A2:A", "match": "keys"}
    assert "cross_sheet" not in by_kind(second)  # the catalogue holds more keys than any store


def test_the_toml_loads_as_a_config(tmp_path):
    # Two tabs with columns of one header: their checks' names stay apart.
    book = workbook(("Stock", stock_rows()), ("Notes", [("a", "b")]), ("Store 2", stock_rows()))
    proposal = proposal_of(book)
    text = render_toml([proposal], "Suggested\nsecond line")
    assert text.startswith("# Suggested\n# second line\n")
    parsed = tomllib.loads(text)
    assert parsed["sheets"] == [{"id": book.id, "name": "Store 1", "profile": "suggested"}]
    path = tmp_path / "monitor.toml"
    path.write_text(BASE_CONFIG + text)
    config = load_config(path, {}, require_secrets=False)
    assert config.sheets[0].checks == check_models(proposal)
