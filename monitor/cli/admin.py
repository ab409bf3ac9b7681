"""Operator commands over the state: status, sheets, dlq, breakers, mute, unmute.

Thin: each command loads the config, reads (or, holding the run lock, changes) the state through
monitor.cli_state, asks monitor.admin for the facts and prints them with monitor.cli_output.
``AdminError`` becomes exit 2 when the argument is wrong and exit 1 otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from monitor import admin
from monitor.admin import AdminError
from monitor.checks import format_age
from monitor.cli.output import (
    config_option,
    echo_fields,
    echo_table,
    emit_json,
    fail,
    json_option,
    short_time,
    when,
)
from monitor.cli.state_access import (
    EXIT_OPERATIONAL,
    EXIT_USAGE,
    changing_state,
    load_or_exit,
    read_state,
    state_file,
    wait_option,
)
from monitor.config import Config
from monitor.core.clock import SystemClock
from monitor.core.durations import format_duration, parse_positive_duration
from monitor.core.invalid import InvalidValue
from monitor.core.logs import configure_logging, log_event
from monitor.notify.alerts import sheet_url
from monitor.state.runner_state import RunnerState

_clock = SystemClock()


def _admin_call(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except AdminError as exc:
        fail(str(exc), EXIT_USAGE if exc.usage else EXIT_OPERATIONAL)


def _quiet_logs(level: int = logging.WARNING) -> None:
    # Commands that change state log what they did (INFO) for the audit trail; readers only warnings.
    configure_logging(level=level)


def _sheet_or_exit(config: Config, spreadsheet_id: str):
    sheet = config.sheets_by_id.get(spreadsheet_id)
    if sheet is None:
        fail(admin.unknown_id_message(spreadsheet_id), EXIT_USAGE)
    return sheet


def _names(config: Config, state: RunnerState | None = None) -> dict[str, str]:
    names = {entry.id: entry.name for entry in state.dlq.entries.values()} if state else {}
    names.update({sheet.id: sheet.name for sheet in config.sheets})
    return names


# -- status ------------------------------------------------------------------------------------------


@click.command()
@config_option
@json_option
def status(config_path: Path | None, as_json: bool) -> None:
    """Last run, current round, queue counts, oldest pending task, next retry, DLQ, breakers, outbox,
    quota used. Reads the state without the lock: safe while a run works."""
    _quiet_logs()
    config = load_or_exit(config_path)
    state = read_state(config)
    now = _clock.now()
    path = str(state_file(config))
    if state is None and not as_json:
        click.echo(f"No run yet: there is no state file at {path}. Start one with `sheet-monitor run`.")
        return
    # Without a state the JSON keeps its whole shape (empty queue, no run), so scripts need no branch.
    report = admin.status_report(state or RunnerState(), now, config.sheets)
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
    quota = report["quota_last_run"]
    per_credential = ", ".join(f"{Path(name).name} {count}" for name, count in quota["by_credential"].items())
    fields += [
        ("dead letters", f"{report['dlq_size']}" + (" (dlq list)" if report["dlq_size"] else "")),
        ("open breakers", f"{len(breakers)}" + (" (breakers list)" if breakers else "")),
        ("muted", len(report["muted"])),
        ("Google API", "degraded (the next run starts with one probe)" if report["api_degraded"] else "ok"),
        ("outbox", outbox),
        ("quota, last run", f"{quota['reads']} reads" + (f" ({per_credential})" if per_credential else "")),
    ]
    return fields


def _age(seconds: float | None) -> str:
    return format_age(seconds) if seconds is not None else "-"


# -- sheets ------------------------------------------------------------------------------------------


@click.command()
@config_option
@click.option("--status", "status_filter", type=click.Choice(admin.SHOWN_ORDER), default=None,
              help="Only spreadsheets shown with this health.")
@json_option
def sheets(config_path: Path | None, status_filter: str | None, as_json: bool) -> None:
    """Each configured spreadsheet's health (muted and skipped shown as such), since when, when it was
    last checked and how many findings it has; the worst first."""
    _quiet_logs()
    config = load_or_exit(config_path)
    state = read_state(config) or RunnerState()
    now = _clock.now()
    rows = admin.sheets_report(state, config.sheets, now, status_filter)
    if as_json:
        emit_json({"sheets": rows})
        return
    table = [
        (row["name"], row["id"], _shown(row), short_time(row["since"]),
         short_time(row["last_checked_at"]), row["findings"])
        for row in rows
    ]
    echo_table(("name", "id", "health", "since", "last checked", "findings"), table, status_column=2,
               uncut=(1,), empty="no spreadsheets" + (f" shown as {status_filter}" if status_filter else ""))


def _shown(row: dict) -> str:
    if row["shown"] == admin.MUTED:
        return f"muted until {short_time(row['muted_until'])} ({row['mute_reason']})"
    if row["shown"] == "skipped":
        return f"skipped ({row['skipped']}; was {row['health']})"
    return row["shown"] + (" (DLQ)" if row["in_dlq"] else "")


# -- dlq ---------------------------------------------------------------------------------------------


@click.group()
def dlq() -> None:
    """The dead-letter queue: spreadsheets that could not be read (no access, not found, bad range,
    retries used up). An entry stays until the spreadsheet is read again ("recovered") or is purged."""


@dlq.command("list")
@config_option
@json_option
def dlq_list(config_path: Path | None, as_json: bool) -> None:
    """Every entry: the last error, first and last failure, occurrences; the latest first."""
    _quiet_logs()
    config = load_or_exit(config_path)
    state = read_state(config) or RunnerState()
    rows = admin.dlq_list(state, _clock.now())
    if as_json:
        emit_json({"entries": rows})
        return
    table = [
        (row["name"], row["id"], _error(row), row["message"], short_time(row["first_failed_at"]),
         short_time(row["last_failed_at"]), row["occurrences"])
        for row in rows
    ]
    echo_table(("name", "id", "error", "message", "first failed", "last failed", "times"), table, uncut=(1,),
               empty="The dead-letter queue is empty.")


def _error(row: dict) -> str:
    status = row.get("http_status")
    return f"{row.get('error_class') or '?'} {status}" if status else str(row.get("error_class") or "?")


@dlq.command("show")
@config_option
@json_option
@click.argument("spreadsheet_id", metavar="ID")
def dlq_show(config_path: Path | None, as_json: bool, spreadsheet_id: str) -> None:
    """One entry in full: the error, the task and its attempt history."""
    _quiet_logs()
    config = load_or_exit(config_path)
    state = read_state(config) or RunnerState()
    entry = _admin_call(admin.dlq_show, state, spreadsheet_id)
    if as_json:
        emit_json({"entry": entry})
        return
    now = _clock.now()
    error = entry["last_error"] or {}
    echo_fields([
        ("spreadsheet", f"{entry['name']} ({entry['id']})"),
        ("url", sheet_url(entry["id"])),
        ("error", f"{_error({**error, 'error_class': entry['error_class']})} "
                  f"{error.get('google_status') or ''}".rstrip()),
        ("message", error.get("message")),
        ("range", error.get("range")),
        ("first failed", when(entry["first_failed_at"], now)),
        ("last failed", when(entry["last_failed_at"], now)),
        ("occurrences", entry["occurrences"]),
        ("task", f"{entry['task'].get('id')}, {entry['task'].get('attempts')} attempts, "
                 f"status {entry['task'].get('status')}"),
    ])
    history = entry["history"] or entry["task"].get("history") or []
    if history:
        click.echo("\nattempts:")
        echo_table(("at", "outcome", "status", "message"), [
            (short_time(item.get("at")), item.get("outcome"), (item.get("error") or {}).get("http_status"),
             (item.get("error") or {}).get("message"))
            for item in history
        ])


@dlq.command("retry")
@config_option
@json_option
@wait_option
@click.option("--all", "retry_all", is_flag=True, help="Retry every entry.")
@click.argument("spreadsheet_id", metavar="[ID]", required=False)
def dlq_retry(config_path: Path | None, as_json: bool, wait: float, retry_all: bool,
              spreadsheet_id: str | None) -> None:
    """Make a dead-lettered spreadsheet (or, with --all, every one) due at once: in the round the next
    run continues, or first in the next round. Its entry stays until a read succeeds; then the run
    resolves it and the team hears "recovered"."""
    if retry_all == bool(spreadsheet_id):
        fail("give one ID, or --all (not both)", EXIT_USAGE)
    _quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    now = _clock.now()
    with changing_state(config, now, "dlq-retry", wait) as state:
        ids = list(state.dlq.entries) if retry_all else [spreadsheet_id]
        results = _admin_call(admin.dlq_retry, state, ids, now, config.run.round_interval)
    for result in results:
        log_event("admin_dlq_retry", spreadsheet_id=result["id"], due=result["due"])
    if as_json:
        emit_json({"retried": results})
        return
    if not results:
        click.echo("The dead-letter queue is empty: nothing to retry.")
    for result in results:
        where = ("in the current round: the next run reads it first" if result["due"] == "current_round"
                 else "first in the next round")
        line = f"{result['id']}: due at once, {where}."
        if result["breaker_was"]:
            line += f" Its breaker was {result['breaker_was']} and is now closed."
        if result["muted_until"]:
            muted = short_time(result["muted_until"])
            line += f" It is muted until {muted}: `sheet-monitor unmute` to read it now."
        click.echo(line)


@dlq.command("purge")
@config_option
@json_option
@wait_option
@click.argument("spreadsheet_id", metavar="[ID]", required=False)
def dlq_purge(config_path: Path | None, as_json: bool, wait: float, spreadsheet_id: str | None) -> None:
    """Forget one entry, or every entry when no ID is given. The spreadsheet stays monitored: if it
    fails again it gets a new entry and a new alert."""
    _quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    with changing_state(config, _clock.now(), "dlq-purge", wait) as state:
        removed = _admin_call(admin.dlq_purge, state, spreadsheet_id)
    log_event("admin_dlq_purge", count=len(removed))
    if as_json:
        emit_json({"purged": removed})
        return
    click.echo(f"Purged {len(removed)} entr{'y' if len(removed) == 1 else 'ies'} from the dead-letter queue.")


# -- breakers ----------------------------------------------------------------------------------------


@click.group(invoke_without_command=True)
@config_option
@json_option
@click.pass_context
def breakers(ctx: click.Context, config_path: Path | None, as_json: bool) -> None:
    """Per-spreadsheet circuit breakers (`breakers` alone lists them, like `breakers list`)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(breakers_list, config_path=config_path, as_json=as_json)
        return
    # Options given before the subcommand ("breakers --json list") become its defaults: a script
    # asking for JSON must not be handed a table.
    given = {"config_path": config_path} if config_path is not None else {}
    if as_json:
        given["as_json"] = True
    if given:
        ctx.default_map = {name: dict(given) for name in ("list", "reset")}


