"""Cell values that mean a moment in time, read the way Google returns them.

Accepted (anything else is "not a date" and ignored by freshness):

* **Numbers** (UNFORMATTED_VALUE with SERIAL_NUMBER, what the monitor requests): days since
  1899-12-30 00:00 *in the spreadsheet's time zone*, the fraction being the time of day
  (46027.5 = 2026-01-05 12:00 local). Rounded to the millisecond, the precision Sheets keeps.
  Numbers outside 1..2958465 (1899-12-31..9999-12-31) are not dates.
* **ISO 8601 strings** (FORMATTED_VALUE in most locales): "2026-01-05", "2026-01-05 14:30",
  "2026-01-05 14:30:00", "2026-01-05T14:30:00", optional fraction, and an optional "Z" or
  "+03:00" offset, which is then honoured.
* **Day-first with dots** (European locales): "05.01.2026", "05.01.2026 14:30[:00]".
* **Month-first with slashes** (en_US, Google's default locale): "1/5/2026" is 5 January 2026,
  "1/5/2026 14:30[:00]", and "1/5/2026 2:30[:00] PM".

Strings without an offset are wall-clock times in the spreadsheet's time zone. At a daylight-saving
overlap the first occurrence is taken (fold=0); at a gap the zone library's usual shift applies.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from .cells import is_number

SHEETS_EPOCH = datetime(1899, 12, 30)
MAX_SERIAL = 2958465  # 9999-12-31

_TIME = r"(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:\s*([AaPp][Mm]))?)?"
_DOTTED = re.compile(rf"^(\d{{1,2}})\.(\d{{1,2}})\.(\d{{4}}){_TIME}$")
_SLASHED = re.compile(rf"^(\d{{1,2}})/(\d{{1,2}})/(\d{{4}}){_TIME}$")
_ISO_START = re.compile(r"^\d{4}-\d{2}-\d{2}")


def date_of(value: Any, tz: tzinfo) -> datetime | None:
    """The aware moment a cell value stands for, or None if it is not a date (see module doc)."""
    if is_number(value):
        return from_serial(value, tz)
    if isinstance(value, str):
        return _from_text(value.strip(), tz)
    return None


def from_serial(serial: float, tz: tzinfo) -> datetime | None:
    if not 1 <= serial <= MAX_SERIAL:
        return None
    milliseconds = round(serial * 86_400_000)
    return (SHEETS_EPOCH + timedelta(milliseconds=milliseconds)).replace(tzinfo=tz)


def _from_text(text: str, tz: tzinfo) -> datetime | None:
    if _ISO_START.match(text):
        try:
            moment = datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            return None
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=tz)
    for pattern, day_first in ((_DOTTED, True), (_SLASHED, False)):
        match = pattern.match(text)
        if match:
            return _from_parts(match.groups(), day_first, tz)
    return None


def _from_parts(groups: tuple, day_first: bool, tz: tzinfo) -> datetime | None:
    first, second, year, hour, minute, second_of_minute, meridiem = groups
    day, month = (first, second) if day_first else (second, first)
    hour_value = int(hour or 0)
    if meridiem:
        if not 1 <= hour_value <= 12:
            return None
        hour_value = hour_value % 12 + (12 if meridiem.lower() == "pm" else 0)
    try:
        return datetime(
            int(year), int(month), int(day), hour_value, int(minute or 0),
            int(second_of_minute or 0), tzinfo=tz,
        )
    except ValueError:  # 31.02.2026, 25:00 and the like are text, not dates
        return None


def zone(tz: tzinfo | str | None) -> tzinfo:
    """A spreadsheet's time zone as evaluation takes it (a tzinfo, an IANA name, None for UTC)."""
    if tz is None:
        return UTC
    return ZoneInfo(tz) if isinstance(tz, str) else tz
