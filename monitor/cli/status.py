"""`status` and `sheets`: what the monitor and each spreadsheet are doing, read without the lock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from monitor import admin
from monitor.admin.targets import matches_filters
from monitor.app.operator_clock import operator_clock as clock
from monitor.app.operator_state import run_in_progress, saved_state_with_repairs, state_file
from monitor.checks import format_age
from monitor.cli.common import quiet_logs, reading_options
from monitor.cli.output import (
    config_option,
    echo_fields,
    echo_table,
    emit_json,
    fail,
    json_option,
    short_time,
    styled_status,
    when,
)
from monitor.cli.state_access import EXIT_OPERATIONAL, load_or_exit, read_or_exit
from monitor.state import State
from monitor.storage import StateError


@click.command()
@reading_options
def status(config_path: Path | None, as_json: bool) -> None:
    """Last run, current round (how many spreadsheets it reads, how many it judged unchanged), queue
    counts, oldest pending task, next retry, DLQ, breakers, outbox, quota used, Drive's change feed.
    Reads the state without the lock: safe while a run works."""
    quiet_logs()
    config = load_or_exit(config_path)
    try:
        state, repairs = saved_state_with_repairs(config)
    except StateError as exc:
        fail(str(exc), EXIT_OPERATIONAL)
    now = clock.now()
    path = state_file(config)
    if state is None and not as_json:
        click.echo(f"No run yet: no state is saved at {path}. Start one with `sheet-monitor run`.")
        return
    # Without a state the JSON keeps its whole shape (empty queue, no run), so scripts need no branch.
    report = admin.status_report(state or State(), now, config.sheets, config.run.change_detection,
                                 config.maintenance)
    if report["last_run"] is not None and not report["last_run"]["finished_at"]:
        # The lock tells running from killed.
        report["last_run"]["running"] = run_in_progress(config)
    for name, run in report["runners"].items():  # runners sharing the state: each its own lock
        if not run["finished_at"]:
            run["running"] = run_in_progress(config, name)
    if report["runners"]:
        report["last_run"] = report["runners"][max(report["runners"],
                                                   key=lambda name: report["runners"][name]["started_at"])]
    report["repairs"] = None if repairs is None else {
        "from_backup": repairs.from_backup, "reason": repairs.reason, "backup": str(repairs.backup_path)}
    if as_json:
        emit_json({"state_file": path, "has_run": state is not None, **report})
        return
    echo_fields(_status_fields(report, now, path))


def _status_fields(report: dict, now, path: str) -> list[tuple[str, Any]]:
    last = _last_run_text(report["last_run"], now)
    rnd = report["current_round"]
    round_text = "none yet" if rnd is None else (
        f"{rnd['id']}: {rnd['done']} of {rnd['total']} done{' (complete)' if rnd['complete'] else ''}, "
        f"started {when(rnd['started_at'], now)}")
    queue = ", ".join(f"{name} {count}" for name, count in report["queue"].items())
    oldest = report["oldest_pending"]
    oldest_text = "-" if oldest is None else (
        f"{_age(oldest['age_seconds'])} old ({oldest['task_id']}, {oldest['spreadsheet_id']})")
    health = report["health"]
    fields = [("state file", path)]
    repairs = report["repairs"]
    if repairs is not None:
        # Shown, not repaired: a reader never writes. The next run (or admin command) restores it.
        shown = (f"UNREADABLE: showing its last good copy {repairs['backup']}; the next run restores "
                 "it from there" if repairs["from_backup"] else "partly unreadable")
        fields.append(("  warning", f"{shown} ({repairs['reason']})"))
    fields.append(("last run", last))
    for name, run in report["runners"].items():
        fields.append((f"  runner {name}", _last_run_text(run, now)))
    fields.append(("round", round_text))
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
        ("acknowledged", len(report["acknowledged"])),
        ("in maintenance", len(report["maintenance"])),
        ("Google API", "degraded (the next run starts with one probe)" if report["api_degraded"] else "ok"),
        ("Drive change feed", _feed_text(report["change_feed"], now)),
        ("edits judged", admin.edit_lag_text(report["edit_lag"])),
        ("outbox", outbox),
        ("chat", _chat_text(report["chat"], now)),
        *_quota_fields(report["quota_last_run"]),
    ]
    if report["set_aside"]:
        # Entries a run could not read and kept aside for inspection (docs/operations.md, Runbook).
        fields.append(("set aside", ", ".join(f"damaged/{key}" for key in report["set_aside"])))
    return fields


def _chat_text(chat: dict, now) -> str:
    """Whether the buttons and commands are read (``admin.status_report``'s "chat")."""
    if chat["refused"]:
        return f"NOT READ since {short_time(chat['refused_since'])}: {chat['refused']}"
    if chat["read_at"] is None:
        return "not read yet"
    asked = f"; {chat['checks_asked']} checks asked, answered once read" if chat["checks_asked"] else ""
    return f"read {when(chat['read_at'], now)}{asked}"


def _last_run_text(run: dict | None, now) -> str:
    if run is None:
        last = "none yet"
    elif run["finished_at"]:
        last = (f"{run['outcome']} ({run['stop_reason'] or '-'}), {when(run['started_at'], now)} -> "
                f"{short_time(run['finished_at'])}, {run['duration_seconds']:.0f} s, {run['tasks']} tasks")
    elif run["running"]:
        last = (f"running now: started {when(run['started_at'], now)} (it holds the run lock); "
                "`status` again shows how far it got")
    else:
        last = (f"killed: started {when(run['started_at'], now)} and never finished (the run lock is "
                "free); the next run takes over the reads it had in flight")
    return last


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
@click.option("--tag", "tags", multiple=True, metavar="TAG",
              help="Only spreadsheets with this tag (repeatable: any of them).")
@click.option("--name", "name_part", metavar="TEXT", default=None,
              help="Only spreadsheets whose name holds TEXT (case does not matter).")
@json_option
def sheets(config_path: Path | None, status_filter: str | None, tags: tuple[str, ...],
           name_part: str | None, as_json: bool) -> None:
    """Each configured spreadsheet's health (muted and skipped shown as such, and "unchanged since" its
    last read when the current round judged it without reading), since when, when it was last checked,
    its tags and the time zone its dates are read in, the worst first; then what each check that
    warned or failed found."""
    quiet_logs()
    config = load_or_exit(config_path)
    state = read_or_exit(config) or State()
    now = clock.now()
    chosen = [sheet for sheet in config.sheets if matches_filters(sheet, tags=tags, name=name_part)]
    rows = admin.sheets_report(state, chosen, now, status_filter, config.maintenance)
    if as_json:
        emit_json({"sheets": rows})
        return
    table = [
        (row["name"], row["id"], _shown(row), short_time(row["since"]),
         short_time(row["last_checked_at"]), _found_names(row), " ".join(row["tags"]) or "-",
         row["time_zone"] or "-")
        for row in rows
    ]
    echo_table(("name", "id", "health", "since", "last checked", "findings", "tags", "time zone"), table,
               status_column=2, uncut=(1,), empty=_nothing_shown(status_filter, tags, name_part))
    _echo_findings(rows)
    _echo_learning(rows)


def _found_names(row: dict) -> str:
    found = row["found"]
    return f"{len(found)}: {', '.join(item['check'] for item in found)}" if found else "0"


def _echo_findings(rows: list[dict]) -> None:
    """Each finding in full under the table (a table cell would cut the message to the width)."""
    found = [row for row in rows if row["found"]]
    if not found:
        return
    click.echo("\nFindings:")
    for row in found:
        click.echo(f"  {row['name']} ({row['id']})")
        for item in row["found"]:
            cells = [cell for cell in item["cells"][:5] if cell not in item["message"]]
            where = f" ({', '.join(cells)})" if cells else ""
            click.echo(f"    {styled_status(item['status'])} {item['check']}: {item['message']}{where}")


def _echo_learning(rows: list[dict]) -> None:
    """The anomaly checks still learning what is normal: they alert on nothing yet."""
    learning = [row for row in rows if row["learning"]]
    if not learning:
        return
    click.echo("\nLearning (no alerts yet):")
    for row in learning:
        for item in row["learning"]:
            click.echo(f"  {row['name']}: {item['check']}: {item['text']}")


def _nothing_shown(status: str | None, tags: tuple[str, ...], name_part: str | None) -> str:
    filters = [f"shown as {status}"] if status else []
    filters += [f"tagged {' or '.join(tags)}"] if tags else []
    filters += [f"named like {name_part!r}"] if name_part else []
    return "no spreadsheets" + (" " + ", ".join(filters) if filters else "")


def _shown(row: dict) -> str:
    if row["shown"] == admin.MUTED:
        return f"muted until {short_time(row['muted_until'])} ({row['mute_reason']})"
    if row["shown"] == admin.MAINTENANCE:
        return f"maintenance until {short_time(row['maintenance_until'])} ({row['maintenance_reason']})"
    if row["shown"] == "skipped":
        return f"skipped ({row['skipped']}; was {row['health']})"
    by = (row["incident"] or {}).get("acknowledged_by")
    acked = f", acknowledged by {by}" if by else ""
    if row["unchanged"]:  # Drive reported no change: judged again from that read
        return f"{row['shown']} (unchanged since {short_time(row['read_at'])}{acked})"
    # Escalated: nobody acknowledged its incident, so its owner was told.
    escalated = f" (escalated {short_time(row['escalated_at'])})" if row["escalated_at"] else ""
    notes = (" (DLQ)" if row["in_dlq"] else "") + (f" ({acked[2:]})" if acked else "") + escalated
    return row["shown"] + notes
