"""Durations as admins write them ("90s", "15m", "2h", "1d", "1h30m") and back.

One grammar for the whole project: the config's durations, the age conditions of freshness checks
("> 2h", in ``monitor.checks.conditions``) and the CLI's ``--for`` all parse here. ``parse_duration``
is the bare grammar; ``parse_positive_duration`` adds the config's rules on top (a unit is required,
zero is not a duration). ``format_duration`` is the inverse, used wherever a duration is shown.
"""

from __future__ import annotations

import re
from datetime import timedelta

from monitor.core.invalid import InvalidValue

__all__ = ["DURATION_FORMS", "format_duration", "parse_duration", "parse_positive_duration"]

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
