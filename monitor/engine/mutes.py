"""Muted spreadsheets: an admin silenced one until a time, with a reason for the next admin.

A muted spreadsheet is left out of new rounds and its alerts go to nobody. A mute ends by itself;
one whose end has passed silences nothing (it is dropped at the next mute or unmute).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document


@document
class Mute:
    until: UtcTime
    reason: str
    muted_at: UtcTime | None = None
    name: str = ""  # the spreadsheet's name when muted: said if it leaves the config meanwhile

    def in_force(self, now: datetime) -> bool:
        return self.until > now


def active_mutes(mutes: Mapping[str, Mute], now: datetime) -> dict[str, Mute]:
    """The mutes in force at ``now``, by spreadsheet id."""
    return {sid: mute for sid, mute in mutes.items() if mute.in_force(now)}
