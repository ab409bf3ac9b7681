"""Spreadsheets' time zones as Google names them (monitor.core.zones), and moments shown with their zone."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from monitor.core.zones import offset_label, wall_clock, zone_named

NOON_UTC = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def test_a_cldr_name_is_that_zone():
    assert zone_named("Europe/Moscow") == ZoneInfo("Europe/Moscow")
    assert NOON_UTC.astimezone(zone_named("Etc/GMT")).hour == 12  # what a service account's files get


def test_googles_custom_zone_is_a_fixed_offset():
    # "If the time zone isn't recognized, this may be a custom time zone such as GMT-07:00."
    zone = zone_named("GMT-07:00")
    assert NOON_UTC.astimezone(zone).hour == 5
    assert zone.tzname(None) == "GMT-07:00"
    assert NOON_UTC.astimezone(zone_named("GMT+05:30")).strftime("%H:%M") == "17:30"


@pytest.mark.parametrize("name", ["Mars/Olympus_Mons", "", "GMT+15:00", "GMT-07:75", "../etc/passwd", None])
def test_anything_else_is_refused(name):
    with pytest.raises(ValueError, match="time zone"):
        zone_named(name)


def test_offsets_read_as_people_read_them():
    assert offset_label(timedelta(0)) == "UTC"
    assert offset_label(None) == "UTC"
    assert offset_label(timedelta(hours=3)) == "UTC+3"
    assert offset_label(timedelta(hours=-7)) == "UTC-7"
    assert offset_label(timedelta(hours=5, minutes=30)) == "UTC+5:30"
    assert offset_label(-timedelta(hours=3, minutes=30)) == "UTC-3:30"


def test_a_moment_on_the_wall_clock_of_its_zone_with_the_offset_then_in_force():
    assert wall_clock(NOON_UTC, ZoneInfo("Europe/Moscow")) == "2026-01-05 15:00 UTC+3"
    assert wall_clock(NOON_UTC, UTC) == "2026-01-05 12:00 UTC"
    new_york = ZoneInfo("America/New_York")
    assert wall_clock(NOON_UTC, new_york) == "2026-01-05 07:00 UTC-5"  # winter
    assert wall_clock(NOON_UTC.replace(month=7), new_york) == "2026-07-05 08:00 UTC-4"  # summer
