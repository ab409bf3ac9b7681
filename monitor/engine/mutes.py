"""Muted spreadsheets: an admin silenced one until a time, with a reason for the next admin.

A muted spreadsheet is left out of new rounds and its alerts go to nobody. A mute ends by itself;
one whose end has passed silences nothing (it is dropped at the next mute or unmute). A mute "until
fixed" is different: the spreadsheet is still read (how else would it be seen fixed?), only silenced,
and the mute ends with its incident (``monitor.engine.incidents``), or after ``UNTIL_FIXED_AT_MOST``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document

# A mute "until fixed" of a spreadsheet nobody fixes ends anyway: a month of silence is long enough
# for anyone to have forgotten why.
UNTIL_FIXED_AT_MOST = timedelta(days=30)


@document
class Mute:
    until: UtcTime
    reason: str
    muted_at: UtcTime | None = None
    name: str = ""  # the spreadsheet's name when muted: said if it leaves the config meanwhile
    by: str | None = None  # who muted it ("@ivan" from the chat, "admin" from the command line)
    until_fixed: bool = False  # ends when the spreadsheet's incident is resolved; it is still read

    def in_force(self, now: datetime) -> bool:
        return self.until > now

    @property
    def skips_reads(self) -> bool:
        """A mute for a while leaves the spreadsheet out of rounds; one until fixed must not."""
        return not self.until_fixed


def active_mutes(mutes: Mapping[str, Mute], now: datetime) -> dict[str, Mute]:
    """The mutes in force at ``now``, by spreadsheet id."""
    return {sid: mute for sid, mute in mutes.items() if mute.in_force(now)}
