"""Check evaluation over ValueRanges shaped exactly like Google's values:batchGet answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from monitor.checks import (
    MAX_CELLS,
    CheckResult,
    Condition,
    FormulaErrorsCheck,
    FreshnessCheck,
    NotEmptyCheck,
    RowCountCheck,
    ThresholdCheck,
    ValuesStillLoading,
    evaluate,
    evaluate_all,
    format_age,
    health_of,
    parse_age_condition,
    parse_condition,
    ranges_of,
)
from monitor.checks.dates import date_of
from monitor.core.durations import parse_duration
from tests.refs import a1

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
MOSCOW = ZoneInfo("Europe/Moscow")
SERIAL_2026_01_05 = 46027  # 43831 is 2020-01-01 in the recordings; 2,196 days later


def vr(range_: str, values=None, major: str = "ROWS") -> dict:
    """A ValueRange as Google sends it: ``values`` absent when the range is empty."""
    body = {"range": range_, "majorDimension": major}
    if values is not None:
        body["values"] = values
    return body


def result(result_: CheckResult) -> tuple:
    return result_.status, result_.message, result_.observed, a1(result_.cells)


# --- formula_errors ----------------------------------------------------------------------------


def test_formula_errors_ok_when_no_error_values():
    check = FormulaErrorsCheck(range="Stock!A1:C3")
    got = evaluate(check, vr("Stock!A1:C3", [["a", 1, True], ["#hashtag", "REF!"]]), NOW)
    assert result(got) == ("ok", "no formula errors", 0, ())
    assert got.check_name == "formula_errors Stock!A1:C3"
    assert got.kind == "formula_errors"


def test_formula_errors_map_to_cell_references_from_the_echoed_start_b2():
    check = FormulaErrorsCheck(range="Stock!B2:D", name="broken formulas")
    values = [["x", "#REF!"], [], ["#N/A", 1, "#DIV/0!"]]
    got = evaluate(check, vr("Stock!B2:D1000", values), NOW)
    assert got.status == "fail"
    assert got.check_name == "broken formulas"
    assert a1(got.cells) == ("Stock!C2", "Stock!B4", "Stock!D4")
    assert got.observed == 3
    assert got.message == (
        "3 cells show formula errors: #REF! ×1, #N/A ×1, #DIV/0! ×1 "
        "(Stock!C2, Stock!B4, Stock!D4)"
    )


def test_formula_errors_recognise_every_google_error_code():
    codes = ["#REF!", "#N/A", "#DIV/0!", "#VALUE!", "#NAME?", "#NUM!", "#NULL!", "#ERROR!"]
    got = evaluate(FormulaErrorsCheck(range="T!A1:H1"), vr("T!A1:H1", [codes]), NOW)
    assert got.observed == 8
    assert a1(got.cells) == tuple(f"T!{c}1" for c in "ABCDEFGH")


def test_formula_errors_of_one_kind_read_naturally_and_cap_the_cell_list():
    values = [["#REF!"] for _ in range(12)]
    got = evaluate(FormulaErrorsCheck(range="Stock!B4:B"), vr("Stock!B4:B1000", values), NOW)
    assert got.message == "12 cells show #REF! (Stock!B4, Stock!B5, Stock!B6 and 9 more)"
    assert got.observed == 12
    assert len(got.cells) == MAX_CELLS == 10
    assert str(got.cells[-1]) == "Stock!B13"
    one = evaluate(FormulaErrorsCheck(range="Stock!B4"), vr("Stock!B4", [["#N/A"]]), NOW)
    assert one.message == "1 cell shows #N/A (Stock!B4)"


def test_formula_errors_quote_sheet_names_like_google():
    got = evaluate(FormulaErrorsCheck(range="'My tab'!B2:C3"), vr("'My tab'!B2:C3", [["", "#REF!"]]), NOW)
    assert a1(got.cells) == ("'My tab'!C2",)


def test_formula_errors_in_columns_major_dimension_map_columns_to_letters():
    values = [["a", "#REF!"], ["b"], ["c", "d", "#N/A"]]  # columns B, C, D from row 2
    got = evaluate(FormulaErrorsCheck(range="S!B2:D4"), vr("S!B2:D4", values, "COLUMNS"), NOW)
    assert a1(got.cells) == ("S!B3", "S!D4")


def test_formula_errors_on_an_empty_range_are_ok():
    got = evaluate(FormulaErrorsCheck(range="S!A1:B5"), vr("S!A1:B5"), NOW)
    assert got.status == "ok"


# --- not_empty and row_count -------------------------------------------------------------------


def test_not_empty_counts_rows_with_any_value_in_ragged_rows():
    values = [["a"], [], ["", "", "c"], ["  "], ["", 0]]  # blank and whitespace rows do not count
    got = evaluate(NotEmptyCheck(range="S!A1:C", min_rows=3), vr("S!A1:C1000", values), NOW)
    assert result(got) == ("ok", "3 non-empty rows", 3, ())


def test_not_empty_fails_one_row_short_of_the_minimum():
    values = [["a"], ["b"]]
    at_min = evaluate(NotEmptyCheck(range="S!A1:A", min_rows=2), vr("S!A1:A1000", values), NOW)
    short = evaluate(NotEmptyCheck(range="S!A1:A", min_rows=3), vr("S!A1:A1000", values), NOW)
    assert at_min.status == "ok"
    assert result(short) == ("fail", "only 2 non-empty rows (at least 3 required)", 2, ())


def test_not_empty_fails_on_an_empty_range_with_values_absent():
    got = evaluate(NotEmptyCheck(range="S!A2:A"), vr("S!A2:A1000"), NOW)
    assert result(got) == ("fail", "no non-empty rows (at least 1 required)", 0, ())


def test_not_empty_counts_sheet_rows_in_columns_major_dimension():
    values = [["a", "", "c"], ["x"]]  # column A rows 1 and 3, column B row 1
    got = evaluate(NotEmptyCheck(range="S!A1:B3", min_rows=2), vr("S!A1:B3", values, "COLUMNS"), NOW)
    assert got.observed == 2
    assert got.status == "ok"


@pytest.mark.parametrize(
    ("rows", "status", "message"),
    [
        (2, "fail", "2 rows < min 3"),
        (3, "ok", "3 rows"),
        (5, "ok", "5 rows"),
        (6, "fail", "6 rows > max 5"),
    ],
)
def test_row_count_is_inclusive_between_bounds(rows, status, message):
    values = [[f"r{i}"] for i in range(rows)]
    got = evaluate(RowCountCheck(range="S!A2:A", min=3, max=5), vr("S!A2:A1000", values), NOW)
    assert (got.status, got.message, got.observed) == (status, message, rows)


def test_row_count_with_one_bound_and_an_empty_range():
    only_max = RowCountCheck(range="S!A:A", max=1)
    assert evaluate(only_max, vr("S!A1:A1000"), NOW).message == "0 rows"
    only_min = RowCountCheck(range="S!A:A", min=1)
    assert evaluate(only_min, vr("S!A1:A1000"), NOW).status == "fail"


# --- threshold ---------------------------------------------------------------------------------


STOCK = ThresholdCheck(range="Stock!F2:F", aggregate="min", warn="< 5", fail="< 0")


def stock(*quantities) -> dict:
    return vr("Stock!F2:F1000", [[q] for q in quantities])


def test_threshold_min_ok_warn_fail_and_fail_wins_over_warn():
    assert result(evaluate(STOCK, stock(7, 12, 5), NOW)) == ("ok", "min 5", 5, ())
    warn = evaluate(STOCK, stock(7, 3, 12), NOW)
    assert result(warn) == ("warn", "min 3 < 5", 3, ("Stock!F3",))
    fail = evaluate(STOCK, stock(-2, 3, 12, -1.5), NOW)  # -2 is also < 5: fail wins
    assert result(fail) == ("fail", "min -2 < 0", -2, ("Stock!F2", "Stock!F5"))


def test_threshold_exactly_at_the_limit_does_not_trigger():
    assert evaluate(STOCK, stock(5), NOW).status == "ok"
    assert evaluate(STOCK, stock(4.99), NOW).status == "warn"
    assert evaluate(STOCK, stock(0), NOW).status == "warn"
    assert evaluate(STOCK, stock(-0.01), NOW).status == "fail"


def test_threshold_ignores_non_numeric_cells_for_min_and_says_so():
    got = evaluate(STOCK, stock("n/a", 8, "#REF!", True, "", "4"), NOW)
    assert result(got) == ("ok", "min 8 (4 non-numeric cells ignored)", 8, ())


def test_threshold_reports_when_every_cell_is_non_numeric():
    got = evaluate(STOCK, stock("n/a", "#REF!"), NOW)
    assert got.status == "fail"  # the most severe configured level
    assert got.observed is None
    assert a1(got.cells) == ("Stock!F2", "Stock!F3")
    assert got.message == "no min: no numeric cells, 2 non-numeric cells (Stock!F2, Stock!F3)"
    warn_only = ThresholdCheck(range="Stock!F2:F", aggregate="max", warn="> 100")
    assert evaluate(warn_only, stock("x"), NOW).status == "warn"


def test_threshold_reports_an_empty_range_rather_than_staying_silent():
    got = evaluate(STOCK, vr("Stock!F2:F1000"), NOW)
    assert result(got) == ("fail", "no min: the range is empty", None, ())


def test_threshold_max_sum_count_and_value():
    too_high = ThresholdCheck(range="S!A1:A", aggregate="max", warn="> 10", fail=">= 100")
    assert result(evaluate(too_high, vr("S!A1:A9", [[1], [100], [50]]), NOW)) == (
        "fail", "max 100 >= 100", 100, ("S!A2",))
    total = ThresholdCheck(range="S!A1:B", aggregate="sum", fail="!= 10")
    assert evaluate(total, vr("S!A1:B9", [[2.5, 2.5], ["x", 5]]), NOW).observed == 10
    assert evaluate(total, vr("S!A1:B9", [[2.5, 2.5], ["x", 5]]), NOW).status == "ok"
    assert evaluate(total, vr("S!A1:B9", [[1]]), NOW).message == "sum 1 != 10"
    assert evaluate(total, vr("S!A1:B9"), NOW).message == "sum 0 != 10"  # nothing sums to 0
    rows = ThresholdCheck(range="S!A1:A", aggregate="count", warn="< 3")
    assert result(evaluate(rows, vr("S!A1:A9", [["a"], [], [2]]), NOW)) == (
        "warn", "count 2 < 3", 2, ())
    cell = ThresholdCheck(range="Dash!B2", aggregate="value", fail="< 0")
    assert result(evaluate(cell, vr("Dash!B2", [[-3]]), NOW)) == (
        "fail", "value -3 < 0", -3, ("Dash!B2",))


def test_threshold_value_that_is_not_a_number_is_reported_with_its_cell():
    cell = ThresholdCheck(range="Dash!B2", aggregate="value", warn="< 0")
    got = evaluate(cell, vr("Dash!B2", [["#DIV/0!"]]), NOW)
    assert result(got) == ("warn", "Dash!B2 is not a number: '#DIV/0!'", None, ("Dash!B2",))


def test_threshold_accepts_parsed_conditions():
    check = ThresholdCheck(range="S!A1:A", aggregate="min", warn=Condition("<", 5), name="low stock")
    got = evaluate(check, vr("S!A1:A9", [[4]]), NOW)
    assert (got.check_name, got.status, got.message) == ("low stock", "warn", "min 4 < 5")


# --- freshness: serial numbers -----------------------------------------------------------------


FRESH = FreshnessCheck(range="Log!E2:E", warn="> 2h", fail="> 1d")


def log(*values) -> dict:
    return vr("Log!E2:E1000", [[v] for v in values])


def test_freshness_serials_are_days_since_1899_12_30_as_in_the_recordings():
    # The recordings show serial 43831 formatted as 2020-01-01 and 36162 as 1999-01-02.
    assert date_of(43831, UTC) == datetime(2020, 1, 1, tzinfo=UTC)
    assert date_of(36162, UTC) == datetime(1999, 1, 2, tzinfo=UTC)
    assert date_of(SERIAL_2026_01_05 + 0.75, UTC) == datetime(2026, 1, 5, 18, 0, tzinfo=UTC)
    assert date_of(0.5, UTC) is None  # a bare time of day is not a date


def test_freshness_fractional_serial_is_read_in_the_spreadsheets_time_zone():
    noon_moscow = SERIAL_2026_01_05 + 0.5  # 12:00 MSK = 09:00 UTC
    two_hours_later = datetime(2026, 1, 5, 11, 0, tzinfo=UTC)
    at = evaluate(FRESH, log(noon_moscow), two_hours_later, MOSCOW)
    assert result(at) == (
        "ok", "newest date 2026-01-05 12:00 UTC+3 is 2 hours old", "2026-01-05T09:00:00.000Z", ())
    after = evaluate(FRESH, log(noon_moscow), two_hours_later + timedelta(seconds=1), "Europe/Moscow")
    assert after.status == "warn"
    assert a1(after.cells) == ("Log!E2",)
    before = evaluate(FRESH, log(noon_moscow), two_hours_later - timedelta(seconds=1), MOSCOW)
    assert before.status == "ok"
    # Read as UTC the same serial is three hours younger: the zone matters.
    assert evaluate(FRESH, log(noon_moscow), two_hours_later + timedelta(hours=1), UTC).status == "ok"


def test_freshness_serials_follow_daylight_saving_in_the_spreadsheets_zone():
    new_york = ZoneInfo("America/New_York")
    winter_noon = date_of(SERIAL_2026_01_05 + 0.5, new_york)
    summer_noon = date_of(SERIAL_2026_01_05 + 181 + 0.5, new_york)  # 2026-07-05
    assert winter_noon.astimezone(UTC).hour == 17
    assert summer_noon.astimezone(UTC).hour == 16


def test_freshness_fail_wins_and_message_names_the_age_and_limit():
    newest = SERIAL_2026_01_05 - 2 + 14 / 24  # 2026-01-03 14:00 UTC
    got = evaluate(FRESH, log(newest - 3, newest, "note"), datetime(2026, 1, 5, 14, 0, tzinfo=UTC))
    assert result(got) == (
        "fail",
        "newest date 2026-01-03 14:00 UTC is 2 days old (> 1d)",
        "2026-01-03T14:00:00.000Z",
        ("Log!E3",),
    )


def test_freshness_exactly_one_day_old_is_a_warning_not_a_failure():
    got = evaluate(FRESH, log(SERIAL_2026_01_05 - 1 + 0.5), NOW)
    assert (got.status, got.message) == ("warn", "newest date 2026-01-04 12:00 UTC is 1 day old (> 2h)")


def test_freshness_with_a_future_date_says_so_and_is_ok():
    got = evaluate(FRESH, log(SERIAL_2026_01_05 + 2), NOW)
    assert (got.status, got.message) == (
        "ok", "newest date 2026-01-07 00:00 UTC is 1 day and 12 hours in the future")


# --- freshness: formatted strings --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-05", datetime(2026, 1, 5, tzinfo=MOSCOW)),
        ("2026-01-05 14:30", datetime(2026, 1, 5, 14, 30, tzinfo=MOSCOW)),
        ("2026-01-05 14:30:00", datetime(2026, 1, 5, 14, 30, tzinfo=MOSCOW)),
        ("2026-01-05T14:30:00", datetime(2026, 1, 5, 14, 30, tzinfo=MOSCOW)),
        ("2026-01-05T14:30:00Z", datetime(2026, 1, 5, 14, 30, tzinfo=UTC)),
        ("2026-01-05T14:30:00+01:00", datetime(2026, 1, 5, 13, 30, tzinfo=UTC)),
        ("05.01.2026", datetime(2026, 1, 5, tzinfo=MOSCOW)),
        ("05.01.2026 14:30:15", datetime(2026, 1, 5, 14, 30, 15, tzinfo=MOSCOW)),
        ("1/5/2026", datetime(2026, 1, 5, tzinfo=MOSCOW)),
        ("1/5/2026 14:30:00", datetime(2026, 1, 5, 14, 30, tzinfo=MOSCOW)),
        ("1/5/2026 2:30 PM", datetime(2026, 1, 5, 14, 30, tzinfo=MOSCOW)),
        ("12/31/2025 12:05 AM", datetime(2025, 12, 31, 0, 5, tzinfo=MOSCOW)),
    ],
)
def test_freshness_reads_formatted_date_strings(text, expected):
    assert date_of(text, MOSCOW) == expected


@pytest.mark.parametrize("text", ["soon", "31.02.2026", "13/45/2026", "2026-13-01", "1/5/26", "14:30"])
def test_freshness_ignores_text_that_is_not_a_date(text):
    assert date_of(text, UTC) is None


def test_freshness_takes_the_newest_of_serials_and_strings():
    values = ["2026-01-05 09:00:00", SERIAL_2026_01_05 + 10 / 24, "04.01.2026", "n/a"]
    got = evaluate(FRESH, log(*values), NOW)
    assert (got.status, got.message, a1(got.cells)) == (
        "ok", "newest date 2026-01-05 10:00 UTC is 2 hours old", ())


def test_freshness_reports_a_range_without_dates():
    got = evaluate(FRESH, log("n/a", True), NOW)
    assert result(got) == (
        "fail", "no dates: 2 cells hold no date (Log!E2, Log!E3)", None, ("Log!E2", "Log!E3"))
    empty = evaluate(FreshnessCheck(range="Log!E2:E", warn="> 2h"), vr("Log!E2:E1000"), NOW)
    assert (empty.status, empty.message) == ("warn", "no dates: the range is empty")


def test_freshness_from_the_files_modified_time():
    check = FreshnessCheck(source="modified_time", warn="> 6h", fail="> 3d")
    got = evaluate(check, None, NOW, MOSCOW, modified_time=datetime(2026, 1, 5, 3, 59, 59, tzinfo=UTC))
    assert result(got) == (
        "warn", "last modified 2026-01-05 06:59 UTC+3 is 8 hours old (> 6h)", "2026-01-05T03:59:59.000Z", ())
    assert got.check_name == "freshness modified_time"
    fresh = evaluate(check, None, NOW, modified_time=NOW - timedelta(hours=6))
    assert fresh.status == "ok"
    with pytest.raises(ValueError, match="modifiedTime"):
        evaluate(check, None, NOW)


# --- LOADING -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "check", [FormulaErrorsCheck(range="S!B2:C3"), STOCK, FRESH, NotEmptyCheck(range="S!B2")])
def test_loading_placeholder_raises_instead_of_becoming_a_finding(check):
    with pytest.raises(ValuesStillLoading) as caught:
        evaluate(check, vr("S!B2:C3", [[1, 2], ["", "Loading..."]]), NOW)
    assert caught.value.cell == "S!C3"


@pytest.mark.parametrize("placeholder", ["Loading...", "Loading…", "#LOADING!"])
def test_every_spelling_of_the_loading_placeholder_raises(placeholder):
    with pytest.raises(ValuesStillLoading):
        evaluate(FormulaErrorsCheck(range="S!A1"), vr("S!A1", [[placeholder]]), NOW)


def test_evaluate_all_raises_when_any_range_is_still_loading():
    checks = [FormulaErrorsCheck(range="S!A1"), STOCK]
    ranges = {"S!A1": vr("S!A1", [[1]]), "Stock!F2:F": stock(3, "Loading...")}
    with pytest.raises(ValuesStillLoading, match=r"Stock!F3 still shows Loading"):
        evaluate_all(checks, ranges, NOW, UTC)


# --- evaluate_all and health -------------------------------------------------------------------


def test_evaluate_all_matches_values_by_the_configured_range_or_by_request_order():
    checks = [
        FormulaErrorsCheck(range="Stock!A1:H500"),
        FreshnessCheck(source="modified_time", fail="> 1d"),
        STOCK,
        ThresholdCheck(range="Stock!F2:F", aggregate="sum", fail="< 0"),  # same range, read once
    ]
    assert ranges_of(checks) == ("Stock!A1:H500", "Stock!F2:F")
    answer = [vr("Stock!A1:H500", [["#REF!"]]), stock(3, -1)]  # valueRanges, in request order
    got = evaluate_all(checks, answer, NOW, UTC, modified_time=NOW)
    assert [(r.kind, r.status) for r in got] == [
        ("formula_errors", "fail"), ("freshness", "ok"), ("threshold", "fail"),
        ("threshold", "ok")]
    by_range = dict(zip(ranges_of(checks), answer, strict=True))
    assert evaluate_all(checks, by_range, NOW, UTC, modified_time=NOW) == got
    assert health_of(got) == "fail"


def test_evaluate_all_refuses_missing_or_misaligned_values():
    with pytest.raises(KeyError, match="Stock!F2:F"):
        evaluate_all([STOCK], {}, NOW, UTC)
    with pytest.raises(ValueError, match="1 ranges requested .* but 2 value ranges given"):
        evaluate_all([STOCK, STOCK], [stock(1), stock(2)], NOW, UTC)


def test_health_is_the_worst_status():
    def of(*statuses):
        return health_of(CheckResult("c", "k", s, "") for s in statuses)

    assert (of(), of("ok"), of("ok", "warn"), of("warn", "fail", "ok")) == ("ok", "ok", "warn", "fail")


def test_evaluate_takes_only_check_models_and_an_aware_now():
    with pytest.raises(TypeError, match="not a check model: dict"):
        evaluate({"kind": "formula_errors", "range": "S!A1"}, vr("S!A1"), NOW)
    with pytest.raises(ValueError, match="aware"):
        evaluate(STOCK, stock(1), datetime(2026, 1, 5))


def test_results_serialise_to_plain_json_types():
    got = evaluate(STOCK, stock(3), NOW)
    assert got.to_dict() == {
        "check_name": "threshold min Stock!F2:F", "kind": "threshold", "status": "warn",
        "message": "min 3 < 5", "observed": 3, "cells": ["Stock!F2"], "owner": None,
    }


# --- conditions and durations ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "at", "holds"),
    [("< 5", 4.999, True), ("< 5", 5, False), ("<=5", 5, True), (">= 0", 0, True),
     ("> -1.5", -1.5, False), ("== 1", 1.0, True), ("= 1", 1, True), ("!= 0", 0, False)],
)
def test_conditions_compare_at_their_boundary(text, at, holds):
    assert parse_condition(text).holds(at) is holds


@pytest.mark.parametrize("text", ["5", "< five", "<< 5", "", "> 2h"])
def test_bad_conditions_say_what_is_accepted(text):
    with pytest.raises(ValueError, match="expected an operator and a number"):
        parse_condition(text)


def test_durations_and_age_conditions():
    assert parse_duration("90s") == timedelta(seconds=90)
    assert parse_duration("15m") == timedelta(minutes=15)
    assert parse_duration("1h30m") == timedelta(minutes=90)
    assert parse_duration("1.5d") == timedelta(hours=36)
    assert parse_duration("2w") == timedelta(days=14)
    age = parse_age_condition(">2h")
    assert (age.op, age.value, str(age)) == (">", 7200, "> 2h")
    for bad in ("2", "2 hours", "h", "-1h", ""):
        with pytest.raises(ValueError, match="bad duration"):
            parse_duration(bad)
    with pytest.raises(ValueError, match="bad age condition"):
        parse_age_condition("2h")


def test_ages_are_shown_in_two_units_at_most():
    assert [format_age(s) for s in (0, 45, 720, 7200, 18720, 86400, 97200, 90061)] == [
        "0s", "45s", "12m", "2h", "5h 12m", "1d", "1d 3h", "1d 1h"]
