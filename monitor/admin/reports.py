"""What `status`, `sheets`, `dlq list/show` and `breakers list` report, as pure functions of the state.

Reports are JSON-ready dicts and lists (times as ISO-8601 UTC text): the CLI prints them as tables,
or as they are under ``--json`` (``monitor.cli.output.emit_json``). ``now`` comes in.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any, Protocol

from monitor.admin.errors import AdminError, no_longer_configured_message, not_in_dlq_message
from monitor.checks import AnomalyCheck, still_learning
from monitor.config import MaintenanceWindow
from monitor.core.durations import human_duration
from monitor.core.errors import ErrorInfo
from monitor.core.remedies import remedy
from monitor.core.timefmt import format_utc
from monitor.core.wording import counted
from monitor.engine.dlq import DeadLetter
from monitor.engine.feed_state import FeedState
from monitor.engine.fleet import SHOWN_ORDER, Fleet
from monitor.engine.health import UNKNOWN, Finding, SheetHealth
from monitor.engine.heartbeat import Heartbeat, RunStats
from monitor.engine.history import SheetHistory
from monitor.engine.incidents import Incident
from monitor.engine.retry import DEFAULT_POLICIES
from monitor.engine.runlog import edit_lag
from monitor.engine.tasks import DONE, FAILED, PENDING, PROCESSING, Round
from monitor.state import State
from monitor.state.schema import DLQ

# The change feed as `status` reports it: how the next round chooses what to read.
FEED_OFF = "off"  # the config reads every spreadsheet every round
FEED_FAILING = "failing"  # Drive could not answer: every spreadsheet is read until it does
FEED_NO_POSITION = "no_position"  # never asked (or starting afresh): the next round reads everything
FEED_OK = "ok"


class SheetLike(Protocol):
    id: str
    name: str


class TaggedSheet(SheetLike, Protocol):
    tags: tuple[str, ...]


def _iso(moment: datetime | None) -> str | None:
    return format_utc(moment) if moment else None


def _age(since: datetime | None, now: datetime) -> float | None:
    return round((now - since).total_seconds(), 1) if since else None


# -- status ------------------------------------------------------------------------------------------


def status_report(state: State, now: datetime, sheets: Sequence[SheetLike] | None = None,
                  change_detection: bool = True,
                  maintenance: Sequence[MaintenanceWindow] = ()) -> dict[str, Any]:
    """Last run, current round (what it reads, what it judged unchanged), queue, oldest pending task,
    next retry, DLQ, breakers, outbox, quota, Drive's change feed.

    ``sheets``: the configured spreadsheets, whose standings are counted (``health``), and to which the
    DLQ, breakers and mutes are limited: spreadsheets the state holds but the config no longer lists
    are left out (the next run forgets them); None: every spreadsheet the state knows, uncounted.
    ``change_detection``: the config's; when off, the stored feed is reported as it is, but "off" (the
    next round forgets it). ``maintenance``: the config's windows (the chat's are the state's).
    """
    rnd = state.round
    counts = rnd.counts() if rnd else dict.fromkeys((PENDING, PROCESSING, DONE, FAILED), 0)
    oldest = rnd.oldest_pending() if rnd else None
    # Beside other runners each has its own heartbeat: the last run is the latest any of them began.
    beats = state.runner_heartbeats
    latest = state.heartbeat or max(beats.values(), key=lambda beat: beat.started_at, default=None)
    stats = latest.stats if latest else None
    fleet = fleet_of(state, sheets, now, maintenance)
    halted = state.outbox.halted
    return {
        "last_run": _last_run(latest, now),
        "runners": {name: _last_run(beats[name], now) for name in sorted(beats)},
        "current_round": None if rnd is None else {
            "id": rnd.id,
            "started_at": _iso(rnd.started_at),
            "age_seconds": _age(rnd.started_at, now),
            "done": rnd.finished(),
            "total": len(rnd),  # the spreadsheets it reads, one task each
            "unread": rnd.info.unread,  # judged again from their last read: Drive reported no change
            "complete": rnd.is_complete(),
        },
        "queue": {str(status): count for status, count in counts.items()},
        "oldest_pending": None if oldest is None else {
            "task_id": oldest.id,
            "spreadsheet_id": oldest.target,
            "created_at": _iso(oldest.created_at),
            "age_seconds": _age(oldest.created_at, now),
        },
        "next_retry_at": _iso(rnd.next_retry_at()) if rnd else None,
        "dlq_size": len(fleet.dead_lettered),
        "open_breakers": sorted(fleet.paused),
        "outbox_size": len(state.outbox.pending),
        "outbox_halted": None if halted is None else {
            "at": _iso(halted.at), "status": halted.status, "description": halted.description,
            "chat_id": halted.chat_id,
        },
        "outbox_route_halts": {  # routed chats Telegram refuses, by their configured id
            chat: {"at": _iso(halt.at), "status": halt.status, "description": halt.description}
            for chat, halt in state.outbox.halts.items()
        },
        "muted": sorted(fleet.muted),
        "acknowledged": sorted(fleet.acknowledged),  # failing or warning, and someone is on it
        "chat": _chat(state),
        "maintenance": sorted(fleet.in_maintenance),
        "api_degraded": state.api.degraded,
        "quota_last_run": _quota_last_run(stats),
        "change_feed": _change_feed(state.feed, change_detection),
        "edit_lag": edit_lag_report(state, now),
        "health": fleet.counts() if sheets is not None else None,
        "set_aside": list(state.set_aside),
    }


def _chat(state: State) -> dict[str, Any]:
    """How far the chat's updates were read (buttons and commands), and whether Telegram refuses."""
    conversation = state.conversation
    return {"read_at": _iso(conversation.polled_at), "refused": conversation.refused,
            "refused_since": _iso(conversation.refused_since), "checks_asked": len(conversation.asked)}


