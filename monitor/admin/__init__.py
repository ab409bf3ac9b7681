"""The operators' library: what `status`, `sheets`, `dlq`, `breakers`, `mute` and `check-config` report
and change, as pure functions over a RunnerState (and the config) with ``now`` passed in.

Reports are JSON-ready dicts and lists: the CLI prints them as tables, or as they are under ``--json``
inside ``{"version": JSON_VERSION, ...}``. Edits change the given RunnerState in place; the caller
saves it, holding the run lock. Nothing here prints, reads a clock or touches the store.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any, Protocol

from monitor.checks import ranges_of
from monitor.core.durations import format_duration
from monitor.core.timefmt import format_utc, parse_utc
from monitor.engine.breaker import BreakerState
from monitor.engine.health import ERROR, FAIL, OK, SKIPPED, UNKNOWN, WARN, SheetHealth
from monitor.engine.quota import credentials_needed, round_estimate
from monitor.engine.tasks import DONE, FAILED, PENDING, PROCESSING
from monitor.state.runner_state import RunnerState

JSON_VERSION = 1  # bump when a --json key changes meaning or goes away; adding keys keeps it
MUTED = "muted"
# What `sheets --status` accepts and the order tables list them in: the worst first.
SHOWN_ORDER = (ERROR, FAIL, WARN, SKIPPED, MUTED, UNKNOWN, OK)
# The runner reads this flag when it builds a round: ids listed go first (see runner._round_order).
RETRY_FIRST = "retry_first"


class AdminError(Exception):
    """A request that cannot be done. ``usage`` is True when the argument itself is wrong (exit 2,
    e.g. an id that is not configured); otherwise the state does not allow it (exit 1)."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


class SheetLike(Protocol):
    id: str
    name: str


def _age(since: str | None, now: datetime) -> float | None:
    return round((now - parse_utc(since)).total_seconds(), 1) if since else None


def shown_health(record: SheetHealth | None, mute: dict | None) -> str:
    """What tables show: muted while a mute is in force, skipped when the latest round skipped it,
    else the last verdict (or unknown)."""
    if mute is not None:
        return MUTED
    if record is None:
        return UNKNOWN
    return record.shown


# -- status ------------------------------------------------------------------------------------------


def status_report(state: RunnerState, now: datetime, sheets: Sequence[SheetLike] = ()) -> dict[str, Any]:
    """Last run, current round, queue, oldest pending task, next retry, DLQ, breakers, outbox, quota.

    ``sheets`` (the configured spreadsheets) adds health counts; spreadsheets the state holds but the
    config no longer lists are left out of them.
    """
    rnd = state.round
    counts = rnd.counts() if rnd else {PENDING: 0, PROCESSING: 0, DONE: 0, FAILED: 0}
    oldest = rnd.oldest_pending() if rnd else None
    next_retry = rnd.next_retry_at() if rnd else None
    open_breakers = sorted(sid for sid, b in state.breakers.items() if b.get("state", "closed") != "closed")
    reads = (state.heartbeat.get("stats") or {}).get("reads_by_credential") or {}
    mutes = state.active_mutes(now)
    outbox = state.outbox or {}
    return {
        "last_run": _last_run(state.heartbeat, now),
        "current_round": None if rnd is None else {
            "id": rnd.id,
            "started_at": rnd.started_at,
            "age_seconds": _age(rnd.started_at, now),
            "done": counts[DONE] + counts[FAILED],
            "total": len(rnd.tasks),
            "complete": rnd.is_complete(),
        },
        "queue": counts,
        "oldest_pending": None if oldest is None else {
            "task_id": oldest.id,
            "spreadsheet_id": oldest.target,
            "created_at": oldest.created_at,
            "age_seconds": _age(oldest.created_at, now),
        },
        "next_retry_at": format_utc(next_retry) if next_retry else None,
        "dlq_size": len(state.dlq),
        "open_breakers": open_breakers,
        "outbox_size": len(outbox.get("pending") or []),
        "outbox_halted": outbox.get("halted"),
        "muted": sorted(mutes),
        "api_degraded": bool(state.api.get("degraded")),
        "quota_last_run": {"reads": sum(reads.values()), "by_credential": dict(reads)},
        "health": _health_counts(state, sheets, mutes) if sheets else None,
    }