@breakers.command("list")
@config_option
@json_option
def breakers_list(config_path: Path | None = None, as_json: bool = False) -> None:
    """Every stored breaker, open ones first: failures in a row, when it opened, when it probes next."""
    _quiet_logs()
    config = load_or_exit(config_path)
    state = read_state(config) or RunnerState()
    now = _clock.now()
    rows = admin.breakers_list(state, _names(config, state), now)
    if as_json:
        emit_json({"breakers": rows})
        return
    table = [
        (row["name"], row["id"], row["state"] + (" (muted)" if row["muted_until"] else ""),
         row["consecutive_failures"], short_time(row["opened_at"]),
         format_duration_seconds(row["cooldown_seconds"]), short_time(row["next_probe_at"]))
        for row in rows
    ]
    echo_table(("name", "id", "state", "failures", "opened", "cooldown", "next probe"), table,
               status_column=2, uncut=(1,), empty="No breakers: every spreadsheet's breaker is closed.")


def format_duration_seconds(seconds: float | None) -> str:
    return format_duration(timedelta(seconds=seconds)) if seconds else "-"


@breakers.command("reset")
@config_option
@json_option
@wait_option
@click.argument("spreadsheet_id", metavar="ID")
def breakers_reset(config_path: Path | None, as_json: bool, wait: float, spreadsheet_id: str) -> None:
    """Close a spreadsheet's breaker now; it is read again in its next turn."""
    _quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    configured = set(config.sheets_by_id)
    with changing_state(config, _clock.now(), "breakers-reset", wait) as state:
        result = _admin_call(admin.breaker_reset, state, spreadsheet_id, configured)
    log_event("admin_breaker_reset", spreadsheet_id=spreadsheet_id, was=result["was"])
    if as_json:
        emit_json({"breaker": result})
        return
    if result["was"] == "closed":
        click.echo(f"{spreadsheet_id}: the breaker was already closed.")
    else:
        click.echo(f"{spreadsheet_id}: breaker closed (was {result['was']}).")


