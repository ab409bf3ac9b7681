"""What the status page shows, as plain data: built once from the config and the state, then drawn as
HTML (``monitor.report.page``) or printed as JSON (``sheet-monitor report --json``, the same dict).

Everything here is a pure function of (config, state, now): no I/O, no clock. The shape of the JSON
is documented in docs/operations.md ("The status page").
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from monitor.admin.reports import breakers_list, dlq_list, edit_lag_report, incident_row
from monitor.checks import AnomalyCheck, banded
from monitor.config import Config, Sheet
from monitor.core.errors import ErrorInfo
from monitor.core.remedies import problem, remedy
from monitor.core.timefmt import format_utc
from monitor.engine.fleet import Fleet
from monitor.engine.health import ERROR, FAIL, OK, UNKNOWN, WARN, Finding, SheetHealth, VerdictChange
from monitor.engine.history import SheetHistory
from monitor.engine.runlog import RunRecord, runs_since
from monitor.notify.destinations import all_halts
from monitor.notify.messages import error_text, sheet_url, tab_url
from monitor.state import State
from monitor.watchdog.judge import RunnerReading, WatchdogSettings, judge_runner

# Problems listed with their findings, at most: a page of 700 failing spreadsheets is a page nobody
# reads; the counts say how many more, and `sheet-monitor sheets --status fail` lists them all.
PROBLEMS_SHOWN = 200
FINDINGS_SHOWN = 5  # per spreadsheet; the rest are counted
# Timeline strips drawn, at most: only spreadsheets that warned or failed get one (for 750
# sheets a strip each is a wall of green), the rest are counted.
STRIPS_SHOWN = 150
STRIP_HEALTH = {OK: "ok", WARN: "warn", FAIL: "fail", ERROR: "fail", UNKNOWN: "unknown"}  # error: failing
# An anomaly finding's buckets drawn with their band: seven weeks of days, or two days of hours.
SERIES_BUCKETS = 48
NOT_OK = frozenset({"warn", "fail"})  # a strip's healths that earn it a place (unknown is not known, not bad)


def build_report(config: Config, state: State, now: datetime) -> dict[str, Any]:
    """The whole page as a JSON-ready dict (times as ISO-8601 UTC strings)."""
    keep = config.report.keep
    mutes = state.active_mutes(now)
    names = {sheet.id: sheet.name for sheet in config.sheets}
    fleet = Fleet.of(state, names, now, config.maintenance)
    runs = list(runs_since(state.runlog, now - keep))
    start = _history_start(config, state, runs, now)
    return {
        "generated_at": format_utc(now),
        "keep_seconds": keep.total_seconds(),
        "fleet": {"total": len(fleet), "by_health": fleet.counts()},
        "problems": _problems(config.sheets, state, fleet.standings),
        "muted": [{"id": sid, "name": names[sid], "url": sheet_url(sid),
                   "until": format_utc(mutes[sid].until), "reason": mutes[sid].reason}
                  for sid in sorted(fleet.muted, key=lambda sid: mutes[sid].until)],
        "maintenance": [{"id": sid, "name": names[sid], "url": sheet_url(sid),
                         "until": format_utc(fleet.windows[sid].end), "reason": fleet.windows[sid].reason}
                        for sid in sorted(fleet.in_maintenance, key=lambda sid: fleet.windows[sid].end)],
        "breakers": [row for row in breakers_list(state, names, now, names) if row["state"] != "closed"],
        "dlq": [{**row, "unreadable": _unreadable(state.dlq[row["id"]].last_error)}
                for row in dlq_list(state, now, names)],
        "runs": _runs(config, runs),
        "quota_per_minute": project_quotas(config),
        "round_interval_seconds": config.run.round_interval.total_seconds(),
        "timelines": _timelines(config.sheets, state, start, now),
        "monitor": _monitor(config, state, now, fleet),
    }


def _problems(sheets: Iterable[Sheet], state: State, shown: Mapping[str, str]) -> dict[str, Any]:
    """Failing spreadsheets first, then warning ones; each with its findings linked to their cells."""
    rank = {ERROR: 0, FAIL: 0, WARN: 1}
    bad = [sheet for sheet in sheets if shown[sheet.id] in rank]
    bad.sort(key=lambda sheet: (rank[shown[sheet.id]], sheet.name.lower()))
    listed = []
    for sheet in bad[:PROBLEMS_SHOWN]:
        record = state.health.get(sheet.id) or SheetHealth()
        error = state.dlq.get(sheet.id)
        listed.append({
            "id": sheet.id, "name": sheet.name, "url": sheet_url(sheet.id), "health": shown[sheet.id],
            "since": format_utc(record.since) if record.since else None,
            "findings": [_finding(sheet.id, finding) for finding in record.findings[:FINDINGS_SHOWN]],
            "more_findings": max(0, len(record.findings) - FINDINGS_SHOWN),
            "error": error.last_error.message if error else None,
            "unreadable": _unreadable(error.last_error) if error else None,
            "tags": list(sheet.tags), "owner": sheet.owner,
            "incident": incident_row(state.incidents.get(sheet.id)),
            "series": _anomaly_series(sheet, record.findings[:FINDINGS_SHOWN], state.history.get(sheet.id)),
        })
    return {"listed": listed, "more": max(0, len(bad) - PROBLEMS_SHOWN)}


def _anomaly_series(sheet: Sheet, findings: Iterable[Finding], history: SheetHistory | None
                    ) -> list[dict[str, Any]]:
    """Each anomaly finding's recent buckets with the band its baseline allowed, to draw: what the
    check took as usual, beside what the value did."""
    checks = {check.name: check for check in sheet.checks if isinstance(check, AnomalyCheck)}
    drawn = []
    for finding in findings:
        check = checks.get(finding.check)
        kept = history.buckets.get(finding.check) if history and check else None
        if kept is None:
            continue
        points = [{"at": at.isoformat(), "value": value, "low": low, "high": high}
                  for at, value, low, high in banded(check, kept, SERIES_BUCKETS)]
        drawn.append({"check": finding.check, "points": points})
    return drawn


def _unreadable(error: ErrorInfo) -> dict[str, str | None]:
    """A read refused for good, in the alert's words: what is wrong and what to do (None when
    Google's words are all there is to say), then Google's words as the alert quotes them."""
    # As the alert's (monitor.notify.render): the fix follows the problem's sentence, so it need not
    # repeat what that names. error_text escapes for Telegram and adds no tag: unescaped, it is the
    # text the chat shows.
    return {"problem": problem(error), "fix": remedy(error, after_problem=True),
            "google": html.unescape(error_text(error))}


def _finding(spreadsheet_id: str, finding: Finding) -> dict[str, Any]:
    cell = finding.cells[0] if finding.cells else None
    local = (cell.local or str(cell)) if cell else None  # a whole tab by its name
    url = sheet_url(spreadsheet_id) if finding.gid is None else tab_url(spreadsheet_id, finding.gid, local)
    return {"check": finding.check, "status": finding.status, "message": finding.message,
            "cells": [str(cell) for cell in finding.cells[:3]], "url": url}


def project_quotas(config: Config) -> dict[str, int]:
    """Each project's reads per minute at most: the slower of its credentials' and its own quota."""
    google = config.google
    per_user, per_project = google.read_requests_per_minute, google.project_read_requests_per_minute
    return {project: min(len(members) * per_user, per_project)
            for project, members in google.projects.items()}


def _history_start(config: Config, state: State, runs: Iterable[RunRecord], now: datetime) -> datetime:
    """Where the page's time axes begin: ``[report] keep`` ago, or later when the state's history
    begins later (a fresh install: its first run), so that a day of runs is not drawn as a dot at
    the end of a week. At least one round interval before ``now``: a first run's page is not an axis
    of seconds."""
    oldest = now - config.report.keep
    moments = [run.started_at for run in runs]
    for record in filter(None, (state.health.get(sheet.id) for sheet in config.sheets)):
        if record.changes:
            moments.append(record.changes[0].at)
        elif record.since is not None:  # a record written before changes were kept
            moments.append(record.since)
    if not moments:
        return oldest
    return max(oldest, min(min(moments), now - config.run.round_interval))


def _runs(config: Config, records: Iterable[RunRecord]) -> list[dict[str, Any]]:
    runs = []
    for record in records:
        minutes = max(record.duration_seconds, 60.0) / 60  # a run under a minute is within one window
        counts = record.counts
        runs.append({
            "run_id": record.run_id, "started_at": format_utc(record.started_at),
            "duration_seconds": record.duration_seconds, "budget_seconds": record.budget_seconds,
            "outcome": record.outcome.value,
            "reads": sum(counts.reads_by_credential.values()),
            "reads_per_minute": {project: round(reads / minutes, 1)
                                 for project, reads in sorted(counts.reads_by_project.items())},
            "quota_refusals": counts.quota_refusals, "retries": sum(counts.retries_by_class.values()),
            "retries_by_class": dict(counts.retries_by_class), "failed": counts.dead_lettered,
            "health": dict(record.health),
        })
    return runs


def _timelines(sheets: Iterable[Sheet], state: State, start: datetime, now: datetime) -> dict[str, Any]:
    """A strip of (from, to, health) per spreadsheet that warned or failed since ``start``. Not known
    yet (before its first check, or before the oldest change it kept) is not "not ok": a
    spreadsheet ok at every check since is ok all the time, and one never checked is counted apart."""
    strips, steady, unchecked = [], 0, 0
    for sheet in sheets:
        record = state.health.get(sheet.id)
        segments = _segments(record, start, now)
        bad = sum(s["seconds"] for s in segments if s["health"] in NOT_OK)
        # Warning or failing now counts even when it became so this very instant (no stretch yet).
        if bad or (record is not None and STRIP_HEALTH[record.health] in NOT_OK):
            strips.append({"id": sheet.id, "name": sheet.name, "url": sheet_url(sheet.id),
                           "segments": segments, "bad_seconds": bad})
        elif record is None or record.health == UNKNOWN:
            unchecked += 1
        else:
            steady += 1
    strips.sort(key=lambda strip: (-strip["bad_seconds"], strip["name"].lower()))
    return {"start": format_utc(start), "end": format_utc(now), "strips": strips[:STRIPS_SHOWN],
            "more": max(0, len(strips) - STRIPS_SHOWN), "ok_all_the_time": steady,
            "not_checked_yet": unchecked}


def _segments(record: SheetHealth | None, start: datetime, now: datetime) -> list[dict[str, Any]]:
    """The health over [start, now] as consecutive segments; before its first kept change, unknown."""
    if record is None:
        return [{"from": format_utc(start), "seconds": (now - start).total_seconds(), "health": "unknown"}]
    changes = list(record.changes)
    if not changes and record.since is not None:  # a record written before changes were kept
        changes = [VerdictChange(record.since, record.health)]
    points: list[tuple[datetime, str]] = [(start, "unknown")]
    for change in changes:
        points.append((max(change.at, start), STRIP_HEALTH[change.health]))
    segments = []
    for (begin, health), (end, _) in zip(points, [*points[1:], (now, "")], strict=True):
        if end > begin:
            segments.append({"from": format_utc(begin), "seconds": (end - begin).total_seconds(),
                             "health": health})
    return segments or [{"from": format_utc(start), "seconds": 0.0, "health": STRIP_HEALTH[record.health]}]


def _monitor(config: Config, state: State, now: datetime, fleet: Fleet) -> dict[str, Any]:
    """The monitor's own health: its last runs, the watchdog's verdict now, Telegram's delivery."""
    outbox = state.outbox
    reading = RunnerReading(exists=True, heartbeat=state.heartbeat, runs=state.runs.runs,
                            halts=all_halts(outbox))
    verdict = judge_runner(reading, now, WatchdogSettings.from_config(config.watchdog))
    return {
        "last_runs": [{"run_id": run.run_id, "started_at": format_utc(run.started_at),
                       "finished_at": format_utc(run.finished_at), "outcome": str(run.outcome)}
                      for run in reversed(state.runs.runs)],
        "watchdog": {"status": verdict.status, "reason": verdict.reason},
        "api_degraded": state.api.degraded,
        # What the state knows of delivery, never the renderer's environment: a page rendered by
        # `report --html` from a shell without the bot token says what the runs' deliveries did.
        "telegram": {
            "configured": config.telegram.chat_id is not None,  # in the file, whatever the environment
            "outbox": len(outbox.pending),
            "delivered": outbox.delivered,
            "last_delivered_at": format_utc(outbox.last_delivered_at) if outbox.last_delivered_at else None,
            "halted": None if outbox.halted is None else {
                "at": format_utc(outbox.halted.at), "status": outbox.halted.status,
                "description": outbox.halted.description},
            "route_halts": {chat: {"at": format_utc(h.at), "status": h.status, "description": h.description}
                            for chat, h in outbox.halts.items()},
        },
        "muted_count": len(fleet.muted),
        "failing_now": len(fleet.failing),
        "edit_lag": edit_lag_report(state, now),
    }