def _last_run(heartbeat: dict, now: datetime) -> dict | None:
    if not heartbeat.get("started_at"):
        return None
    stats = heartbeat.get("stats") or {}
    finished = heartbeat.get("finished_at")
    if finished:
        duration = stats.get("duration_seconds")
        if duration is None:
            duration = (parse_utc(finished) - parse_utc(heartbeat["started_at"])).total_seconds()
    else:  # running now, or killed: the watchdog tells which; here it is only "not finished"
        duration = _age(heartbeat["started_at"], now)
    return {
        "run_id": heartbeat.get("run_id"),
        "started_at": heartbeat["started_at"],
        "finished_at": finished,
        "outcome": heartbeat.get("outcome"),
        "duration_seconds": duration,
        "stop_reason": stats.get("stop_reason"),
        "tasks": stats.get("tasks"),
    }


def _health_counts(state: RunnerState, sheets: Sequence[SheetLike], mutes: Mapping[str, dict]) -> dict:
    counts = Counter(shown_health(state.sheets.get(s.id), mutes.get(s.id)) for s in sheets)
    return {shown: counts.get(shown, 0) for shown in SHOWN_ORDER}


# -- sheets ------------------------------------------------------------------------------------------


def sheets_report(
    state: RunnerState, sheets: Sequence[SheetLike], now: datetime, status: str | None = None
) -> list[dict[str, Any]]:
    """One row per configured spreadsheet, the worst first; ``status`` keeps only that shown health."""
    mutes = state.active_mutes(now)
    rows = []
    for sheet in sheets:
        record = state.sheets.get(sheet.id)
        mute = mutes.get(sheet.id)
        shown = shown_health(record, mute)
        if status is not None and shown != status:
            continue
        rows.append({
            "id": sheet.id,
            "name": sheet.name,
            "shown": shown,
            "health": record.health if record else UNKNOWN,
            "skipped": record.skipped if record else None,
            "muted_until": mute["until"] if mute else None,
            "mute_reason": mute.get("reason") if mute else None,
            "since": record.since if record else None,
            "last_checked_at": record.last_checked_at if record else None,
            "findings": len(record.findings) if record else 0,
            "in_dlq": sheet.id in state.dlq,
        })
    rank = {shown: n for n, shown in enumerate(SHOWN_ORDER)}
    rows.sort(key=lambda row: (rank[row["shown"]], row["name"], row["id"]))
    return rows


# -- dead-letter queue -------------------------------------------------------------------------------


def dlq_list(state: RunnerState, now: datetime) -> list[dict[str, Any]]:
    """DLQ entries, the most recent failure first."""
    mutes = state.active_mutes(now)
    rows = []
    for entry in state.dlq.entries.values():
        error = entry.last_error or {}
        rows.append({
            "id": entry.id,
            "name": entry.name,
            "error_class": _error_class(error),
            "http_status": error.get("http_status"),
            "message": error.get("message"),
            "range": error.get("range"),
            "first_failed_at": entry.first_failed_at,
            "last_failed_at": entry.last_failed_at,
            "occurrences": entry.occurrences,
            "muted_until": mutes[entry.id]["until"] if entry.id in mutes else None,
        })
    rows.sort(key=lambda row: row["last_failed_at"], reverse=True)
    return rows


def dlq_show(state: RunnerState, spreadsheet_id: str) -> dict[str, Any]:
    """The whole entry: task, attempt history, last error, first and last failure, occurrences."""
    entry = state.dlq.get(spreadsheet_id)
    if entry is None:
        raise AdminError(_not_in_dlq(spreadsheet_id))
    return {**asdict(entry), "error_class": _error_class(entry.last_error or {})}


def _error_class(error: dict) -> str | None:
    return error.get("error_class")


def _not_in_dlq(spreadsheet_id: str) -> str:
    return (f"{spreadsheet_id} is not in the dead-letter queue (it was never dead-lettered, or it has "
            "recovered or been purged); `sheet-monitor dlq list` shows what is")