def _quota_last_run(stats: RunStats | None) -> dict[str, Any]:
    """The last run's reads per credential and per project, its mean read time and the most reads
    it had in flight (None for what it did not measure)."""
    reads = dict(stats.counts.reads_by_credential) if stats else {}
    return {
        "reads": sum(reads.values()),
        "by_credential": reads,
        "by_project": dict(stats.counts.reads_by_project) if stats else {},
        "mean_read_seconds": stats.mean_read_seconds if stats else None,
        "concurrency": stats.concurrency if stats else None,
    }


def edit_lag_report(state: State, now: datetime) -> dict[str, int] | None:
    """How long the last hour's edits took to be judged, from their modifiedTime (None: no edit was
    judged): `status`, the status page and the metrics all show this one figure."""
    lag = edit_lag(state.runlog, now)
    return None if lag is None else asdict(lag)


def edit_lag_text(lag: dict[str, int] | None) -> str:
    """``edit_lag_report`` in words: "12 edits, judged 1 minute and 5 seconds after they were made
    (median), 3 minutes at most for 95 %"."""
    if lag is None:
        return "no edit judged in the last hour"
    return (f"{counted(lag['edits'], 'edit')} in the last hour, judged {human_duration(lag['p50_seconds'])} "
            f"after they were made (median), {human_duration(lag['p95_seconds'])} for 95 % of them, "
            f"{human_duration(lag['max_seconds'])} at most")


def _change_feed(feed: FeedState, enabled: bool) -> dict[str, Any]:
    """Drive's change feed as the last round left it (``monitor.engine.change_detection``)."""
    if not enabled:
        shown = FEED_OFF
    elif feed.failing_since is not None:
        shown = FEED_FAILING
    elif feed.position is None:
        shown = FEED_NO_POSITION
    else:
        shown = FEED_OK
    return {
        "state": shown,
        "position_known": feed.position is not None,  # the position itself is Drive's, of no use to read
        "source": feed.source,
        "asked_at": _iso(feed.asked_at),
        "failing_since": _iso(feed.failing_since),
        "last_error": feed.last_error,
    }


def _last_run(heartbeat: Heartbeat | None, now: datetime) -> dict | None:
    if heartbeat is None:
        return None
    stats = heartbeat.stats
    if heartbeat.finished_at:
        elapsed = (heartbeat.finished_at - heartbeat.started_at).total_seconds()
        duration = stats.duration_seconds if stats else elapsed
    else:  # running now, or killed: the watchdog tells which; here it is only "not finished"
        duration = _age(heartbeat.started_at, now)
    return {
        "run_id": heartbeat.run_id,
        "started_at": _iso(heartbeat.started_at),
        "finished_at": _iso(heartbeat.finished_at),
        "outcome": heartbeat.outcome.value,
        "duration_seconds": duration,
        "stop_reason": stats.stop_reason if stats else None,
        "tasks": stats.counts.tasks if stats else None,
    }


