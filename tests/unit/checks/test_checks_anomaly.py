"""The anomaly check's method, piece by piece: median and MAD, seasonal buckets on the spreadsheet's
clock, the judged bucket never in its own baseline, anomalous and failing buckets left out, the
learning phase, and the words of a finding (monitor.checks.baselines, buckets, kinds.anomaly)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from monitor.checks import AnomalyCheck, Buckets, Past, bucket_number, evaluate, with_reading
from monitor.checks.baselines import SENSITIVITY, baseline, mad, season_key, span_of
from monitor.checks.buckets import weekday_of
from monitor.core.clock import ManualClock

MONDAY = datetime(2026, 3, 2, 14, 30, tzinfo=UTC)
DAY = 24 * 3600


def rows(count: int) -> dict:
    return {"range": "Orders!A2:A", "majorDimension": "ROWS", "values": [[n] for n in range(count)]}


class Days:
    """A check read once a day on a fake clock, its buckets kept as the engine keeps them."""

    def __init__(self, check: AnomalyCheck, start: datetime = MONDAY) -> None:
        self.check, self.clock, self.kept = check, ManualClock(start), None
        self.size = "hour" if check.seasonality.startswith("hour") else "day"

    def read(self, count: int, *, failing: bool = False):
        now = self.clock.now()
        result = evaluate(self.check, rows(count), now, UTC,
                          past=Past(buckets={self.check.name: self.kept} if self.kept else {}))
        number = bucket_number(now, UTC, self.size)
        self.kept = with_reading(self.kept, number, result.observed, span_of(self.check.seasonality),
                                 left_out=result.is_finding or failing)
        self.clock.advance(DAY if self.size == "day" else 3600)
        return result

    def weeks(self, count: int, week=(150, 152, 148, 151, 149, 60, 40)):
        """``count`` weeks of a store's rows, Monday first, a little noise in each."""
        for n in range(count * 7):
            self.read(week[n % 7] + (n // 7) % 3 - 1)


# -- median and MAD ------------------------------------------------------------------------------------

def test_mad_is_the_median_distance_from_the_median_and_ignores_one_wild_value():
    assert mad([1, 2, 3, 4, 100]) == 1
    assert mad([10, 10, 10, 10, 10_000]) == 0


def test_one_bad_day_does_not_move_the_baseline():
    points = [(n, 100.0 + (n % 3), False) for n in range(20)]
    calm = baseline(points, 20, "none", SENSITIVITY["normal"])
    wild = baseline([*points[:-1], (19, 100_000.0, False)], 20, "none", SENSITIVITY["normal"])
    assert calm is not None and wild is not None
    assert wild.center == pytest.approx(calm.center, rel=0.02)
    assert wild.high < 120


# -- seasonal buckets ----------------------------------------------------------------------------------

def test_buckets_are_counted_on_the_spreadsheets_clock():
    monday_late = datetime(2026, 3, 2, 20, 0, tzinfo=UTC)  # Tuesday 05:00 in Tokyo
    assert weekday_of(bucket_number(monday_late, UTC, "day"), "day") == 0
    assert weekday_of(bucket_number(monday_late, ZoneInfo("Asia/Tokyo"), "day"), "day") == 1
    hour = bucket_number(monday_late, ZoneInfo("Asia/Tokyo"), "hour")
    assert season_key(hour, "hour_of_day") == 5
    assert season_key(hour, "hour_of_week") == 24 + 5


def test_a_baseline_compares_the_same_weekday_only():
    days = Days(AnomalyCheck(range="Orders!A2:A"))
    days.weeks(3)
    saturday = days.read(60)  # Monday, after three weeks: a Saturday's count on a Monday
    assert saturday.status == "fail"
    assert "usually 149–151 on a Monday (3 Mondays)" in saturday.message
    days.clock.advance(4 * DAY)
    assert days.read(59).status == "ok"  # Saturday's 60 is a Saturday's usual


def test_history_keeps_one_value_per_bucket_and_only_the_seasonalitys_span():
    kept = None
    for hour in range(24 * 200):
        kept = with_reading(kept, 1000 + hour // 24, float(hour), span_of("day_of_week"), left_out=False)
    assert len(kept.values) == span_of("day_of_week") == 57
    assert kept.last == 1000 + 199 and kept.values[-1] == 24 * 200 - 1  # the bucket's last read


# -- what a baseline may use ---------------------------------------------------------------------------

def test_the_judged_bucket_is_never_part_of_its_own_baseline():
    check = AnomalyCheck(range="Orders!A2:A", seasonality="none", min_history="7d")
    kept = Buckets(100, tuple([150.0] * 10) + (47.0,))  # this bucket's earlier read already said 47
    today = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=110, hours=20)
    result = evaluate(check, rows(47), today, UTC, past=Past(buckets={check.name: kept}))
    assert result.status == "fail"
    assert "usually 150 (10 days)" in result.message


def test_anomalous_buckets_are_left_out_of_later_baselines():
    days = Days(AnomalyCheck(range="Orders!A2:A", seasonality="none", min_history="7d"))
    for _ in range(10):
        days.read(150)
    assert days.read(5_000).status == "fail"
    assert days.kept.left_out == (days.kept.last,)
    after = days.read(151)
    assert after.status == "ok" and "usually 150 (10 days)" in after.message
    assert days.read(300).status == "fail"  # the band did not widen to take in the spike


def test_buckets_read_while_the_spreadsheet_failed_are_left_out():
    days = Days(AnomalyCheck(range="Orders!A2:A", seasonality="none", min_history="7d"))
    for _ in range(10):
        days.read(150)
    for _ in range(3):
        days.read(400, failing=True)  # another check failed: an incident, these are not normal
    result = days.read(150)
    assert result.status == "ok" and "usually 150 (10 days)" in result.message


def test_a_change_that_lasts_becomes_the_new_normal():
    days = Days(AnomalyCheck(range="Orders!A2:A", seasonality="none", min_history="7d"))
    for _ in range(14):
        days.read(150)
    told = [days.read(300).status for _ in range(14)]
    assert told[0] == "fail" and told[-1] == "ok"
    assert told.index("ok") <= 8  # once most of the last 14 days are at the new level


def test_a_level_shift_over_two_buckets_is_told_at_the_second():
    days = Days(AnomalyCheck(range="Orders!A2:A", seasonality="none", min_history="7d"))
    for n in range(14):
        days.read(100 + (n % 5) * 3 - 6)  # 94..106: a spread of ~4 %
    first = days.read(82)  # 18 % low: inside the band (5 spreads) but beyond 60 % of it
    second = days.read(82)
    assert first.status == "ok"
    assert second.status == "fail" and "the second day in a row" in second.message


def test_a_value_stuck_where_it_always_moved_is_told():
    days = Days(AnomalyCheck(range="Orders!A2:A", seasonality="none", min_history="7d"))
    for n in range(20):
        days.read(140 + (n * 7) % 11)
    statuses = [days.read(145).status for _ in range(4)]
    assert statuses == ["ok", "ok", "ok", "fail"]


# -- learning ------------------------------------------------------------------------------------------

def test_nothing_is_told_while_learning_and_it_says_how_far_it_is():
    days = Days(AnomalyCheck(range="Orders!A2:A", min_history="14d"))
    results = [days.read(150 if n != 3 else 5) for n in range(14)]
    assert all(result.status == "ok" for result in results)
    assert results[3].message == "5 rows in Orders!A2:A; learning, 3 of 14 days"
    assert results[13].message.endswith("learning, 13 of 14 days")
    waiting = days.read(150)  # min_history kept, but two Mondays: too few to judge a Monday by
    assert waiting.status == "ok" and "learning, only 2 Mondays to judge by, 3 needed" in waiting.message


def test_a_listed_holiday_is_not_judged_nor_kept():
    days = Days(AnomalyCheck(range="Orders!A2:A", holidays=[date(2026, 3, 23)]))
    days.weeks(3)
    holiday = days.read(3)
    assert holiday.status == "ok" and "holiday" in holiday.message
    assert days.kept.values[-1] is None


# -- the finding's words -------------------------------------------------------------------------------

def test_the_finding_says_what_was_expected_and_from_how_many_weeks():
    check = AnomalyCheck(range="Orders!A2:A", seasonality="hour_of_week", min_history="14d")
    tuesday_3pm = datetime(2026, 3, 3, 15, 10, tzinfo=UTC)
    number = bucket_number(tuesday_3pm, UTC, "hour")
    values: list[float | None] = [None] * (number - (number - 168 * 4))
    for week, count in enumerate((140, 162, 151, 149)):
        values[168 * week] = float(count)
    for offset in range(len(values)):  # the other hours: enough to learn their spread
        if values[offset] is None:
            values[offset] = 100.0 + offset % 7
    kept = Buckets(number - 168 * 4, tuple(values))
    result = evaluate(check, rows(47), tuesday_3pm, UTC, past=Past(buckets={check.name: kept}))
    assert result.status == "fail"
    assert result.message.startswith(
        "47 rows in Orders!A2:A, usually 140–162 on a Tuesday at this hour (4 Tuesdays): "
        "69 % below the usual ")
    assert "below the usual" in result.message


def test_its_sentence_and_its_refusals():
    check = AnomalyCheck(range="Orders!A2:A", metric="sum", sensitivity="high")
    assert check.name == "anomaly sum Orders!A2:A"
    assert check.explain().startswith("fails when its sum of Orders!A2:A is unusual for each weekday")
    assert check.as_written() == {"kind": "anomaly", "range": "Orders!A2:A", "metric": "sum",
                                  "sensitivity": "high"}
    with pytest.raises(ValidationError, match="min_history must be between 1d and 28d"):
        AnomalyCheck(range="Orders!A2:A", seasonality="hour_of_week", min_history="60d")
    with pytest.raises(ValidationError):
        AnomalyCheck(range="Orders!A2:A", seasonality="monthly")


def test_past_min_history_a_bucket_without_enough_usable_values_still_learns_and_says_why():
    check = AnomalyCheck(range="Orders!A2:A", min_history="7d")
    tuesday = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
    today = bucket_number(tuesday, UTC, "day")
    kept = Buckets(today - 9, (100.0,) * 9, (today - 7,))  # last Tuesday was left out
    result = evaluate(check, rows(3), tuesday, UTC, past=Past(buckets={check.name: kept}))
    assert result.status == "ok"
    assert result.message == "3 rows in Orders!A2:A; learning, only 0 Tuesdays to judge by, 3 needed"