def dlq_retry(
    state: RunnerState, spreadsheet_ids: Iterable[str], now: datetime, round_interval: timedelta
) -> list[dict[str, Any]]:
    """Make dead-lettered spreadsheets due at once. The entries stay until a read succeeds; then the
    runner resolves them and emits "recovered".

    A spreadsheet whose task is in a round the next run will continue is requeued there
    (``"due": "current_round"``). Otherwise (no round yet, or the round is finished and the next run
    starts a new one) it is put first in the next round (``"due": "next_round"``), through the
    ``RETRY_FIRST`` flag the runner reads. An open breaker would skip it again, so it is closed
    (``breaker_was`` says what it was, else None). A muted spreadsheet is requeued too, but is not read
    until the mute ends: ``muted_until`` says so.
    """
    ids = list(spreadsheet_ids)
    missing = [sid for sid in ids if sid not in state.dlq]
    if missing:
        raise AdminError(_not_in_dlq(missing[0]))
    rnd = state.round
    continues = rnd is not None and (
        not rnd.is_complete() or now - parse_utc(rnd.started_at) < round_interval
    )
    mutes = state.active_mutes(now)
    results = []
    for sid in ids:
        # A finished round whose interval has passed is about to be replaced by a new one: requeueing
        # into it would only reopen an old round (and could raise a false "falling behind").
        if continues and rnd.requeue_now(sid):
            for task in rnd.tasks.values():
                if task.target == sid:
                    task.interruptions = 0  # an admin's retry is a fresh start for the poison guard
            due = "current_round"
        else:
            first = state.flags.setdefault(RETRY_FIRST, [])
            if sid not in first:
                first.append(sid)
            due = "next_round"
        breaker = state.breakers.get(sid)
        breaker_was = None
        if breaker is not None and breaker.get("state", "closed") != "closed":
            breaker_was = breaker_reset(state, sid, ())["was"]
        results.append({"id": sid, "due": due, "breaker_was": breaker_was,
                        "muted_until": mutes[sid]["until"] if sid in mutes else None})
    return results


def dlq_purge(state: RunnerState, spreadsheet_id: str | None = None) -> list[str]:
    """Forget one entry, or all with None; returns the ids removed. A purged spreadsheet stays in the
    rounds; if it fails again it gets a new entry (and a new alert), if it recovers nobody is told."""
    if spreadsheet_id is None:
        removed = list(state.dlq.entries)
        state.dlq.entries.clear()
        return removed
    if state.dlq.resolve(spreadsheet_id) is None:
        raise AdminError(_not_in_dlq(spreadsheet_id))
    return [spreadsheet_id]


# -- breakers ----------------------------------------------------------------------------------------


def breakers_list(state: RunnerState, names: Mapping[str, str], now: datetime) -> list[dict[str, Any]]:
    """Every stored breaker (only spreadsheets that failed lately have one), open ones first."""
    mutes = state.active_mutes(now)
    rows = []
    for sid, stored in state.breakers.items():
        breaker = BreakerState.from_dict(stored)
        probe_at = breaker.next_probe_at()
        rows.append({
            "id": sid,
            "name": names.get(sid, sid),
            "state": breaker.state.value,
            "consecutive_failures": breaker.consecutive_failures,
            "opened_at": stored.get("opened_at"),
            "first_opened_at": stored.get("first_opened_at"),
            "cooldown_seconds": breaker.cooldown_seconds,
            "reopen_count": breaker.reopen_count,
            "next_probe_at": format_utc(probe_at) if probe_at else None,
            "muted_until": mutes[sid]["until"] if sid in mutes else None,
        })
    rank = {"open": 0, "half_open": 1, "closed": 2}
    rows.sort(key=lambda row: (rank.get(row["state"], 3), row["name"]))
    return rows


def breaker_reset(state: RunnerState, spreadsheet_id: str, configured: Iterable[str]) -> dict[str, Any]:
    """Close a breaker (its failure count goes too); the spreadsheet is read in its next turn.

    Resetting a breaker that is already closed is not an error (``was`` says "closed").
    """
    stored = state.breakers.pop(spreadsheet_id, None)
    if stored is None and spreadsheet_id not in set(configured):
        raise AdminError(unknown_id_message(spreadsheet_id), usage=True)
    was = BreakerState.from_dict(stored).state.value if stored else "closed"
    return {"id": spreadsheet_id, "was": was, "state": "closed"}


def unknown_id_message(spreadsheet_id: str) -> str:
    return (f"{spreadsheet_id} is not a configured spreadsheet; `sheet-monitor sheets` lists the "
            "configured ids")


