"""The fast paths of evaluation give what the plain definitions give, over generated ValueRanges.

Evaluation sorts a range's values out once and makes a Cell only for what a finding names
(``cells.values_of``), scans for error codes a row at a time (``coded_cells``), finds the newest date
from the largest serial, and works a filter's clauses out once per column read. Each is checked here
against the definition it replaces, written the plain way: every non-empty cell in reading order,
"Loading..." anywhere raising with the first such cell named, a clause holding cell by cell.
"""

from __future__ import annotations

from datetime import UTC

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.checks import ValuesStillLoading
from monitor.checks.cells import LOADING_VALUES, Cell, coded_cells, is_empty, values_of
from monitor.checks.dates import date_of
from monitor.checks.imports import AMBIGUOUS_CODES, ambiguous_cell
from monitor.checks.kinds.formula_errors import _error_code
from monitor.checks.kinds.freshness import _newest_date
from monitor.checks.where import parse_where
from monitor.core.a1 import parse_a1

TEXTS = ["", "  ", "a", " a ", "active", "Mills & Co", "#N/A", " #REF! ", "#DIV/0!", "x#N/A", "#LOADING",
         "Loading...", "Loading… ", "2026-01-05", "05.01.2026 10:30", "7", "contains"]
VALUES = st.one_of(st.none(), st.integers(-5, 50_000), st.booleans(), st.sampled_from(TEXTS),
                   st.floats(min_value=-10, max_value=60_000, allow_nan=False, allow_infinity=False))
LINES = st.lists(st.lists(VALUES, max_size=4), max_size=12)


@st.composite
def value_ranges(draw, one_column: bool = False):
    lines = draw(st.lists(st.lists(VALUES, max_size=1), max_size=12) if one_column else LINES)
    major = "ROWS" if one_column else draw(st.sampled_from(["ROWS", "COLUMNS"]))
    echoed = draw(st.sampled_from(["S!B3:E40", "'My tab'!A1:D", "C7:F"]))
    return {"range": echoed, "majorDimension": major, "values": lines}


def plain_cells(value_range) -> list[Cell]:
    """Every non-empty cell in reading order; raises for the first "Loading..." met, as read."""
    parsed = parse_a1(value_range["range"])
    by_columns = value_range["majorDimension"] == "COLUMNS"
    cells = []
    for outer, line in enumerate(value_range["values"]):
        for inner, value in enumerate(line):
            row, col = (inner, outer) if by_columns else (outer, inner)
            cell = Cell(parsed.sheet, (parsed.start_row or 1) + row, (parsed.start_col or 1) + col, value)
            if isinstance(value, str) and value.strip() in LOADING_VALUES:
                raise ValuesStillLoading(cell.ref)
            if not is_empty(value):
                cells.append(cell)
    return sorted(cells, key=lambda cell: (cell.row, cell.col))


def outcome(make):
    """What ``make()`` gives, or the cell a "Loading..." raised for."""
    try:
        return make()
    except ValuesStillLoading as exc:
        return ("loading", exc.cell)


@settings(max_examples=400, deadline=None)
@given(value_ranges())
def test_a_ranges_values_and_their_cells_are_every_non_empty_cell_in_reading_order(value_range):
    def fast():
        found = values_of(value_range)
        return [(c.ref, c.row, c.col, c.value) for c in found.cells()]

    plain = outcome(lambda: [(c.ref, c.row, c.col, c.value) for c in plain_cells(value_range)])
    assert outcome(fast) == plain


@settings(max_examples=400, deadline=None)
@given(value_ranges())
def test_error_cells_are_the_cells_showing_an_error_code(value_range):
    def plain():
        return [c.ref for c in plain_cells(value_range) if _error_code(c.value)]

    assert outcome(lambda: [c.ref for c in coded_cells(value_range, _error_code)]) == outcome(plain)


@settings(max_examples=400, deadline=None)
@given(value_ranges())
def test_the_newest_date_is_the_latest_moment_first_in_reading_order(value_range):
    def plain():
        dated = [(moment, index) for index, cell in enumerate(plain_cells(value_range))
                 if (moment := date_of(cell.value, UTC)) is not None]
        return max(dated, key=lambda pair: pair[0]) if dated else (None, None)

    assert outcome(lambda: _newest_date(values_of(value_range), UTC)) == outcome(plain)


@settings(max_examples=300, deadline=None)
@given(st.lists(value_ranges(), min_size=1, max_size=3))
def test_a_code_an_import_shows_while_computing_is_found_where_it_first_is(ranges):
    by_text = {f"r{index}": value_range for index, value_range in enumerate(ranges)}

    def plain():
        for value_range in by_text.values():
            for row in value_range["values"]:
                if any(value in AMBIGUOUS_CODES for value in row):
                    cell = next(c for c in plain_cells(value_range) if c.value in AMBIGUOUS_CODES)
                    return cell.ref, cell.value
        return None

    assert outcome(lambda: ambiguous_cell(by_text)) == outcome(plain)


CLAUSES = st.sampled_from([
    "C = 'active'", "C != 'active'", "C in ('a', 7, 'Mills & Co')", "C contains 'a'", "C >= 7",
    "C < 100", "D > 0", "D <> 5", "C = 7 and D != 'x'", "C = 'a' or D <= 3", "C contains '#' or D = 7",
])


@settings(max_examples=400, deadline=None)
@given(CLAUSES, value_ranges(one_column=True), value_ranges(one_column=True), value_ranges(one_column=True))
def test_a_filter_passes_the_rows_where_its_clauses_hold_cell_by_cell(text, own, c_column, d_column):
    where = parse_where(text)
    check_range = parse_a1("S!B3:B40")
    texts = dict(zip(where.columns, where.ranges(check_range), strict=True))
    columns = {"C": c_column, "D": d_column}
    others = {texts[name]: columns[name] for name in where.columns}

    def plain():
        rows = {cell.row for cell in plain_cells(own)}
        by_row = {name: {cell.row: cell.value for cell in plain_cells(columns[name])}
                  for name in where.columns}
        return {row for row in rows
                if any(all(clause.holds(by_row[clause.column].get(row)) for clause in group)
                       for group in where.groups)}

    def fast():
        return where.passing_rows(check_range, set(values_of(own).rows), others)

    assert outcome(fast) == outcome(plain)
