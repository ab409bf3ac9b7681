"""Messages about how things stand rather than about what just happened: reminders of what is still
failing, the summary after a round, the daily digest, and when each is owed.

Every count they show is the chat's part of the fleet (``monitor.engine.fleet``), in the one
sentence ``monitor.notify.counts`` words it with, so a summary, a digest and `status` agree. Pure:
``now`` comes in. The summary and the digest record in the alert memory that they were composed, so
each is composed once (:func:`round_summary`, :func:`daily_digest`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

from monitor.core.remedies import problem, remedy
from monitor.core.timefmt import format_utc
from monitor.core.zones import latest_slot, wall_clock
from monitor.engine.dlq import DeadLetter
from monitor.engine.fleet import Fleet
from monitor.engine.health import FAIL, WARN, SheetHealth
from monitor.engine.tasks import Round
from monitor.notify.counts import counts_in_words
from monitor.notify.documents import AlertMemory
from monitor.notify.messages import (
    Message,
    duration_text,
    error_text,
    esc,
    findings_text,
    listed,
    messages_for,
    more_line,
    sheet_link,
    utc_text,
)
from monitor.notify.settings import AlertSettings


@dataclass(frozen=True)
class Overview:
    """What a reminder, a summary or a digest reports: the chat's part of the fleet, each
    spreadsheet's record, name and dead-letter entry, and what the same message names already."""

    fleet: Fleet
    health: Mapping[str, SheetHealth]
    names: Mapping[str, str]
    dlq: Mapping[str, DeadLetter] = field(default_factory=dict)
    named: frozenset[str] = frozenset()  # spreadsheets the same message already names: not repeated


def failing_line(sid: str, overview: Overview, now: datetime) -> str:
    """'🔴 <name> failing for 2 hours: Stock: 3 cells show #REF! (H214)', or '🔴 <name> cannot be read
    for 2 days: it is not shared with the service account …. To fix: …': how long, and why."""
    record = overview.health[sid]
    since = record.down_since or record.since
    how_long = f" for {duration_text((now - since).total_seconds())}" if since else ""
    verb = "failing" if record.health == FAIL else "cannot be read"
    why = why_bad(sid, record, overview.dlq.get(sid))
    return f"🔴 {sheet_link(sid, overview.names.get(sid))} {verb}{how_long}{': ' + why if why else ''}"


def why_bad(sid: str, record: SheetHealth, entry: DeadLetter | None) -> str:
    """Why a spreadsheet is bad, in a line: its first finding, or what its dead letter says is wrong
    and the fix (a spreadsheet unreadable for too long has a finding saying so)."""
    if record.findings or entry is None:
        return findings_text(record.findings, limit=1, spreadsheet_id=sid)
    what, fix = problem(entry.last_error), remedy(entry.last_error, after_problem=True)
    text = esc(what) if what else error_text(entry.last_error)
    return text + (f". To fix: {esc(fix)}" if fix else "")


def compose_reminder(spreadsheet_ids: list[str], overview: Overview, now: datetime,
                     settings: AlertSettings, buttons=None) -> list[Message]:
    """One message listing the spreadsheets still failing (see ``memory.due_reminders``), with
    ``buttons`` (``alerts.Buttons``) for those it lists."""
    if not spreadsheet_ids:
        return []
    lines = [f"<b>sheet-monitor reminder: {len(spreadsheet_ids)} still failing</b>", ""]
    lines += listed(spreadsheet_ids, settings.max_items, lambda sid: failing_line(sid, overview, now),
                    more_line(settings.report_url))
    rows = buttons(spreadsheet_ids[:settings.max_items]) if buttons else ()
    return messages_for(f"reminder:{format_utc(now)}", "\n".join(lines), settings.max_length, rows)


# ---- what a summary and a digest report ----------------------------------------------------------


def counts_line(overview: Overview) -> str:
    return counts_in_words(overview.fleet.counts())


def _failing_lines(overview: Overview, now: datetime, settings: AlertSettings, title: str) -> list[str]:
    """'<title> (N):' and a line per spreadsheet failing now, longest-failing first; [] if none."""
    bad = sorted(overview.fleet.failing, key=lambda sid: _longest_failing_first(sid, overview.health[sid]))
    if not bad:
        return []
    shown = [sid for sid in bad if sid not in overview.named]
    if not shown:
        return [f"{title} ({len(bad)}): all named above"]
    above = len(bad) - len(shown)
    lines = listed(shown, settings.max_items, lambda sid: failing_line(sid, overview, now),
                   more_line(settings.report_url))
    return [f"{title} ({len(bad)}):", *lines] + ([f"{above} named above"] if above else [])


def _warning_lines(overview: Overview, settings: AlertSettings) -> list[str]:
    """'Warning (N):' and a line per warning spreadsheet, by name; [] if none."""
    health = overview.health
    warning = sorted(overview.fleet.with_standing(WARN),
                     key=lambda sid: (overview.names.get(sid) or sid, sid))
    if not warning:
        return []

    def line(sid: str) -> str:
        found = findings_text(health[sid].findings, limit=1)
        return f"🟡 {sheet_link(sid, overview.names.get(sid))} warns{': ' + found if found else ''}"

    return [f"Warning ({len(warning)}):",
            *listed(warning, settings.max_items, line, more_line(settings.report_url, "warn"))]


