"""Durations as admins write them ("90s", "15m", "2h", "1d", "1h30m") and back.

Parsing lives with the conditions in ``monitor.checks.conditions`` (one grammar for the whole
project); this module adds the config's rules on top (a unit is required, zero is not a duration)
and the inverse, ``format_duration``, used wherever a duration is shown to people.
"""

from __future__ import annotations

from datetime import timedelta

from monitor.checks.conditions import DURATION_FORMS, parse_duration

__all__ = ["DURATION_FORMS", "DurationError", "format_duration", "parse_positive_duration"]

_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


class DurationError(ValueError):
    """A duration the config cannot accept; ``problem`` says what is wrong, ``fix`` how to write it."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}: {fix}")
        self.problem = problem
        self.fix = fix


def parse_positive_duration(value: object) -> timedelta:
    """A duration string -> timedelta > 0; bare numbers are refused because their unit is a guess."""
    if isinstance(value, timedelta):
        if value <= timedelta(0):
            raise DurationError("a duration must be longer than zero", f"write {DURATION_FORMS}")
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise DurationError(f"expected a duration, got {type(value).__name__}", f"write {DURATION_FORMS}")
    if isinstance(value, (int, float)):
        raise DurationError(
            f"the number {value!r} has no unit",
            f'write it as a string with a unit, e.g. "{value}s" or "{value}m" ({DURATION_FORMS})',
        )
    try:
        duration = parse_duration(value)
    except ValueError:
        raise DurationError(f"bad duration {value!r}", f"write {DURATION_FORMS}") from None
    if duration <= timedelta(0):
        raise DurationError(f"duration {value!r} is zero; it must be positive",
                            f"write {DURATION_FORMS}")
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
