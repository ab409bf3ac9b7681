"""Finding formulas whose values move without an edit, in ValueRanges read as formulas: pure functions."""

from __future__ import annotations

import pytest

from monitor.checks import VolatileCell, volatile_cells, volatile_functions


@pytest.mark.parametrize(("formula", "functions"), [
    ("=NOW()", ("NOW",)),
    ("=today()-B2", ("TODAY",)),  # Google shows names in capitals; typed ones need not be
    ("=IFERROR(IMPORTRANGE(\"1abc\", \"Stock!A1:C9\"), 0)", ("IMPORTRANGE",)),
    ("=RAND() + RANDBETWEEN(1, 6) * RAND ()", ("RAND", "RANDBETWEEN")),  # each once, in written order
    ("=SUM(RANDARRAY(3))", ("RANDARRAY",)),
    ("=GOOGLEFINANCE(\"NASDAQ:GOOG\")", ("GOOGLEFINANCE",)),
    ("=IMPORTXML(A1, \"//a\") & IMPORTHTML(A1, \"table\", 1) & IMPORTDATA(A1) & IMPORTFEED(A1)",
     ("IMPORTXML", "IMPORTHTML", "IMPORTDATA", "IMPORTFEED")),
])
def test_a_formula_calling_a_function_google_recomputes_by_itself_is_volatile(formula, functions):
    assert volatile_functions(formula) == functions


@pytest.mark.parametrize("formula", [
    "=SUM(C2:C9)",
    "=B2*C2",
    "=\"NOW() is text\" & A1",  # in quotes: text, not a call
    "=\"say \"\"RAND()\"\"\"",  # "" is a quote inside text
    "='RAND(1)'!A1 + 1",  # a tab's name in single quotes
    "=MYNOW(A1) + NOW_PLUS(1) + X.NOW(2)",  # names that only end or start like one
    "NOW()",  # text, not a formula
    "",
])
def test_anything_else_is_not(formula):
    assert volatile_functions(formula) == ()


def test_cells_are_named_where_google_placed_them_once_each():
    first = {"range": "Stock!A1:C4", "majorDimension": "ROWS", "values": [
        ["SKU", "Product", "Quantity"],
        ["A-1", "=NOW()", 10],
        ["A-2", "Milk", "=IMPORTRANGE(\"1abc\", \"Stock!C3\")"],
        ["Total", "", "=SUM(C2:C3)"],
    ]}
    overlapping = {"range": "Stock!C2:C4", "majorDimension": "ROWS",
                   "values": [[10], ["=IMPORTRANGE(\"1abc\", \"Stock!C3\")"], ["=SUM(C2:C3)"]]}
    by_columns = {"range": "'Cash Flow'!A2:B3", "majorDimension": "COLUMNS",
                  "values": [["x", "=TODAY()"], ["=RAND()"]]}
    assert volatile_cells([first, overlapping, by_columns, {"range": "Stock!Z1:Z9"}]) == [
        VolatileCell("Stock!B2", ("NOW",)),
        VolatileCell("Stock!C3", ("IMPORTRANGE",)),
        VolatileCell("'Cash Flow'!B2", ("RAND",)),
        VolatileCell("'Cash Flow'!A3", ("TODAY",)),
    ]
    assert VolatileCell("Stock!B2", ("NOW", "RAND")).to_dict() == {"cell": "Stock!B2",
                                                                   "functions": ["NOW", "RAND"]}