# -- mutes -------------------------------------------------------------------------------------------


def mute(
    state: RunnerState, sheet: SheetLike, duration: timedelta, reason: str, now: datetime
) -> dict[str, Any]:
    """Silence one spreadsheet until ``now + duration``: new rounds leave it out and its alerts go
    to nobody. It ends by itself; muting again replaces the earlier mute. Expired mutes are dropped."""
    if not reason.strip():
        raise AdminError("a mute needs a reason, so the next admin knows why: --reason TEXT", usage=True)
    state.mutes = state.active_mutes(now)
    record = {"until": format_utc(now + duration), "reason": reason.strip(), "muted_at": format_utc(now)}
    state.mutes[sheet.id] = record
    return {"id": sheet.id, "name": sheet.name, **record, "for": format_duration(duration)}


def unmute(state: RunnerState, spreadsheet_id: str, now: datetime) -> dict[str, Any]:
    """End a mute now; the spreadsheet joins the next round. Not muted is not an error."""
    was = state.active_mutes(now).get(spreadsheet_id)
    state.mutes.pop(spreadsheet_id, None)
    return {"id": spreadsheet_id, "was_muted": was is not None, "until": was["until"] if was else None}


# -- check-config ------------------------------------------------------------------------------------


def config_plan(config: Any) -> dict[str, Any]:
    """The plan for a Config: spreadsheets, reads per round, the quota arithmetic and warnings."""
    google, run = config.google, config.run
    count = len(config.sheets)
    credentials = len(google.credentials)
    per, project = google.read_requests_per_minute, google.project_read_requests_per_minute
    interval = run.round_interval.total_seconds()
    budget = run.budget.total_seconds()
    plan: dict[str, Any] = {
        "config": str(config.path),
        "state_dir": str(run.state_dir),
        "spreadsheets": count,
        "checks": sum(len(sheet.checks) for sheet in config.sheets),
        "ranges": sum(len(ranges_of(sheet.checks)) for sheet in config.sheets),
        "reads_per_round": count,  # one values:batchGet per spreadsheet, whatever its ranges
        "drive_reads_per_round": sum(1 for sheet in config.sheets if sheet.needs_modified_time),
        "credentials": credentials,
        "read_requests_per_minute": per,
        "project_read_requests_per_minute": project,
        "reads_per_minute": min(credentials * per, project),
        "round_interval_seconds": interval,
        "budget_seconds": budget,
        "round_seconds": None,
        "fits": None,
        "credentials_needed": credentials_needed(count, interval, per, project) if count else 0,
        "runs_per_round": None,
    }
    warnings = list(config.warnings)
    if credentials == 0:
        plan["summary"] = f"{count} spreadsheets, no credentials: nothing can be read"
        plan["warnings"] = warnings
        return plan
    seconds = round_estimate(count, credentials, per, project)
    fits = seconds <= interval
    plan.update(round_seconds=round(seconds, 1), fits=fits,
                runs_per_round=max(1, math.ceil(seconds / budget)) if count else 0)
    accounts = f"{credentials} credential{'s' if credentials != 1 else ''} at {per}/min"
    capped = f" (capped by the project quota of {project}/min)" if credentials * per > project else ""
    plan["summary"] = (
        f"{count} spreadsheets, {accounts}{capped}: a full round needs at least "
        f"{seconds / 60:.1f} min of quota; round_interval {format_duration(run.round_interval)}: "
        f"{'fits' if fits else 'does not fit'}"
    )
    if not fits:
        warnings.append(_quota_warning(count, credentials, seconds, plan["credentials_needed"], config))
    plan["warnings"] = warnings
    return plan


def _quota_warning(count: int, credentials: int, seconds: float, needed: int | None, config: Any) -> str:
    interval = format_duration(config.run.round_interval)
    head = (f"a full round of {count} spreadsheets needs {seconds / 60:.1f} min of quota but "
            f"round_interval is {interval}: rounds run back to back and each takes longer than planned")
    if needed is None:
        project = config.google.project_read_requests_per_minute
        least = format_duration(timedelta(minutes=math.ceil(count / project)))
        return (f"{head}; the project quota ({project}/min) alone cannot read them within {interval}: "
                f"ask Google for a higher project quota or set round_interval to at least {least}")
    return f"{head}; {needed} credentials would fit it (you have {credentials})"
