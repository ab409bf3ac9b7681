"""Averages, distinct counts, percentiles, row filters, severity and owner, and each check's sentence."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from paths import REPO
from pydantic import ValidationError

from monitor.checks import (
    FormulaErrorsCheck,
    FreshnessCheck,
    NotEmptyCheck,
    RowCountCheck,
    ThresholdCheck,
    evaluate,
    evaluate_all,
    ranges_of,
)
from monitor.checks.columns import Table
from monitor.checks.where import parse_where
from tests.refs import a1

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def column(range_: str, *values) -> dict:
    """A one-column ValueRange as Google sends it (rows major; trailing empty rows trimmed)."""
    rows = [[value] if value is not None else [] for value in values]
    return {"range": range_, "majorDimension": "ROWS", "values": rows}


def threshold(aggregate: str, **written) -> ThresholdCheck:
    return ThresholdCheck(range="Stock!F2:F", aggregate=aggregate, **written)


QTY = column("Stock!F2:F1000", 10, 20, "n/a", 30, 40)


def test_avg_is_the_mean_of_the_numbers_only():
    got = evaluate(threshold("avg", warn="< 30"), QTY, NOW)
    assert (got.status, got.observed, got.message) == ("warn", 25, "avg 25 < 30 (1 non-numeric cell ignored)")


def test_distinct_counts_values_as_people_see_them():
    sku = column("Stock!A2:A1000", "A-1", "A-1 ", "B-2", 5, 5.0, "")
    got = evaluate(ThresholdCheck(range="Stock!A2:A", aggregate="distinct", fail="< 4"), sku, NOW)
    assert (got.status, got.observed, got.message) == ("fail", 3, "distinct 3 < 4")


def test_percentile_interpolates_like_the_spreadsheet_percentile_function():
    # =PERCENTILE({10,20,30,40}, 0.9) is 37 in Google Sheets: rank 0.9 * 3 = 2.7 between 30 and 40.
    got = evaluate(threshold("percentile", percentile=90, fail="> 36"), QTY, NOW)
    assert (got.status, got.observed) == ("fail", pytest.approx(37))
    assert got.message.startswith("p90 37 > 36")
    assert a1(got.cells) == ("Stock!F6",)  # the numbers beyond the bound
    assert got.check_name == "threshold p90 Stock!F2:F"


def test_percentile_of_no_numbers_is_reported_at_the_most_severe_level():
    got = evaluate(threshold("percentile", percentile=50, warn="> 1"), column("Stock!F2:F1000"), NOW)
    assert (got.status, got.message) == ("warn", "no p50: the range is empty")


def test_percentile_needs_its_level_and_only_with_that_aggregate():
    with pytest.raises(ValidationError, match="percentile = 95"):
        threshold("percentile", fail="> 1")
    with pytest.raises(ValidationError, match='write aggregate = "percentile"'):
        threshold("avg", percentile=95, fail="> 1")
    with pytest.raises(ValidationError, match="less than or equal to 100"):
        threshold("percentile", percentile=101, fail="> 1")


# --- row filters ---------------------------------------------------------------------------------


STATUS = column("Stock!C2:C1000", "active", "paused", "active", "", "active")
FILTERED = threshold("min", fail="< 25", where="C = 'active'")


def test_a_filter_reads_its_column_over_the_checks_rows_in_the_same_batch():
    assert FILTERED.where_ranges == ("Stock!C2:C",)
    assert ranges_of([FILTERED, threshold("max", fail="> 1")]) == ("Stock!F2:F", "Stock!C2:C")


def test_a_filter_keeps_the_check_to_the_matching_rows():
    # Rows 2, 4, 6 are active: 10, "n/a", 40. Row 3's 20 is paused, so it does not count.
    got = evaluate_all([FILTERED], [QTY, STATUS], NOW)[0]
    assert (got.status, got.observed, a1(got.cells)) == ("fail", 10, ("Stock!F2",))
    assert got.message == "min 10 < 25 (1 non-numeric cell ignored) in rows where C = 'active'"
    inactive = threshold("min", fail="< 25", where="C != 'active'")
    got = evaluate_all([inactive], [QTY, column("Stock!C2:C1000", "active", "active", "active")], NOW)[0]
    # Rows 5 and 6 have no status: not 'active', so they count (30, 40).
    assert (got.status, got.observed) == ("ok", 30)


def test_filters_compare_numbers_lists_and_text():
    rows = {2: "active", 3: 7, 4: "urgent: call", 5: None}

    def passing(text: str) -> set[int]:
        return parse_where(text)._passing(rows, {c: rows for c in parse_where(text).columns})

    assert passing("C > 5") == {3}
    assert passing("C in ('active', 7)") == {2, 3}
    assert passing("C contains 'urgent'") == {4}
    assert passing("C = 'active' or C = 7 and C >= 7") == {2, 3}
    assert passing("C = 'Active'") == set()  # as written, case and all
    assert passing("C != 7") == {2, 4, 5}


def test_a_filter_on_a_table_finds_its_columns_by_header():
    table = Table.read({"range": "Stock!A1:C4", "values": [["SKU", "Unit price", "Status"],
                                                             ["A", 5, "active"], ["B", 7, "paused"],
                                                             ["C", 9, "active"]]}, header_row=1)
    assert parse_where("Status = 'active' and \"Unit price\" > 6").rows_in(table) == {4}


@pytest.mark.parametrize(("text", "problem"), [
    ("C = active", "'active' is not a value"),
    ("C ~ 'x'", "cannot read"),
    ("C > 'x'", "> compares numbers"),
    ("C = 'a' xor D = 1", "expected and / or"),
    ("C in 'a'", "in takes a list"),
    ("C in ('a', 'b'", "not closed"),
    ("C contains 5", "contains takes a quoted text"),
    ("C =", "a clause needs"),
    ("", "an empty filter"),
])
def test_a_filter_that_does_not_parse_says_what_is_wrong(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_where(text)


def test_a_plain_range_filters_by_letter_and_never_by_a_header():
    with pytest.raises(ValidationError, match=r"where names 'Status', but Stock!F2:F has no header row"):
        threshold("min", fail="< 0", where="Status = 'active'")
    with pytest.raises(ValidationError, match="named range"):
        ThresholdCheck(range="Stock!Quantities", aggregate="min", fail="< 0", where="C = 'a'")


def test_a_filter_round_trips_as_written():
    written = threshold("avg", fail="< 1", where="C in ('a', 2) or D <= 3").as_written()
    assert written["where"] == "C in ('a', 2) or D <= 3"
    assert ThresholdCheck(**written).where == parse_where("C in ('a', 2) or D <= 3")


# --- severity and owner --------------------------------------------------------------------------


def test_severity_warn_caps_a_failure_and_the_owner_goes_with_the_result():
    check = threshold("min", fail="< 15", severity="warn", owner="@olga")
    got = evaluate(check, QTY, NOW)
    assert (got.status, got.owner) == ("warn", "@olga")
    assert got.message == "min 10 < 15 (1 non-numeric cell ignored)"
    assert got.to_dict()["owner"] == "@olga"
    assert evaluate(threshold("min", fail="< 15"), QTY, NOW).owner is None


def test_a_severity_or_owner_that_is_not_one_is_refused():
    with pytest.raises(ValidationError, match="'fail' or 'warn'"):
        threshold("min", fail="< 0", severity="critical")
    with pytest.raises(ValidationError, match="at most 64 characters"):
        threshold("min", fail="< 0", owner="")


# --- explanations --------------------------------------------------------------------------------


@pytest.mark.parametrize(("check", "sentence"), [
    (threshold("min", fail="< 0"), "fails when Stock!F2:F has a value below 0"),
    (threshold("min", fail="< 0", warn="< 5"),
     "fails when Stock!F2:F has a value below 0; warns when Stock!F2:F has a value below 5"),
    (threshold("min", fail="< 0", warn="< 5", severity="warn"),
     "warns when Stock!F2:F has a value below 0, or when Stock!F2:F has a value below 5"),
    (threshold("max", warn=">= 100"), "warns when Stock!F2:F has a value at least 100"),
    (threshold("sum", fail="!= 0"), "fails when the sum of Stock!F2:F is not 0"),
    (threshold("avg", fail="< 3", where="C = 'active'"),
     "fails when the average of the numbers in Stock!F2:F (rows where C = 'active') is below 3"),
    (threshold("percentile", percentile=95, fail="> 500"),
     "fails when the 95th percentile of the numbers in Stock!F2:F is above 500"),
    (threshold("distinct", fail="< 2"), "fails when the number of distinct values in Stock!F2:F is below 2"),
    (threshold("count", fail="== 0"), "fails when the number of non-empty cells in Stock!F2:F is 0"),
    (threshold("value", fail="<= 0"), "fails when the first value of Stock!F2:F is at most 0"),
    (RowCountCheck(range="Stock!A2:A", min=10, max=500),
     "fails when Stock!A2:A has fewer than 10 or more than 500 non-empty rows"),
    (NotEmptyCheck(range="Stock!A2:A", where="C = 'active'"),
     "fails when Stock!A2:A (rows where C = 'active') has no non-empty row"),
    (FormulaErrorsCheck(range="Stock!A1:H"),
     "fails when a cell of Stock!A1:H shows a formula error (#REF!, #N/A, #DIV/0!, #VALUE!...)"),
    (FreshnessCheck(range="Log!A2:A", warn="> 2h", fail="> 1d"),
     "fails when the newest date in Log!A2:A is older than 1d; warns when the newest date in Log!A2:A "
     "is older than 2h"),
    (FreshnessCheck(source="modified_time", fail=">= 3d"),
     "fails when the file was last modified at least 3d ago"),
])
def test_each_check_explains_itself_in_a_sentence(check, sentence):
    assert check.explain() == sentence


def test_the_configuration_guides_examples_say_what_their_checks_explain():
    """Each example check in docs/configuration.md is preceded by the sentence its check gives."""
    import tomllib

    from monitor.checks import CHECK_KINDS

    lines = (REPO / "docs" / "configuration.md").read_text().splitlines()
    pairs = [(said.removeprefix("# "), written) for said, written in zip(lines, lines[1:], strict=False)
             if said.startswith(("# fails when", "# warns when")) and written.startswith("{ kind")]
    assert len(pairs) >= 6
    for said, written in pairs:
        table = tomllib.loads(f"check = {written}")["check"]
        assert CHECK_KINDS[table["kind"]].model_validate(table).explain() == said


def test_a_bad_filter_or_severity_is_refused_at_load_with_its_line_and_fix(tmp_path):
    from config_fixtures import FULL, error_of, secrets_folder

    folder = secrets_folder(tmp_path)
    written = 'aggregate = "min", warn = "< 5"'
    message = error_of(folder, FULL.replace(written, written + ', where = "C = active", severity = "high"'))
    line = FULL.splitlines().index(next(x for x in FULL.splitlines() if written in x)) + 1
    assert f"monitor.toml:{line}: profiles.stock.checks[2].where: bad filter 'C = active': 'active' is " \
           "not a value" in message
    assert "fix: write a column, an operator and a value" in message
    assert "profiles.stock.checks[2].severity: 'high' is not allowed" in message


def test_a_kind_without_its_own_sentence_still_has_one():
    from typing import Literal

    from monitor.checks.base import CheckBase as _CheckBase
    from monitor.checks.explain import condition_text
    from monitor.checks.fields import A1Text

    class SpellingCheck(_CheckBase):
        kind: Literal["spelling"] = "spelling"
        range: A1Text

    check = SpellingCheck(range="Notes!A:A", severity="warn")
    assert check.explain() == "warns when its spelling check of Notes!A:A does not pass"
    assert condition_text(check) == "spelling (severity warn: never fails)"


def test_change_and_cross_sheet_checks_measure_averages_and_distinct_counts_as_the_threshold_does():
    from monitor.checks.aggregates import metric_of
    from monitor.checks.kinds.change import ChangeCheck

    sku = column("Stock!A2:A1000", "A-1", "A-1 ", "B-2", 5, 5.0)
    assert metric_of("distinct", sku) == evaluate(threshold("distinct", fail="< 0"), sku, NOW).observed == 3
    assert metric_of("avg", QTY) == evaluate(threshold("avg", fail="< 0"), QTY, NOW).observed == 25
    with pytest.raises(ValidationError, match="'row_count', 'min'"):
        ChangeCheck(range="Stock!F2:F", aggregate="percentile", fail="< -40")


def test_values_missing_for_a_filters_column_are_an_error_not_an_empty_filter():
    with pytest.raises(KeyError, match="no values were read for range 'Stock!C2:C' of"):
        evaluate_all([FILTERED], {"Stock!F2:F": QTY}, NOW)
