import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from monitor.core.timefmt import format_utc, parse_utc

MOMENT = datetime(2026, 1, 5, 3, 47, 0, 123456, tzinfo=UTC)


def test_stored_times_are_utc_with_z_and_milliseconds():
    assert format_utc(MOMENT) == "2026-01-05T03:47:00.123Z"
    assert format_utc(MOMENT.astimezone(timezone(timedelta(hours=3)))) == "2026-01-05T03:47:00.123Z"
    with pytest.raises(ValueError):
        format_utc(datetime(2026, 1, 5, 3, 47))


def test_parsing_gives_back_an_aware_utc_moment():
    assert parse_utc("2026-01-05T03:47:00.123Z") == MOMENT.replace(microsecond=123000)
    assert parse_utc("2026-01-05T06:47:00+03:00") == datetime(2026, 1, 5, 3, 47, tzinfo=UTC)
    assert parse_utc("2026-01-05T03:47:00Z").tzinfo is UTC


def test_a_time_without_an_offset_is_utc_whatever_the_hosts_zone(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert parse_utc("2026-01-05T03:47:00") == datetime(2026, 1, 5, 3, 47, tzinfo=UTC)
    finally:
        monkeypatch.undo()
        time.tzset()
