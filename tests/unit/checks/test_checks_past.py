"""Checks judged against earlier reads or another spreadsheet, as pure functions, and their history's
bound (monitor.checks.past, monitor.engine.history)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from monitor.checks import (
    ChangeCheck,
    CrossSheetCheck,
    HeadersChangedCheck,
    OtherSide,
    Past,
    compare_cross,
    evaluate,
)
from monitor.checks.past import NOT_READ
from monitor.config.defaults import HISTORY_POINTS
from monitor.engine.history import Point, kept_points
from tests.refs import a1

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def column(*values, tab="Stock", start=2) -> dict:
    return {"range": f"{tab}!A{start}:A{start + len(values)}", "majorDimension": "ROWS",
            "values": [[value] for value in values]}


def row(*values) -> dict:
    return {"range": "Stock!A1:Z1", "majorDimension": "ROWS", "values": [list(values)]}


def series(name: str, *points) -> Past:
    return Past(series={name: tuple(points)})


# --- change ------------------------------------------------------------------------------------


def test_a_first_read_has_nothing_to_compare_with_and_its_metric_is_the_point_to_keep():
    check = ChangeCheck(range="Stock!A2:A", fail="< -30")
    result = evaluate(check, column("a", "b", "c"), NOW)
    assert (result.status, result.observed) == ("ok", 3)
    assert "first read" in result.message


def test_row_count_dropping_by_more_than_the_limit_since_the_previous_read_fails():
    check = ChangeCheck(range="Stock!A2:A", fail="< -30")
    past = series(check.name, (NOW - 2 * HOUR, 10), (NOW - HOUR, 10))
    result = evaluate(check, column("a", "b", "c", "d", "e", "f"), NOW, past=past)
    assert (result.status, result.observed) == ("fail", 6)
    assert result.message == "row_count 6, -40 % since the previous read (10), < -30 %"
    assert evaluate(check, column(*"abcdefgh"), NOW, past=past).status == "ok"  # -20 %


def test_a_sum_compared_with_its_value_over_hours_ago_uses_the_value_in_force_then():
    check = ChangeCheck(range="Stock!A2:A", aggregate="sum", over="24h", warn="> 50")
    past = series(check.name, (NOW - 30 * HOUR, 100), (NOW - 20 * HOUR, 140), (NOW - HOUR, 155))
    result = evaluate(check, column(151, 0), NOW, past=past)
    assert result.status == "warn"  # against 100, in force 24h ago; +10 % against the last read
    assert "+51 % since 30h ago (100)" in result.message


def test_a_history_younger_than_over_compares_with_its_oldest_point():
    check = ChangeCheck(range="Stock!A2:A", aggregate="sum", over="24h", fail="< -50")
    past = series(check.name, (NOW - 3 * HOUR, 100), (NOW - HOUR, 90))
    assert evaluate(check, column(40), NOW, past=past).status == "fail"


def test_a_value_that_should_only_grow_fails_on_any_decrease():
    check = ChangeCheck(range="Stock!A2:A", aggregate="max", only_grows=True)
    past = series(check.name, (NOW - HOUR, 1042))
    result = evaluate(check, column(1041, 7), NOW, past=past)
    assert result.status == "fail" and "it should only grow" in result.message
    assert evaluate(check, column(1042), NOW, past=past).status == "ok"


def test_a_metric_that_vanished_is_reported_at_the_most_severe_level():
    check = ChangeCheck(range="Stock!A2:A", aggregate="max", warn="< -10")
    result = evaluate(check, column(), NOW, past=series(check.name, (NOW - HOUR, 50)))
    assert result.status == "warn"  # warn is its only level
    assert "the range is empty (was 50" in result.message


def test_a_rise_from_zero_is_more_than_any_percentage():
    check = ChangeCheck(range="Stock!A2:A", aggregate="sum", fail="> 1000")
    result = evaluate(check, column(3), NOW, past=series(check.name, (NOW - HOUR, 0)))
    assert result.status == "fail" and "up from 0" in result.message


def test_a_change_check_needs_a_condition_and_a_sane_over():
    with pytest.raises(ValidationError, match="change needs a condition"):
        ChangeCheck(range="Stock!A2:A")
    with pytest.raises(ValidationError, match="over must be between"):
        ChangeCheck(range="Stock!A2:A", over="60d", fail="< -10")


# --- the history's bound -----------------------------------------------------------------------


def test_a_value_that_held_adds_no_point():
    points = (Point(NOW - HOUR, 5.0),)
    assert kept_points(points, Point(NOW, 5.0), None) == points


def test_without_over_only_the_last_value_is_kept():
    assert kept_points((Point(NOW - HOUR, 5.0),), Point(NOW, 6.0), None) == (Point(NOW, 6.0),)


def test_points_are_bounded_in_number_and_age_and_keep_the_value_in_force_over_ago():
    over = timedelta(hours=24)
    points: tuple[Point, ...] = ()
    start = NOW - 3 * over
    for minute in range(0, 3 * 24 * 60, 5):  # every 5 minutes for three days, always changing
        points = kept_points(points, Point(start + timedelta(minutes=minute), float(minute)), over)
        assert len(points) <= HISTORY_POINTS
    last = points[-1].at
    assert points[0].at <= last - over < points[1].at  # the value in force ``over`` ago is known
    gaps = [later.at - earlier.at for earlier, later in zip(points[1:], points[2:], strict=False)]
    assert max(gaps) <= 2 * over / (HISTORY_POINTS - 2)  # known within its resolution


# --- headers_changed ---------------------------------------------------------------------------


def test_headers_changed_names_the_old_and_new_lists():
    check = HeadersChangedCheck(range="Stock!1:1")
    past = Past(headers={check.name: ("SKU", "Product", "Qty")})
    result = evaluate(check, row("SKU", "Item", "Qty", "Price"), NOW, past=past)
    assert result.status == "warn"
    assert result.message == ("headers changed since the last read (removed ['Product']; added "
                              "['Item', 'Price']): was ['SKU', 'Product', 'Qty'], now "
                              "['SKU', 'Item', 'Qty', 'Price']")
    assert result.observed == ["SKU", "Item", "Qty", "Price"]


def test_headers_moved_are_a_change_and_unchanged_ones_are_not():
    check = HeadersChangedCheck(range="Stock!1:1", level="fail")
    past = Past(headers={check.name: ("SKU", "Qty")})
    moved = evaluate(check, row("Qty", "SKU"), NOW, past=past)
    assert moved.status == "fail" and "(reordered)" in moved.message
    assert evaluate(check, row("SKU", "Qty"), NOW, past=past).status == "ok"
    assert evaluate(check, row("SKU", "Qty"), NOW).status == "ok"  # a first read


# --- cross_sheet -------------------------------------------------------------------------------


def cross(**fields) -> CrossSheetCheck:
    return CrossSheetCheck(range="Orders!C2:C", other="Ledger", other_range="Totals!B2:B", **fields)


def test_totals_that_must_match_fail_beyond_the_tolerance():
    check = cross(tolerance=0.5)
    past = Past(others={check.name: OtherSide("Ledger", 100.0, NOW)})
    assert evaluate(check, column(60, 40.4, tab="Orders"), NOW, past=past).status == "ok"
    result = evaluate(check, column(60, 39, tab="Orders"), NOW, past=past)
    assert result.status == "fail"
    assert result.message == "sum 99 here, 100 in Ledger Totals!B2:B: they differ by 1 (tolerance 0.5)"


def test_every_key_of_a_must_be_in_b_and_the_missing_ones_are_named_with_their_cells():
    check = cross(match="keys", level="warn")
    past = Past(others={check.name: OtherSide("Ledger", ("A-1", "A-2", "42"))})
    result = evaluate(check, column("A-1", 42, "A-9", tab="Orders"), NOW, past=past)
    assert result.status == "warn"
    assert result.message == "1 of 3 keys are not in Ledger Totals!B2:B: 'A-9' (Orders!A4)"
    assert a1(result.cells) == ("Orders!A4",)


def test_an_other_side_not_read_yet_waits_for_its_read_and_an_unreadable_one_is_a_finding():
    check = cross()
    waiting = evaluate(check, column(1, tab="Orders"), NOW,
                       past=Past(others={check.name: OtherSide("Ledger", NOT_READ)}))
    assert (waiting.status, waiting.message) == ("ok", "Ledger Totals!B2:B not read yet: compared once it is")
    past = Past(others={check.name: OtherSide("Ledger", problem="it cannot be read (not found)")})
    result = evaluate(check, column(1, tab="Orders"), NOW, past=past)
    assert (result.status, result.message) == (
        "fail", "cannot compare with Ledger Totals!B2:B: it cannot be read (not found)")


def test_a_kept_total_judges_the_same_as_a_read():
    check = cross()
    other = OtherSide("Ledger", 120.0)
    read = evaluate(check, column(60, 40, tab="Orders"), NOW, past=Past(others={check.name: other}))
    assert read.status == "fail" and compare_cross(check, 100.0, other) == read