def fleet_of(state: State, sheets: Sequence[SheetLike] | None, now: datetime,
             maintenance: Sequence[MaintenanceWindow] = ()) -> Fleet:
    """The configured spreadsheets' fleet (None: every spreadsheet the state knows of)."""
    if sheets is not None:
        return Fleet.of(state, (sheet.id for sheet in sheets), now, maintenance)
    known = state.health.keys() | state.dlq.keys() | state.breakers.keys() | state.mutes.keys()
    return Fleet.of(state, sorted(known), now, maintenance)


# -- sheets ------------------------------------------------------------------------------------------


def sheets_report(
    state: State, sheets: Sequence[TaggedSheet], now: datetime, status: str | None = None,
    maintenance: Sequence[MaintenanceWindow] = (),
) -> list[dict[str, Any]]:
    """One row per configured spreadsheet, the worst first; ``status`` keeps only that shown health.
    ``maintenance``: the config's windows (the chat's are the state's)."""
    fleet = Fleet.of(state, (sheet.id for sheet in sheets), now, maintenance)
    mutes = state.active_mutes(now)
    reads = _round_reads(state.round)
    rows = []
    for sheet in sheets:
        record, mute, window = state.health.get(sheet.id), mutes.get(sheet.id), fleet.windows.get(sheet.id)
        shown = fleet.standings[sheet.id]
        if status is not None and shown != status:
            continue
        incident = state.incidents.get(sheet.id)
        rows.append({
            "id": sheet.id,
            "name": sheet.name,
            "shown": shown,
            "health": record.health.value if record else UNKNOWN.value,
            "skipped": record.skipped if record else None,
            "muted_until": _iso(mute.until) if mute else None,
            "mute_reason": mute.reason if mute else None,
            "maintenance_until": _iso(window.end) if window else None,
            "maintenance_reason": window.reason if window else None,
            # Its open incident escalated (monitor.notify.escalation): since when nobody answered.
            "escalated_at": _iso(incident.escalated_at) if incident and incident.is_open else None,
            "since": _iso(record.since) if record else None,
            "last_checked_at": _iso(record.last_checked_at) if record else None,
            "read_at": _iso(record.read_at) if record else None,
            "unchanged": _judged_unchanged(record, sheet.id, state.round, reads),
            "findings": len(record.findings) if record else 0,
            # What each check that warned or failed found, as the last verdict says.
            "found": [_found(finding) for finding in record.findings] if record else [],
            "tags": list(sheet.tags),
            "in_dlq": sheet.id in state.dlq,
            "time_zone": record.time_zone if record else None,  # its dates are read in it
            "incident": incident_row(state.incidents.get(sheet.id)),
            "learning": learning_checks(getattr(sheet, "checks", ()), state.history.get(sheet.id)),
        })
    rank = {shown: n for n, shown in enumerate(SHOWN_ORDER)}
    rows.sort(key=lambda row: (rank[row["shown"]], row["name"], row["id"]))
    return rows


def learning_checks(checks: Sequence[Any], history: SheetHistory | None) -> list[dict[str, str]]:
    """The anomaly checks that still learn what is normal, and how far they are ("learning, 3 of 14
    days"): they alert on nothing yet."""
    kept = history.buckets if history else {}
    rows = []
    for check in checks:
        if isinstance(check, AnomalyCheck) and (text := still_learning(check, kept.get(check.name))):
            rows.append({"check": check.name, "text": text})
    return rows


def _found(finding: Finding) -> dict[str, Any]:
    """A finding as ``sheets --json`` shows it: its cells in A1 text. Its check's tab is the
    messages' (a line's lead when no cell names one), not part of what was found."""
    row = asdict(finding)
    del row["tab"]
    return {**row, "cells": [str(cell) for cell in finding.cells]}


def incident_row(incident: Incident | None) -> dict[str, Any] | None:
    """A spreadsheet's open incident as the reports show it (None: no trouble now)."""
    if incident is None or not incident.is_open:
        return None
    return {"id": incident.id, "kind": incident.kind, "opened_at": _iso(incident.opened_at),
            "acknowledged_by": incident.acked_by, "acknowledged_at": _iso(incident.acked_at),
            "escalated_at": _iso(incident.escalated_at),
            "actions": [{"at": _iso(action.at), "by": action.by, "what": action.what}
                        for action in incident.actions[-5:]]}


