"""Freshness converts only the largest serial to a datetime: the answers must be those of converting all."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.checks import FormulaErrorsCheck, FreshnessCheck, ValuesStillLoading, evaluate
from monitor.checks.dates import date_of
from tests.refs import a1

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
DAY = 46027  # 2026-01-05
STALE = FreshnessCheck(range="Log!E2:E", fail="> 1d")  # every date below is older: the newest cell is named


def log(*values) -> dict:
    return {"range": "Log!E2:E1000", "majorDimension": "ROWS", "values": [[v] for v in values]}


def test_the_newest_of_many_serials_is_found_wherever_it_sits():
    values = [DAY + n / 10 for n in range(30)]
    values.insert(7, DAY + 4)
    got = evaluate(STALE, log(*values), NOW)
    assert got.observed == "2026-01-09T00:00:00.000Z"
    assert a1(got.cells) == ("Log!E9",)


def test_equal_serials_name_the_first_cell_in_reading_order():
    got = evaluate(STALE, log(DAY, DAY + 1, DAY + 0.5, DAY + 1, DAY + 1 + 1e-10), NOW)
    assert a1(got.cells) == ("Log!E3",)  # the last one differs by less than a millisecond


def test_a_string_as_new_as_the_newest_serial_wins_when_it_comes_first():
    got = evaluate(STALE, log(DAY, "2026-01-06", DAY + 1), NOW)
    assert (got.observed, a1(got.cells)) == ("2026-01-06T00:00:00.000Z", ("Log!E3",))
    got = evaluate(STALE, log(DAY + 1, "2026-01-06"), NOW)
    assert a1(got.cells) == ("Log!E2",)


def test_a_newer_string_beats_every_serial_and_a_newer_serial_every_string():
    assert a1(evaluate(STALE, log(DAY + 2, "2026-01-08 06:00", DAY), NOW).cells) == ("Log!E3",)
    assert a1(evaluate(STALE, log("2026-01-08 06:00", DAY + 3.5), NOW).cells) == ("Log!E3",)


def test_numbers_outside_the_date_range_are_never_the_newest():
    got = evaluate(STALE, log(DAY, 3_000_000, 0, -5, True), NOW)
    assert (got.observed, a1(got.cells)) == ("2026-01-05T00:00:00.000Z", ("Log!E2",))
    assert date_of(3_000_000, UTC) is None


def test_formula_errors_still_notice_loading_among_plain_values():
    values = {"range": "Stock!A1:C3", "majorDimension": "ROWS",
              "values": [["SKU", 1, 2], ["a", "Loading...", 3]]}
    try:
        evaluate(FormulaErrorsCheck(range="Stock!A1:C3"), values, NOW)
    except ValuesStillLoading as exc:
        assert exc.cell == "Stock!B2"
    else:
        raise AssertionError("Loading... was not noticed")
