"""What a read leaves for an anomaly check in the spreadsheet's history (monitor.engine.history): one
value per bucket on the spreadsheet's clock, the buckets read while it failed left out, bounded, and
stored as the state stores it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from monitor.checks import AnomalyCheck, CheckResult, bucket_number
from monitor.engine.history import Linked, past_for, recorded
from monitor.state.schema import HISTORY

CHECK = AnomalyCheck(range="Orders!A2:A", seasonality="hour_of_day", min_history="1d")
OTHER = "threshold min Orders!C2:C"
NOON = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def read(before, at, value, *, own="ok", other="ok", zone=UTC):
    results = [CheckResult(CHECK.name, "anomaly", own, "", value),
               CheckResult(OTHER, "threshold", other, "", 1)]
    return recorded([CHECK], Linked(), before, results, {}, at, zone)


def test_each_bucket_keeps_its_last_read_and_reads_in_an_incident_are_left_out():
    history = read(None, NOON, 10.0)
    history = read(history, NOON + timedelta(minutes=30), 11.0)  # the same hour: its last read wins
    history = read(history, NOON + timedelta(hours=1), 50.0, other="fail")  # the spreadsheet fails
    history = read(history, NOON + timedelta(hours=2), 60.0, own="warn")  # judged unusual itself
    history = read(history, NOON + timedelta(hours=3), 12.0, other="warn")  # a warning is no incident
    kept = history.buckets[CHECK.name]
    first = bucket_number(NOON, UTC, "hour")
    assert (kept.first, kept.values) == (first, (11.0, 50.0, 60.0, 12.0))
    assert kept.left_out == (first + 1, first + 2)
    assert [value for _, value, out in kept.points(first + 4) if not out] == [11.0, 12.0]
    assert past_for([CHECK], Linked(), {"s": history}, "s", {}, {}).buckets[CHECK.name] == kept


def test_buckets_follow_the_spreadsheets_clock_and_stay_within_the_span():
    tokyo = ZoneInfo("Asia/Tokyo")
    history = None
    for hour in range(24 * 30):
        history = read(history, NOON + timedelta(hours=hour), float(hour), zone=tokyo)
    kept = history.buckets[CHECK.name]
    assert kept.last == bucket_number(NOON + timedelta(hours=24 * 30 - 1), tokyo, "hour")
    assert len(kept.values) == 24 * 14 + 1  # hour_of_day keeps 14 days of hours, and the one judged
    text = HISTORY.encode(history)
    assert HISTORY.decode(text) == history
    assert len(text.encode()) < 4_000