def _round_reads(rnd: Round | None) -> frozenset[str | None]:
    return frozenset(rnd.info.targets) if rnd else frozenset()


def _judged_unchanged(record: SheetHealth | None, spreadsheet_id: str, rnd: Round | None,
                      reads: frozenset[str | None]) -> bool:
    """Did the current round judge this spreadsheet from its last read instead of reading it (Drive
    reported no change)? Read before the round began and not among its ``reads``; a spreadsheet the
    round skipped (muted when it began) was left out, not judged."""
    if rnd is None or record is None or record.read_at is None or record.skipped is not None:
        return False
    return record.read_at < rnd.started_at and spreadsheet_id not in reads


# -- dead-letter queue -------------------------------------------------------------------------------


def dlq_list(state: State, now: datetime, configured: Collection[str] | None = None) -> list[dict[str, Any]]:
    """DLQ entries of the ``configured`` spreadsheets (None: all), the most recent failure first."""
    mutes = state.active_mutes(now)
    rows = []
    for entry in state.dlq.values():
        if configured is not None and entry.id not in configured:
            continue  # no longer monitored: the next run forgets it
        error = entry.last_error
        rows.append({
            "id": entry.id,
            "name": entry.name,
            "error_class": error.error_class,
            "http_status": error.http_status,
            "message": error.message,
            "range": error.range,
            "first_failed_at": _iso(entry.first_failed_at),
            "last_failed_at": _iso(entry.last_failed_at),
            "occurrences": entry.occurrences,
            "muted_until": _iso(mutes[entry.id].until) if entry.id in mutes else None,
        })
    rows.sort(key=lambda row: row["last_failed_at"], reverse=True)
    return rows


def dlq_show(state: State, spreadsheet_id: str, configured: Collection[str] | None = None) -> dict[str, Any]:
    """The whole entry: task, attempt history, last error, first and last failure, occurrences.
    Refused for a spreadsheet no longer ``configured``, saying so."""
    entry = state.dlq.get(spreadsheet_id)
    if entry is None:
        raise AdminError(not_in_dlq_message(spreadsheet_id))
    if configured is not None and spreadsheet_id not in configured:
        raise AdminError(no_longer_configured_message(spreadsheet_id, entry.name), usage=True)
    return _dlq_entry(entry)


def _dlq_entry(entry: DeadLetter) -> dict[str, Any]:
    shown = DLQ.adapter.dump_python(entry, mode="json")  # the entry as it is stored
    policy = DEFAULT_POLICIES.get(entry.task.last_error.error_class) if entry.task.last_error else None
    # The task's type, and the limit of attempts its last error's class allows (the first release
    # stored both in every task, the limit always 5).
    shown["task"].update(type="check_spreadsheet", max_attempts=policy.max_attempts if policy else None)
    shown["error_class"] = entry.last_error.error_class
    shown["remedy"] = remedy(entry.last_error)  # what to do, when Google's words do not say
    return shown


def error_dict(error: ErrorInfo | None) -> dict[str, Any] | None:
    return None if error is None else asdict(error)


# -- breakers ----------------------------------------------------------------------------------------


def breakers_list(state: State, names: Mapping[str, str], now: datetime,
                  configured: Collection[str] | None = None) -> list[dict[str, Any]]:
    """Every stored breaker of the ``configured`` spreadsheets (None: all; only spreadsheets that
    failed lately have one), open ones first."""
    mutes = state.active_mutes(now)
    rows = []
    for sid, breaker in state.breakers.items():
        if configured is not None and sid not in configured:
            continue
        rows.append({
            "id": sid,
            "name": names.get(sid, sid),
            "state": breaker.state.value,
            "consecutive_failures": breaker.consecutive_failures,
            "opened_at": _iso(breaker.opened_at),
            "first_opened_at": _iso(breaker.first_opened_at),
            "cooldown_seconds": breaker.cooldown_seconds,
            "reopen_count": breaker.reopen_count,
            "next_probe_at": _iso(breaker.next_probe_at()),
            "muted_until": _iso(mutes[sid].until) if sid in mutes else None,
        })
    rank = {"open": 0, "half_open": 1, "closed": 2}
    rows.sort(key=lambda row: (rank.get(row["state"], 3), row["name"]))
    return rows
