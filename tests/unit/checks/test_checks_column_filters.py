"""Row filters on the column checks: missing, duplicates and invalid judge the rows `where` passes,
its columns found in the table by header (or letter without a header row); and invalid leaves a
cell showing a formula's error to formula_errors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitor.checks import (
    DuplicatesCheck,
    FormulaErrorsCheck,
    InvalidCheck,
    MissingCheck,
    evaluate,
    evaluate_all,
    ranges_of,
)
from monitor.core.invalid_value import InvalidValue
from tests.refs import a1

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
TABLE = "Stock!A1:Z"
STOCK = {"range": "Stock!A1:Z1000", "majorDimension": "ROWS", "values": [
    ["SKU", "Supplier", "Qty", "Status"],
    ["A-1", "Mills", 5, "active"],
    ["A-2", "", -1, "gone"],
    ["A-1", "Volga", 7, "gone"],
    ["A-3", "", "7", "active"],
    ["A-3", "Mills", 3, "active"],
]}
ACTIVE = "Status = 'active'"


def judged(check):
    got = evaluate(check, STOCK, NOW)
    return got.status, got.message, a1(got.cells)


def test_missing_counts_only_the_rows_the_filter_passes():
    check = MissingCheck(range=TABLE, header_row=1, column="Supplier", where=ACTIVE)
    assert judged(check) == ("fail", "Supplier missing in 1 of 3 rows where Status = 'active' (33.3%): "
                                     "Stock!B5 (> 0)", ("Stock!B5",))
    unfiltered = MissingCheck(range=TABLE, header_row=1, column="Supplier")
    assert evaluate(unfiltered, STOCK, NOW).observed == 2


def test_duplicates_compare_only_the_rows_the_filter_passes():
    active = DuplicatesCheck(range=TABLE, header_row=1, column="SKU", where=ACTIVE)
    assert judged(active) == ("fail", "SKU repeated in 1 of 3 rows where Status = 'active' (33.3%): "
                                      "Stock!A6 = A5 (> 0)", ("Stock!A6",))
    gone = DuplicatesCheck(range=TABLE, header_row=1, column="SKU", where="Status = 'gone'")
    assert judged(gone)[:2] == ("ok", "SKU repeated in none of 2 rows where Status = 'gone'")


def test_invalid_judges_only_the_rows_the_filter_passes():
    check = InvalidCheck(range=TABLE, header_row=1, column="Qty", min=0,
                         where="Supplier = 'Mills' or Qty > 6")
    assert judged(check)[:2] == ("ok", "Qty invalid in none of 3 rows where Supplier = 'Mills' or Qty > 6")
    negative = InvalidCheck(range=TABLE, header_row=1, column="Qty", min=0, where="Status != 'active'")
    assert judged(negative)[2] == ("Stock!C3",)


def test_a_table_without_a_header_row_filters_by_letter():
    table = {"range": "Stock!A2:D1000", "values": STOCK["values"][1:]}
    check = MissingCheck(range="Stock!A2:D", column="B", where="D = 'active'")
    assert evaluate(check, table, NOW).observed == 1


def test_a_filter_column_the_table_lacks_is_the_finding():
    check = MissingCheck(range=TABLE, header_row=1, column="Supplier", where="Site = 'north'")
    assert judged(check) == ("fail", "column 'Site' not found in the header row (Stock!1:1); found: SKU, "
                                     "Supplier, Qty, Status", ("Stock!1:1",))


def test_the_filter_reads_nothing_more_than_the_table():
    checks = [MissingCheck(range=TABLE, header_row=1, column="Supplier", where=ACTIVE),
              DuplicatesCheck(range=TABLE, header_row=1, column="SKU", where="Qty > 0")]
    assert ranges_of(checks) == (TABLE,)
    assert [r.status for r in evaluate_all(checks, [STOCK], NOW)] == ["fail", "fail"]


@pytest.mark.parametrize(("fields", "problem"), [
    ({"column": "Supplier", "header_row": 1, "where": "Status ="},
     "bad filter 'Status =': a clause needs a column"),
    ({"column": "B", "where": "Status = 'active'"},
     "where 'Status' names a header, but the check has no header_row"),
    ({"column": "B", "range": "Stock!A1:D", "where": "F = 'active'"}, "where F is outside Stock!A1:D"),
])
def test_a_filter_that_cannot_work_is_refused_when_the_check_is_built(fields, problem):
    with pytest.raises(ValueError) as caught:
        MissingCheck(**{"range": TABLE, **fields})
    cause = caught.value.errors()[0]["ctx"]["error"]
    assert isinstance(cause, InvalidValue) and cause.problem.startswith(problem), cause


def test_a_filtered_column_check_says_so_in_its_sentence_and_is_written_back():
    check = MissingCheck(range=TABLE, header_row=1, column="Supplier", where=ACTIVE, fail="> 5%")
    assert check.explain() == ("fails when Supplier of Stock!A1:Z is blank in more than 5% of the rows "
                               "where Status = 'active'")
    assert check.as_written()["where"] == ACTIVE
    assert MissingCheck(**{k: v for k, v in check.as_written().items() if k != "kind"}) == check


def test_invalid_leaves_a_cell_showing_a_formula_error_to_formula_errors():
    table = {"range": "Stock!A1:B1000", "values": [["SKU", "Price"], ["A-1", 5], ["A-2", "#N/A"],
                                                   ["A-3", " #DIV/0! "], ["A-4", "n.a."]]}
    checks = [FormulaErrorsCheck(range="Stock!A1:B"),
              InvalidCheck(range="Stock!A1:B", header_row=1, column="Price", format="number")]
    errors, invalid = evaluate_all(checks, [table], NOW)
    assert a1(errors.cells) == ("Stock!B3", "Stock!B4")
    assert (invalid.observed, a1(invalid.cells)) == (1, ("Stock!B5",))
    # Text that only mentions an error code is still a value to judge.
    written = {**table, "values": [["SKU", "Price"], ["A-1", "see #N/A"]]}
    assert evaluate(checks[1], written, NOW).observed == 1
