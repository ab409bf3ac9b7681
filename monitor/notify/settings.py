"""How people want to be told: what the config's [alerts] table decides, with the defaults' reasons."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time, timedelta
from zoneinfo import ZoneInfo

# Telegram refuses a message longer than this many characters (counted after parsing the HTML).
TELEGRAM_MAX_LENGTH = 4096
# Messages are composed this much shorter, so the notes delivery may put above one always fit: that
# it may repeat one whose answer was lost, that it was held while Telegram refused its chat
# (monitor.notify.outbox, monitor.notify.held): a note that did not fit would go unsaid.
NOTES_ROOM = 600
COMPOSED_MAX_LENGTH = TELEGRAM_MAX_LENGTH - NOTES_ROOM
SUMMARY_MODES = ("on_change", "every_round", "off")


@dataclass(frozen=True)
class AlertSettings:
    """What the CLI fills in from the config's [alerts] table; defaults with their reason."""

    # A list (an alert's lines, what still fails) shows this many, then "+K more" and where the rest
    # are: ten lines of a few hundred characters are one Telegram message, one phone screen or two.
    max_items: int = 10
    # An alert with more new problems than this (a first round, a broken template) is one short message
    # instead: counts by kind, the worst few, where the whole list is (monitor.notify.flood).
    flood_after: int = 10
    report_url: str | None = None  # [report] url: where the status page is, linked for the whole list
    reminder_every: timedelta = timedelta(hours=4)  # slow enough not to be muted by the team
    summary: str = "on_change"  # after a round: on_change | every_round | off
    digest_at: time | None = time(9, 0)  # local time of the daily digest; None: no digest
    timezone: str = "UTC"  # IANA name the digest time is read in; stored times stay UTC
    max_length: int = COMPOSED_MAX_LENGTH
    # A failing spreadsheet's incident nobody acknowledged this long is told once more, naming its
    # owner (monitor.notify.escalation); None: never.
    escalate_after: timedelta | None = None

    def __post_init__(self) -> None:
        if self.summary not in SUMMARY_MODES:
            raise ValueError(f"summary must be one of {SUMMARY_MODES}, not {self.summary!r}")
        if self.max_items < 1 or self.max_length < 200:
            raise ValueError("max_items must be >= 1 and max_length >= 200")
        ZoneInfo(self.timezone)  # raises for an unknown zone, at config time rather than at 9:00

    @classmethod
    def from_config(cls, alerts_config: object, **overrides: object) -> AlertSettings:
        """From ``Config.alerts`` (monitor.config.AlertsConfig: summary, digest_at, timezone,
        reminder_every, escalate_after); the config has already validated every value."""
        return cls(
            summary=alerts_config.summary,
            digest_at=alerts_config.digest_at,
            timezone=alerts_config.timezone,
            reminder_every=alerts_config.reminder_every,
            escalate_after=alerts_config.escalate_after,
            **overrides,
        )