# -- mute / unmute -----------------------------------------------------------------------------------


def _duration(ctx, param, value: str):
    try:
        return parse_positive_duration(value)
    except InvalidValue as exc:
        raise click.BadParameter(f"{exc.problem}; {exc.fix}") from None


@click.command()
@config_option
@json_option
@wait_option
@click.argument("spreadsheet_id", metavar="ID")
@click.option("--for", "duration", required=True, callback=_duration, metavar="DURATION",
              help='How long, e.g. "2h", "1d", "90m". The mute ends by itself.')
@click.option("--reason", required=True, help="Why, for the next admin (shown by `sheets`).")
def mute(
    config_path: Path | None, as_json: bool, wait: float, spreadsheet_id: str, duration: timedelta,
    reason: str,
) -> None:
    """Silence one spreadsheet for a while: new rounds leave it out and its alerts go to nobody."""
    _quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    sheet = _sheet_or_exit(config, spreadsheet_id)
    now = _clock.now()
    with changing_state(config, now, "mute", wait) as state:
        result = _admin_call(admin.mute, state, sheet, duration, reason, now)
    log_event("admin_mute", spreadsheet_id=spreadsheet_id, until=result["until"])
    if as_json:
        emit_json({"mute": result})
        return
    click.echo(f"{sheet.name} ({sheet.id}) muted until {when(result['until'], now)}: {result['reason']}")


@click.command()
@config_option
@json_option
@wait_option
@click.argument("spreadsheet_id", metavar="ID")
def unmute(config_path: Path | None, as_json: bool, wait: float, spreadsheet_id: str) -> None:
    """End a mute now; the spreadsheet joins the next round and alerts again."""
    _quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    now = _clock.now()
    with changing_state(config, now, "unmute", wait) as state:
        if spreadsheet_id not in config.sheets_by_id and spreadsheet_id not in state.mutes:
            fail(admin.unknown_id_message(spreadsheet_id), EXIT_USAGE)
        result = admin.unmute(state, spreadsheet_id, now)
    log_event("admin_unmute", spreadsheet_id=spreadsheet_id, was_muted=result["was_muted"])
    if as_json:
        emit_json({"unmute": result})
        return
    if result["was_muted"]:
        click.echo(f"{spreadsheet_id}: unmuted (the mute was to last until {short_time(result['until'])}).")
    else:
        click.echo(f"{spreadsheet_id}: was not muted.")


COMMANDS = (status, sheets, dlq, breakers, mute, unmute)
