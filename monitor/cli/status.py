"""`status` and `sheets`: what the monitor and each spreadsheet are doing, read without the lock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from monitor import admin
from monitor.checks import format_age
from monitor.cli.common import clock, quiet_logs, reading_options
from monitor.cli.output import (
    config_option,
    echo_fields,
    echo_table,
    emit_json,
    json_option,
    short_time,
    when,
)
from monitor.cli.state_access import load_or_exit, read_or_exit, state_file
from monitor.state import State


@click.command()
@reading_options
def status(config_path: Path | None, as_json: bool) -> None:
    """Last run, current round (how many spreadsheets it reads, how many it judged unchanged), queue
    counts, oldest pending task, next retry, DLQ, breakers, outbox, quota used, Drive's change feed.
    Reads the state without the lock: safe while a run works."""
    quiet_logs()
    config = load_or_exit(config_path)
    state = read_or_exit(config)
    now = clock.now()
    path = str(state_file(config))
    if state is None and not as_json:
        click.echo(f"No run yet: there is no state file at {path}. Start one with `sheet-monitor run`.")
        return
    # Without a state the JSON keeps its whole shape (empty queue, no run), so scripts need no branch.
    report = admin.status_report(state or State(), now, config.sheets, config.run.change_detection)
    if as_json:
        emit_json({"state_file": path, "has_run": state is not None, **report})
        return
    echo_fields(_status_fields(report, now, path))


def _status_fields(report: dict, now, path: str) -> list[tuple[str, Any]]:
    run = report["last_run"]
    if run is None:
        last = "none yet"
    elif run["finished_at"]:
        last = (f"{run['outcome']} ({run['stop_reason'] or '-'}), {when(run['started_at'], now)} -> "
                f"{short_time(run['finished_at'])}, {run['duration_seconds']:.0f} s, {run['tasks']} tasks")
    else:
        last = (f"not finished: started {when(run['started_at'], now)} "
                "(running now, or killed; `sheet-watchdog` tells which)")
    rnd = report["current_round"]
    round_text = "none yet" if rnd is None else (
        f"{rnd['id']}: {rnd['done']} of {rnd['total']} done{' (complete)' if rnd['complete'] else ''}, "
        f"started {when(rnd['started_at'], now)}")
    queue = ", ".join(f"{name} {count}" for name, count in report["queue"].items())
    oldest = report["oldest_pending"]
    oldest_text = "-" if oldest is None else (
        f"{_age(oldest['age_seconds'])} old ({oldest['task_id']}, {oldest['spreadsheet_id']})")
    health = report["health"]
    fields = [
        ("state file", path),
        ("last run", last),
        ("round", round_text),
    ]
    if rnd is not None:
        fields.append(("  spreadsheets", f"{rnd['total']} read, {rnd['unread']} judged unchanged "
                                         "from their last read"))
    fields += [
        ("queue", queue),
        ("oldest pending", oldest_text),
        ("next retry", when(report["next_retry_at"], now)),
    ]
    if health:
        fields.append(("health", ", ".join(f"{name} {count}" for name, count in health.items() if count)))
    breakers = report["open_breakers"]
    outbox = f"{report['outbox_size']} messages waiting"
    halted = report["outbox_halted"]
    if halted:
        outbox += (f"; Telegram refuses the chat since {short_time(halted.get('at'))}: "
                   f"{halted.get('status')} {halted.get('description')}")
    for chat, halt in (report.get("outbox_route_halts") or {}).items():
        outbox += (f"; Telegram refuses chat {chat} since {short_time(halt.get('at'))}: "
                   f"{halt.get('status')} {halt.get('description')}")
    fields += [
        ("dead letters", f"{report['dlq_size']}" + (" (dlq list)" if report["dlq_size"] else "")),
        ("open breakers", f"{len(breakers)}" + (" (breakers list)" if breakers else "")),
        ("muted", len(report["muted"])),
        ("Google API", "degraded (the next run starts with one probe)" if report["api_degraded"] else "ok"),
        ("Drive change feed", _feed_text(report["change_feed"], now)),
        ("outbox", outbox),
        *_quota_fields(report["quota_last_run"]),
    ]
    if report["set_aside"]:
        # Entries a run could not read and kept aside for inspection (docs/operations.md, Runbook).
        fields.append(("set aside", ", ".join(f"damaged/{key}" for key in report["set_aside"])))
    return fields


def _feed_text(feed: dict, now) -> str:
    """How the next round chooses its reads (``admin.status_report``'s "change_feed")."""
    if feed["state"] == admin.FEED_OFF:
        return "off (change_detection = false): every spreadsheet is read every round"
    if feed["state"] == admin.FEED_FAILING:
        return (f"failing since {when(feed['failing_since'], now)}, every spreadsheet is read: "
                f"{feed['last_error']}")
    if feed["state"] == admin.FEED_NO_POSITION:
        return "not asked yet: the next round takes a position and reads every spreadsheet"
    return f"ok, last asked {when(feed['asked_at'], now)}"


def _quota_fields(quota: dict) -> list[tuple[str, str]]:
    """The last run's reads per credential, then (when the run recorded them) per project, and its
    mean read time and most reads in flight."""
    per_credential = ", ".join(f"{Path(name).name} {count}" for name, count in quota["by_credential"].items())
    reads = f"{quota['reads']} reads" + (f" ({per_credential})" if per_credential else "")
    fields = [("quota, last run", reads)]
    if quota["by_project"]:
        per_project = ", ".join(f"{name} {count}" for name, count in quota["by_project"].items())
        fields.append(("  by project", per_project))
    measured = []
    if quota["mean_read_seconds"] is not None:
        measured.append(f"{quota['mean_read_seconds']:.2f} s a read on average")
    if quota["concurrency"] is not None:
        measured.append(f"at most {quota['concurrency']} in flight")
    if measured:
        fields.append(("  reads", ", ".join(measured)))
    return fields


def _age(seconds: float | None) -> str:
    return format_age(seconds) if seconds is not None else "-"


# -- sheets ------------------------------------------------------------------------------------------


@click.command()
@config_option
# As text: click matches Enum choices (the Health values among these) by their names ("OK"), so
# `--status ok` would be refused.
@click.option("--status", "status_filter", type=click.Choice([str(shown) for shown in admin.SHOWN_ORDER]),
              default=None, help="Only spreadsheets shown with this health.")
@json_option
def sheets(config_path: Path | None, status_filter: str | None, as_json: bool) -> None:
    """Each configured spreadsheet's health (muted and skipped shown as such, and "unchanged since" its
    last read when the current round judged it without reading), since when, when it was last checked,
    how many findings it has and the time zone its dates are read in; the worst first."""
    quiet_logs()
    config = load_or_exit(config_path)
    state = read_or_exit(config) or State()
    now = clock.now()
    rows = admin.sheets_report(state, config.sheets, now, status_filter)
    if as_json:
        emit_json({"sheets": rows})
        return
    table = [
        (row["name"], row["id"], _shown(row), short_time(row["since"]),
         short_time(row["last_checked_at"]), row["findings"], row["time_zone"] or "-")
        for row in rows
    ]
    echo_table(("name", "id", "health", "since", "last checked", "findings", "time zone"), table,
               status_column=2,
               uncut=(1,), empty="no spreadsheets" + (f" shown as {status_filter}" if status_filter else ""))


def _shown(row: dict) -> str:
    if row["shown"] == admin.MUTED:
        return f"muted until {short_time(row['muted_until'])} ({row['mute_reason']})"
    if row["shown"] == "skipped":
        return f"skipped ({row['skipped']}; was {row['health']})"
    if row["unchanged"]:  # Drive reported no change: judged again from that read
        return f"{row['shown']} (unchanged since {short_time(row['read_at'])})"
    return row["shown"] + (" (DLQ)" if row["in_dlq"] else "")
