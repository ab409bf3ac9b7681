"""Durations as admins write them ("90s", "15m", "2h", "1d", "1h30m") and back.

One grammar for the whole project: the config's durations, the age conditions of freshness checks
("> 2h", in ``monitor.checks.conditions``) and the CLI's ``--for`` all parse here. ``parse_duration``
is the bare grammar; ``parse_positive_duration`` adds the config's rules on top (a unit is required,
zero is not a duration). ``format_duration`` is the inverse, used wherever a duration is shown as an
admin writes it (the config, the CLI's tables); ``human_duration`` is how a message says it to people
("2 hours and 5 minutes").
"""

from __future__ import annotations

import re
from datetime import timedelta

import humanize

from monitor.core.invalid_value import InvalidValue

__all__ = [
    "DURATION_FORMS", "format_duration", "human_duration", "parse_duration", "parse_positive_duration",
]

DURATION_FORMS = 'a number and a unit s, m, h, d or w, e.g. "90s", "15m", "2h", "1d", "1h30m"'

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION_PART_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_DURATION_RE = re.compile(r"^\s*(?:\d+(?:\.\d+)?\s*[smhdw]\s*)+$")
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def parse_duration(text: str) -> timedelta:
    """Parse "90s", "15m", "2h", "1d", "1w" or compounds like "1h30m" into a timedelta (>= 0).

    Raises ``InvalidValue`` naming the accepted forms.
    """
    if not isinstance(text, str) or _DURATION_RE.match(text) is None:
        raise InvalidValue(f"bad duration {text!r}", f"write {DURATION_FORMS}")
    seconds = sum(
        float(amount) * _UNIT_SECONDS[unit] for amount, unit in _DURATION_PART_RE.findall(text)
    )
    return timedelta(seconds=seconds)


def parse_positive_duration(value: object) -> timedelta:
    """A duration string -> timedelta > 0; bare numbers are refused because their unit is a guess."""
    if isinstance(value, timedelta):
        if value <= timedelta(0):
            raise InvalidValue("a duration must be longer than zero", f"write {DURATION_FORMS}")
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InvalidValue(f"expected a duration, got {type(value).__name__}", f"write {DURATION_FORMS}")
    if isinstance(value, (int, float)):
        raise InvalidValue(
            f"the number {value!r} has no unit",
            f'write it as a string with a unit, e.g. "{value}s" or "{value}m" ({DURATION_FORMS})',
        )
    duration = parse_duration(value)
    if duration <= timedelta(0):
        raise InvalidValue(f"duration {value!r} is zero; it must be positive", f"write {DURATION_FORMS}")
    return duration


def format_duration(duration: timedelta) -> str:
    """timedelta -> "1h30m", "90s" -> "1m30s", 0 -> "0s"; sub-second parts are dropped."""
    seconds = int(duration.total_seconds())
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    parts = []
    for unit, size in _UNITS:
        amount, seconds = divmod(seconds, size)
        if amount:
            parts.append(f"{amount}{unit}")
    return sign + ("".join(parts) or "0s")


def human_duration(seconds: float) -> str:
    """A duration as a message says it: "45 seconds", "10 minutes", "2 hours and 5 minutes", "2 days
    and 3 hours". Two units at most, seconds only below ten minutes: a phone's line has no room for
    "2 days, 3 hours, 4 minutes and 5 seconds", and nobody acts on the seconds of a two-day outage.
    The smaller unit is rounded down, so a duration is never shown longer than it was. A negative
    duration is shown as its size."""
    total = int(abs(seconds))
    if total < 600:  # a few minutes: the seconds still matter ("4 minutes and 30 seconds")
        return humanize.precisedelta(timedelta(seconds=total), minimum_unit="seconds", format="%d")
    smallest = "minutes" if total < 86400 else "hours"
    unit_seconds = 60 if smallest == "minutes" else 3600
    # precisedelta shows a fraction of its smallest unit; whole units keep the text short.
    whole = timedelta(seconds=total - total % unit_seconds)
    # Days, not months: a month is no fixed number of days, and "45 days" is exact.
    return humanize.precisedelta(whole, minimum_unit=smallest, suppress=["months", "years"], format="%d")