def _longest_failing_first(sid: str, record: SheetHealth) -> tuple[bool, datetime, str]:
    # One whose episode start is unknown goes first, as it always has (it may be the oldest).
    return record.down_since is not None, record.down_since or _EPOCH, sid


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# ---- the round summary -----------------------------------------------------------------------------


def summary_due(mode: str, round_complete: bool, round_id: str | None, memory: AlertMemory) -> bool:
    """A summary after a completed round not yet summarised: always (every_round), or only when the
    round had alert-worthy events (on_change)."""
    if mode == "off" or not round_complete or round_id is None:
        return False
    if memory.summarized_round == round_id:
        return False
    if mode == "every_round":
        return True
    return memory.round is not None and memory.round.id == round_id and memory.round.changes > 0


def compose_summary(rnd: Round, overview: Overview, now: datetime, settings: AlertSettings) -> list[Message]:
    took = duration_text((now - rnd.started_at).total_seconds())
    lines = [f"<b>sheet-monitor: round done</b> (started {utc_text(rnd.started_at)}, {took})",
             counts_line(overview)]
    failing = _failing_lines(overview, now, settings, "Failing now")
    if failing:
        lines += ["", *failing]
    return messages_for(f"summary:{rnd.id}", "\n".join(lines), settings.max_length)


def round_summary(
    memory: AlertMemory, rnd: Round | None, overview: Overview, now: datetime, settings: AlertSettings
) -> tuple[AlertMemory, list[Message]]:
    """The summary of ``rnd`` when one is owed, and the memory that it was composed."""
    if rnd is None or not summary_due(settings.summary, rnd.is_complete(), rnd.id, memory):
        return memory, []
    return replace(memory, summarized_round=rnd.id), compose_summary(rnd, overview, now, settings)


# ---- the list after the state was lost -------------------------------------------------------------


def compose_relearned(overview: Overview, lost_at: datetime, now: datetime, settings: AlertSettings
                      ) -> list[Message]:
    """What the first round after the state was lost found failing and warning, in one list: the
    problems people knew of before the loss are among them, told again once rather than as new."""
    lines = [f"<b>sheet-monitor: the first round since the state was lost</b> ({utc_text(lost_at)})",
             "What fails and warns now, known before or not (the monitor cannot tell which):", ""]
    lines += _failing_lines(overview, now, settings, "Failing") or ["Nothing is failing."]
    warnings = _warning_lines(overview, settings)
    lines += ["", *warnings] if warnings else []
    lines += ["", counts_line(overview)]
    return messages_for(f"relearned:{format_utc(lost_at)}", "\n".join(lines), settings.max_length)


# ---- the daily digest ------------------------------------------------------------------------------


def digest_slot(now: datetime, digest_at: time, tz: str) -> datetime:
    """The latest scheduled digest moment at or before ``now``, in UTC: ``digest_at`` read in ``tz``
    on each local date, DST jumps as ``monitor.core.zones.latest_slot`` takes them."""
    return latest_slot(now, digest_at, ZoneInfo(tz))


def digest_due(now: datetime, last_digest_at: datetime | None, digest_at: time | None, tz: str) -> bool:
    """Is a digest owed? Yes when no digest was sent since the latest scheduled moment. After an
    outage of several days, one digest (not one per missed day). Pure: same inputs, same answer."""
    if digest_at is None:
        return False
    return last_digest_at is None or last_digest_at < digest_slot(now, digest_at, tz)


def compose_digest(overview: Overview, now: datetime, settings: AlertSettings) -> list[Message]:
    """The daily digest: what is still failing first (longest first), then what warns, the counts."""
    # The team's clock, written as every message writes a moment ("2026-03-02 15:00 UTC+3").
    clock = f"{wall_clock(now, ZoneInfo(settings.timezone))} ({settings.timezone})"
    lines = [f"<b>sheet-monitor daily digest</b> {esc(clock)}", ""]
    lines += _failing_lines(overview, now, settings, "Still failing") or ["Nothing is failing."]
    warnings = _warning_lines(overview, settings)
    lines += ["", *warnings] if warnings else []
    lines += ["", counts_line(overview)]
    slot = digest_slot(now, settings.digest_at or time(0), settings.timezone)
    return messages_for(f"digest:{format_utc(slot)}", "\n".join(lines), settings.max_length)


def daily_digest(
    memory: AlertMemory, overview: Overview, now: datetime, settings: AlertSettings
) -> tuple[AlertMemory, list[Message]]:
    """The digest when one is owed, and the memory that it was composed. A fresh install (no
    digest ever) waits for the next digest time rather than sending one now."""
    if memory.last_digest_at is None:
        return replace(memory, last_digest_at=now), []
    if not digest_due(now, memory.last_digest_at, settings.digest_at, settings.timezone):
        return memory, []
    return replace(memory, last_digest_at=now), compose_digest(overview, now, settings)
