"""Error cells with Google's details (monitor.checks.imports): computing, refused, or broken. Pure."""

from __future__ import annotations

import pytest

from monitor.checks.imports import (
    CellError,
    ambiguous_cell,
    import_findings,
    may_be_computing,
    refused_import,
)
from tests.refs import a1

IMPORT = '=IMPORTRANGE("https://docs.google.com/spreadsheets/d/1src", "Stock!A1:B9")'
FINANCE = '=GOOGLEFINANCE("NASDAQ:GOOG", "price")'
CONNECT = CellError("Stock!F2", "REF", "You need to connect these sheets.", IMPORT)
NO_ACCESS = CellError("Stock!G2", "REF", "You don't have permissions to access that sheet.", IMPORT)


@pytest.mark.parametrize("error", [CONNECT, NO_ACCESS])
def test_importranges_refusals_are_told_apart_from_computing(error):
    assert refused_import(error) and not may_be_computing(error)


@pytest.mark.parametrize("error", [
    CellError("Stock!F2", "N_A", "", IMPORT),
    CellError("Stock!F2", "REF", "Unable to load the source.", IMPORT),
    CellError("Stock!B2", "N_A", "When evaluating GOOGLEFINANCE, the query returned no data.",
              "=index(googlefinance(A2, \"close\", TODAY()-1), 2, 2)"),
])
def test_an_external_functions_na_or_ref_may_still_be_computing(error):
    assert may_be_computing(error) and not refused_import(error)


@pytest.mark.parametrize("error", [
    CellError("Stock!H2", "N_A", "Did not find value 'x' in VLOOKUP evaluation.", "=VLOOKUP(A2, B:C, 2)"),
    CellError("Stock!H3", "DIVIDE_BY_ZERO", "Function DIVIDE parameter 2 cannot be zero.", IMPORT),
    CellError("Stock!H4", "REF", "#REF!", None),  # typed, or a deleted reference
    CellError("Stock!H5", "REF", "You need to connect these sheets.", "=A1"),  # not an import
])
def test_other_errors_are_plain_formula_errors(error):
    assert not may_be_computing(error) and not refused_import(error)


def test_refused_imports_make_one_failing_finding_that_says_how_to_allow_access():
    [finding] = import_findings([CONNECT, CellError("Stock!A9", "N_A", "", FINANCE), NO_ACCESS])
    assert (finding.check_name, finding.kind, finding.status) == ("imports", "import_access", "fail")
    assert a1(finding.cells) == ("Stock!F2", "Stock!G2") and finding.observed == 2
    assert finding.message.startswith("Stock!F2 (and 1 more): IMPORTRANGE may not read its source "
                                      "(#REF! You need to connect these sheets.)")
    assert "click Allow access" in finding.message
    assert import_findings([CellError("Stock!A9", "N_A", "", FINANCE)]) == []


def test_the_function_is_found_in_any_case_and_nested():
    assert CellError("A!A1", "N_A", "", "=SUM(ImportRange(B1, \"A:A\"))").function == "IMPORTRANGE"
    assert CellError("A!A1", "N_A", "", "=IMPORTRANGEX(1)").function is None


def test_a_plain_read_shows_its_first_ambiguous_cell():
    ranges = {"Stock!A1:C3": {"range": "Stock!A1:C3", "values": [["SKU", 1], ["x", "#DIV/0!", "#N/A"]]},
              "Stock!F2:F": {"range": "Stock!F2:F1000", "values": [[1], ["#REF!"]]}}
    assert ambiguous_cell(ranges) == ("Stock!C2", "#N/A")
    assert ambiguous_cell({"Stock!A1": {"range": "Stock!A1", "values": [["#DIV/0!"]]}}) is None
    assert ambiguous_cell({"Stock!A1": {"range": "Stock!A1"}}) is None
