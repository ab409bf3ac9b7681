"""The fleet's counts in the team's words: the one sentence every message counts spreadsheets with."""

from __future__ import annotations

from collections.abc import Mapping

from monitor.core.wording import counted
from monitor.engine.fleet import MAINTENANCE, MUTED, SHOWN_ORDER, Fleet
from monitor.engine.health import ERROR, FAIL, OK, SKIPPED, UNKNOWN, WARN

IN_WORDS = {ERROR: "cannot be read", FAIL: "failing", WARN: "warning", SKIPPED: "paused",
            MUTED: "muted", MAINTENANCE: "in maintenance", UNKNOWN: "not checked yet", OK: "ok"}


def counts_in_words(counts: Mapping[str, int]) -> str:
    """'750 spreadsheets: 685 ok · 15 cannot be read · 37 failing · 12 warning · 1 not checked yet':
    ok first (what a glance looks for), then the rest worst first, leaving out what none has."""
    parts = [f"{counts.get(OK, 0)} ok"] + [f"{counts[shown]} {IN_WORDS[shown]}" for shown in SHOWN_ORDER
                                           if shown != OK and counts.get(shown)]
    return f"{counted(sum(counts.values()), 'spreadsheet')}: " + " · ".join(parts)


def failing_now_line(fleet: Fleet) -> str:
    """'Failing now: 5 of 49 spreadsheets': what an alert says under its headline of what changed."""
    return f"Failing now: {len(fleet.failing)} of {counted(len(fleet), 'spreadsheet')}"
