"""Spreadsheets' time zones, named as Google names them, and moments shown with their zone.

Every spreadsheet has its own time zone (``properties.timeZone``, File > Settings in the Sheets UI),
and the date serials in its cells are wall-clock times in that zone. Google names it "in CLDR format
such as America/New_York", and "if the time zone isn't recognized, this may be a custom time zone such
as GMT-07:00" (Sheets API reference, SpreadsheetProperties). CLDR's zone ids are IANA's, so the first
kind is a ``ZoneInfo`` and the second a fixed offset. Shared by the monitor and the sandbox.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# Google's custom zone: "GMT-07:00", "GMT+05:30". Offsets on Earth run from -12:00 to +14:00.
_CUSTOM = re.compile(r"^GMT([+-])(\d{1,2}):(\d{2})$")
_LARGEST_OFFSET = timedelta(hours=14)


def zone_named(name: str) -> tzinfo:
    """The zone ``name`` stands for, as a spreadsheet's ``timeZone`` gives it; ValueError when it is
    neither a zone this system's time-zone database knows nor Google's "GMT±HH:MM" form."""
    match = _CUSTOM.match(name) if isinstance(name, str) else None
    if match:
        sign, hours, minutes = match.groups()
        offset = timedelta(hours=int(hours), minutes=int(minutes))
        if int(minutes) >= 60 or offset > _LARGEST_OFFSET:
            raise ValueError(f"time zone {name!r} is not a real offset (at most GMT+14:00 / GMT-12:00)")
        return timezone(-offset if sign == "-" else offset, name)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise ValueError(f"unknown time zone {name!r}") from None


def offset_label(offset: timedelta | None) -> str:
    """An offset from UTC as people read it: "UTC", "UTC+3", "UTC-7", "UTC+5:30"."""
    if not offset:
        return "UTC"
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    hours, rest = divmod(minutes, 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def wall_clock(moment: datetime, zone: tzinfo) -> str:
    """``moment`` as a clock in ``zone`` shows it, with the offset that makes it unambiguous:
    "2026-01-05 14:30 UTC+3". The offset is the one in force at that moment (summer or winter)."""
    local = moment.astimezone(zone)
    return f"{local:%Y-%m-%d %H:%M} {offset_label(local.utcoffset())}"


def latest_slot(now: datetime, at: time, zone: tzinfo, weekday: int | None = None) -> datetime:
    """The latest moment at or before ``now`` (aware) when a clock in ``zone`` shows ``at``, on any
    day (``weekday`` None) or on that weekday only (0 Monday .. 6 Sunday), in UTC.

    A time skipped by a DST jump (02:30 on a spring-forward night) happens at the same distance after
    the jump (03:30); a time that occurs twice (autumn) counts once, at its first occurrence
    (``fold=0``): the rule of the daily digest and of maintenance windows alike.
    """
    local_now = now.astimezone(zone)
    # A week and a day back: a DST shift can push the latest day's slot past "now" by an hour.
    for days_back in range(9):
        day = local_now.date() - timedelta(days=days_back)
        if weekday is not None and day.weekday() != weekday:
            continue
        slot = datetime.combine(day, at.replace(tzinfo=None), tzinfo=zone).astimezone(UTC)
        if slot <= now:
            return slot
    raise AssertionError("unreachable: a slot eight days back is always in the past")
