"""The column checks: headers, missing, duplicates and invalid over a table read by header."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitor.checks import (
    DuplicatesCheck,
    HeadersCheck,
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


def vr(values, range_: str = "Stock!A1:Z1000") -> dict:
    return {"range": range_, "majorDimension": "ROWS", "values": values}


STOCK = vr([
    ["SKU", "Email", "Qty", "Status", "Site"],
    ["A-1", "ann@shop.example", 5, "active", "https://shop.example/a1"],
    ["A-2", "bob@", -1, "n/a", "shop.example"],
    ["A-1", "", 7, "gone"],
    ["A-3", "cy@shop.example", "7", "active"],
    ["A-2", "di@shop.example", 3, " N/A "],
])


def judged(check):
    got = evaluate(check, STOCK, NOW)
    return got.status, got.message, got.observed, a1(got.cells)


# --- missing -----------------------------------------------------------------------------------


def test_missing_counts_blank_cells_and_the_configured_missing_values():
    check = MissingCheck(range=TABLE, header_row=1, column="Status", missing_values=["n/a"])
    assert judged(check) == ("fail", "Status missing in 2 of 5 rows (40%): Stock!D3, Stock!D6 (> 0)", 2,
                             ("Stock!D3", "Stock!D6"))
    blank_only = MissingCheck(range=TABLE, header_row=1, column="Email")
    assert judged(blank_only)[:3] == ("fail", "Email missing in 1 of 5 rows (20%): Stock!B4 (> 0)", 1)


def test_missing_percentages_choose_between_warn_and_fail():
    check = MissingCheck(range=TABLE, header_row=1, column="Email", warn="> 10%", fail="> 50%")
    assert judged(check)[:2] == ("warn", "Email missing in 1 of 5 rows (20%): Stock!B4 (> 10%)")
    quiet = MissingCheck(range=TABLE, header_row=1, column="Email", fail="> 1")
    assert judged(quiet)[0] == "ok"


def test_a_column_that_moved_is_still_found_and_one_that_vanished_fails():
    moved = vr([["Status", "SKU"], ["", "A-1"]])
    check = MissingCheck(range=TABLE, header_row=1, column="Status")
    assert a1(evaluate(check, moved, NOW).cells) == ("Stock!A2",)
    gone = evaluate(check, vr([["SKU", "State"], ["A-1", "x"]]), NOW)
    assert (gone.status, gone.message, a1(gone.cells)) == (
        "fail", "column 'Status' not found in the header row (Stock!1:1); found: SKU, State", ("Stock!1:1",))


def test_an_empty_table_has_nothing_missing():
    check = MissingCheck(range=TABLE, header_row=1, column="Qty", fail="> 5%")
    got = evaluate(check, vr([["Qty"]]), NOW)
    assert (got.status, got.message) == ("ok", "Qty missing in none of 0 rows")


# --- duplicates --------------------------------------------------------------------------------


def test_duplicates_name_each_repeated_row_and_the_row_it_repeats():
    check = DuplicatesCheck(range=TABLE, header_row=1, column="SKU")
    assert judged(check) == ("fail", "SKU repeated in 2 of 5 rows (40%): Stock!A4 = A2, Stock!A6 = A3 (> 0)",
                             2, ("Stock!A4", "Stock!A6"))


def test_duplicates_over_several_key_columns_need_the_whole_key_to_repeat():
    check = DuplicatesCheck(range=TABLE, header_row=1, columns=["SKU", "Qty"])
    assert judged(check)[:2] == ("ok", "SKU + Qty repeated in none of 5 rows")
    table = vr([["SKU", "Site"], ["A", "x"], ["A", "y"], ["A", "x"], ["", ""]])
    got = evaluate(DuplicatesCheck(range=TABLE, header_row=1, columns=["SKU", "Site"]), table, NOW)
    assert got.message == "SKU + Site repeated in 1 of 3 rows (33.3%): row 4 = row 2 (> 0)"


def test_numbers_written_differently_are_one_key_and_blank_keys_are_no_duplicates():
    table = vr([["Id"], [5], [5.0], [""], [" "], ["x"]])
    got = evaluate(DuplicatesCheck(range=TABLE, header_row=1, column="Id"), table, NOW)
    assert (got.observed, a1(got.cells)) == (1, ("Stock!A3",))


# --- invalid -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("rules", "expected"), [
    ({"column": "Email", "format": "email"},
     "Email invalid in 1 of 5 rows (20%): Stock!B3 'bob@' (not an e-mail) (> 0)"),
    ({"column": "Qty", "min": 0},
     "Qty invalid in 2 of 5 rows (40%): Stock!C3 -1 (below min 0), Stock!C5 '7' (not a number) (> 0)"),
    ({"column": "Status", "valid_values": ["active", "gone"], "missing_values": ["n/a"]},
     "Status invalid in none of 5 rows"),
    ({"column": "Site", "format": "url"},
     "Site invalid in 1 of 5 rows (20%): Stock!E3 'shop.example' (not an http(s) URL) (> 0)"),
    ({"column": "SKU", "regex": r"A-\d", "max_length": 3}, "SKU invalid in none of 5 rows"),
    ({"column": "SKU", "regex": r"A-[12]"},
     "SKU invalid in 1 of 5 rows (20%): Stock!A5 'A-3' (does not match regex) (> 0)"),
    ({"column": "Email", "min_length": 5},
     "Email invalid in 1 of 5 rows (20%): Stock!B3 'bob@' (shorter than 5) (> 0)"),
])
def test_invalid_values_name_the_cell_the_value_and_the_rule_broken(rules, expected):
    assert evaluate(InvalidCheck(range=TABLE, header_row=1, **rules), STOCK, NOW).message == expected


@pytest.mark.parametrize(("format_", "good", "bad"), [
    ("email", ["a.b@c.example"], ["a@b", "a b@c.de", 5]),
    ("phone", ["+1 (555) 010-2000", 4955550100], ["12-34", "call me", "+1 555 0100 0100 0100 0"]),
    ("date", [46027, "2026-01-05", "05.01.2026"], ["tomorrow", "2026-13-45"]),
    ("number", [5, -2.5], ["5", True]),
    ("url", ["https://example.org/x"], ["example.org", "ftp://example.org", "http://localhost"]),
])
def test_each_format_accepts_what_people_type_and_refuses_what_they_paste_by_mistake(format_, good, bad):
    values = [["V"], *([value] for value in [*good, *bad])]
    got = evaluate(InvalidCheck(range=TABLE, header_row=1, column="V", format=format_), vr(values), NOW)
    assert got.observed == len(bad)


def test_the_most_refs_a_message_names_and_the_rest_counted():
    table = vr([["Qty"], *([-n] for n in range(1, 13))])
    got = evaluate(InvalidCheck(range=TABLE, header_row=1, column="Qty", min=0, warn="> 0"), table, NOW)
    assert got.status == "warn" and "and 9 more (> 0)" in got.message and len(got.cells) == 10


# --- headers -----------------------------------------------------------------------------------


def test_headers_as_expected_are_ok():
    check = HeadersCheck(range=TABLE, header_row=1, required=["SKU", "qty"], order=["SKU", "Status"],
                         positions={"Email": "B"}, forbidden=["Price"])
    assert judged(check)[:2] == ("ok", "headers as expected: SKU, Email, Qty, Status, Site")


def test_a_header_the_check_names_written_twice_is_a_finding():
    check = HeadersCheck(range=TABLE, header_row=1, required=["SKU", "Qty"])
    got = evaluate(check, vr([["SKU", "Qty", "Notes", "qty ", "Notes"], ["A", 1, "", 2]]), NOW)
    assert (got.status, got.message) == ("fail", "column 'Qty' appears 2 times (Stock!B1, Stock!D1)")
    assert a1(got.cells) == ("Stock!B1", "Stock!D1", "Stock!1:1")


def test_a_headers_check_may_read_the_header_row_alone():
    check = HeadersCheck(range="Stock!1:1", header_row=1, required=["SKU"])
    assert evaluate(check, vr([["SKU", "Qty"]], "Stock!A1:Z1"), NOW).status == "ok"
    with pytest.raises(ValueError, match="header_row 2 is below Stock!A1:Z1, which ends at row 1"):
        MissingCheck(range="Stock!A1:Z1", header_row=2, column="Qty")


def test_each_broken_header_expectation_is_told():
    check = HeadersCheck(range=TABLE, header_row=1, required=["SKU", "Price"], forbidden=["Status"],
                         order=["Qty", "SKU"], positions={"Email": "C"})
    status, message, _, cells = judged(check)
    assert status == "fail"
    assert message.split("; ") == [
        "1 column missing from the header row (Stock!1:1): Price", "found: SKU, Email, Qty, Status, Site",
        "forbidden column 'Status' at Stock!D1", "columns out of order: expected Qty, SKU",
        "found SKU, Qty", "'Email' is at Stock!B1, expected in column C"]
    assert cells == ("Stock!D1", "Stock!A1", "Stock!C1", "Stock!B1", "Stock!1:1")


# --- the one read ------------------------------------------------------------------------------


def test_every_column_check_on_one_table_reads_it_once():
    checks = [MissingCheck(range=TABLE, header_row=1, column="Email"),
              DuplicatesCheck(range=TABLE, header_row=1, column="SKU"),
              HeadersCheck(range=TABLE, header_row=1, required=["SKU"])]
    assert ranges_of(checks) == (TABLE,)
    assert [r.status for r in evaluate_all(checks, [STOCK], NOW)] == ["fail", "fail", "ok"]


# --- load-time errors --------------------------------------------------------------------------


@pytest.mark.parametrize(("fields", "problem"), [
    ({"kind": MissingCheck, "column": "Qty"}, "column 'Qty' names a header, but the check has no header_row"),
    ({"kind": MissingCheck, "column": "Q", "range": "Stock!A1:F"}, "column Q is outside Stock!A1:F"),
    ({"kind": MissingCheck, "column": "Qty", "header_row": 1, "range": "Stock!A2:F"},
     "header_row 1 is above Stock!A2:F, which starts at row 2"),
    ({"kind": MissingCheck, "column": "Qty", "header_row": 5, "range": "Stock!A1:F5"},
     "header_row 5 leaves no data rows in Stock!A1:F5"),
    ({"kind": MissingCheck, "column": "Qty", "header_row": 1, "fail": "5%"},
     "bad condition '5%' (write \"> 5%\")"),
    ({"kind": MissingCheck, "column": "Qty", "header_row": 1, "fail": 5}, "5 is a number, not a condition"),
    ({"kind": MissingCheck, "column": "Qty", "header_row": 1, "warn": "> 120%"},
     "'> 120%' compares with 120%, outside 0% to 100%"),
    ({"kind": MissingCheck, "column": "Qty", "header_row": 1, "warn": "> 1.5"},
     "'> 1.5' compares a count of rows with 1.5"),
    ({"kind": InvalidCheck, "column": "Qty", "header_row": 1, "format": "e-mail"}, "unknown format 'e-mail'"),
    ({"kind": InvalidCheck, "column": "Qty", "header_row": 1, "regex": "SKU-(\\d"},
     "regex 'SKU-(\\\\d' does not"),
    ({"kind": InvalidCheck, "column": "Qty", "header_row": 1}, "invalid needs a rule"),
    ({"kind": InvalidCheck, "column": "Qty", "header_row": 1, "min": 5, "max": 1},
     "min (5) is greater than max"),
    ({"kind": DuplicatesCheck, "header_row": 1}, "duplicates needs its key"),
    ({"kind": DuplicatesCheck, "header_row": 1, "column": "A", "columns": ["B"]}, "duplicates needs its key"),
    ({"kind": HeadersCheck, "header_row": 1}, "headers needs something to check"),
    ({"kind": HeadersCheck, "header_row": 1, "positions": {"SKU": "A1"}}, "position of 'SKU' is 'A1'"),
    ({"kind": HeadersCheck, "header_row": 1, "required": ["X"], "forbidden": ["X"]}, "X both required"),
])
def test_mistakes_are_refused_when_the_check_is_built(fields, problem):
    fields = {"range": TABLE, **fields}
    model = fields.pop("kind")
    with pytest.raises(ValueError) as caught:
        model(**fields)
    cause = caught.value.errors()[0]["ctx"]["error"] if hasattr(caught.value, "errors") else caught.value
    assert isinstance(cause, InvalidValue) and cause.problem.startswith(problem), cause


def test_an_unknown_format_is_corrected_when_close():
    with pytest.raises(ValueError, match='did you mean "email"'):
        InvalidCheck(range=TABLE, header_row=1, column="E", format="emial")


def test_a_column_check_is_written_back_as_an_admin_writes_it():
    check = DuplicatesCheck(range=TABLE, header_row=1, columns=["SKU", "Site"], warn="> 1%")
    assert check.name == "duplicates SKU+Site Stock!A1:Z"
    assert check.as_written() == {"kind": "duplicates", "range": TABLE, "header_row": 1,
                                  "columns": ["SKU", "Site"], "warn": "> 1%"}
    assert DuplicatesCheck(**{k: v for k, v in check.as_written().items() if k != "kind"}) == check
    headers = HeadersCheck(range=TABLE, header_row=1, positions={"SKU": "a"})
    assert headers.as_written()["positions"] == {"SKU": "A"}


# --- in one sentence ---------------------------------------------------------------------------


@pytest.mark.parametrize(("check", "sentence"), [
    (HeadersCheck(range=TABLE, header_row=1, required=["SKU", "Qty"], forbidden=["Notes"],
                  order=["SKU", "Qty"], positions={"SKU": "A"}),
     "fails when Stock!A1:Z row 1 lacks SKU or Qty, has Notes, does not have SKU, Qty in this order, or "
     "does not have SKU in column A"),
    (MissingCheck(range=TABLE, header_row=1, column="Supplier", missing_values=["-", "n/a"], fail="> 5%"),
     'fails when Supplier of Stock!A1:Z is blank, "-" or "n/a" in more than 5% of the rows'),
    (DuplicatesCheck(range=TABLE, header_row=1, columns=["SKU", "Site"], fail=">= 3", warn="> 0"),
     "fails when SKU + Site of Stock!A1:Z repeats an earlier row's in at least 3 rows; "
     "warns when SKU + Site of Stock!A1:Z repeats an earlier row's in any row"),
    (InvalidCheck(range=TABLE, header_row=1, column="Email", format="email", max_length=40),
     "fails when Email of Stock!A1:Z is not an e-mail or is longer than 40 characters in any row"),
    (InvalidCheck(range=TABLE, header_row=1, column="Level", valid_values=[5, "x"], min=0, regex=r"\d+"),
     'fails when Level of Stock!A1:Z is not one of 5, "x", does not match \\d+ or is below 0 in any row'),
])
def test_each_column_check_says_what_it_does_in_a_sentence(check, sentence):
    assert check.explain() == sentence
