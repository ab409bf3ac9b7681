"""`dlq list / show / retry / purge`: the dead-letter queue, for operators."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from monitor import admin
from monitor.app.operator_clock import operator_clock as clock
from monitor.cli.common import admin_call, changing_options, changing_or_exit, quiet_logs, reading_options
from monitor.cli.output import echo_fields, echo_table, emit_json, fail, short_time, when
from monitor.cli.state_access import (
    EXIT_OPERATIONAL,
    EXIT_USAGE,
    load_or_exit,
    read_or_exit,
)
from monitor.core.logs import log_event
from monitor.core.wording import counted
from monitor.notify.messages import sheet_url
from monitor.state import State


@click.group()
def dlq() -> None:
    """The dead-letter queue: spreadsheets that could not be read (no access, not found, bad range,
    retries used up). An entry stays until the spreadsheet is read again ("recovered") or is purged."""


@dlq.command("list")
@reading_options
def dlq_list(config_path: Path | None, as_json: bool) -> None:
    """Every entry: the last error, first and last failure, occurrences; the latest first."""
    quiet_logs()
    config = load_or_exit(config_path)
    state = read_or_exit(config) or State()
    rows = admin.dlq_list(state, clock.now(), config.sheets_by_id)
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
@reading_options
@click.argument("spreadsheet_id", metavar="ID")
def dlq_show(config_path: Path | None, as_json: bool, spreadsheet_id: str) -> None:
    """One entry in full: the error, the task and its attempt history."""
    quiet_logs()
    config = load_or_exit(config_path)
    state = read_or_exit(config) or State()
    entry = admin_call(admin.dlq_show, state, spreadsheet_id, config.sheets_by_id)
    if as_json:
        emit_json({"entry": entry})
        return
    now = clock.now()
    error = entry["last_error"] or {}
    echo_fields([
        ("spreadsheet", f"{entry['name']} ({entry['id']})"),
        ("url", sheet_url(entry["id"])),
        ("error", f"{_error({**error, 'error_class': entry['error_class']})} "
                  f"{error.get('google_status') or ''}".rstrip()),
        ("message", error.get("message")),
        ("range", error.get("range")),
        ("to fix", entry.get("remedy")),
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
@changing_options
@click.option("--all", "retry_all", is_flag=True, help="Retry every entry.")
@click.argument("spreadsheet_id", metavar="[ID]", required=False)
def dlq_retry(config_path: Path | None, as_json: bool, wait: float, retry_all: bool,
              spreadsheet_id: str | None) -> None:
    """Make a dead-lettered spreadsheet (or, with --all, every one) due at once: in the round the next
    run continues, or first in the next round. Its entry stays until a read succeeds; then the run
    resolves it and the team hears "recovered"."""
    if retry_all == bool(spreadsheet_id):
        fail("give one ID, or --all (not both)", EXIT_USAGE)
    quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    now = clock.now()
    with changing_or_exit(config, now, "dlq-retry", wait) as state:
        configured = config.sheets_by_id
        ids = [sid for sid in state.dlq if sid in configured] if retry_all else [spreadsheet_id]
        results = admin_call(admin.dlq_retry, state, ids, now, config.run.round_interval, configured)
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
@changing_options
@click.option("--all", "purge_all", is_flag=True, help="Every entry (asks first, unless --yes).")
@click.option("--yes", is_flag=True, help="Do not ask before forgetting every entry (for scripts).")
@click.argument("spreadsheet_id", metavar="[ID]", required=False)
def dlq_purge(config_path: Path | None, as_json: bool, wait: float, purge_all: bool, yes: bool,
              spreadsheet_id: str | None) -> None:
    """Forget one entry, or with --all every entry (after a question; --yes skips it). The
    spreadsheets stay monitored: one that fails again gets a new entry and a new alert."""
    if purge_all and spreadsheet_id:
        fail("give one ID, or --all (not both)", EXIT_USAGE)
    quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    ids = [spreadsheet_id] if spreadsheet_id else _confirmed_ids(config, yes)
    with changing_or_exit(config, clock.now(), "dlq-purge", wait) as state:
        if spreadsheet_id:
            removed = admin_call(admin.dlq_purge, state, spreadsheet_id)
        else:  # those the question named: an entry a run added meanwhile was not asked about
            removed = [sid for sid in ids if sid in state.dlq]
            for sid in removed:
                admin.dlq_purge(state, sid)
    log_event("admin_dlq_purge", count=len(removed))
    if as_json:
        emit_json({"purged": removed})
        return
    click.echo(f"Purged {counted(len(removed), 'entry', 'entries')} from the dead-letter queue.")


def _confirmed_ids(config, yes: bool) -> list[str]:
    """Every entry's id, once the operator said yes (or passed --yes); exits 1 on a no."""
    state = read_or_exit(config) or State()
    ids = list(state.dlq.keys())
    if not ids or yes:
        return ids
    names = ", ".join(entry.name for entry in list(state.dlq.values())[:5])
    more = f" and {len(ids) - 5} more" if len(ids) > 5 else ""
    try:
        agreed = click.confirm(f"Forget all {len(ids)} entries of the dead-letter queue ({names}{more})?",
                               default=False, err=True)
    except click.Abort:  # stdin ended (a script without --yes): no answer is a no
        agreed = False
    if not agreed:
        fail("nothing was purged (pass --all --yes to purge every entry without the question)",
             EXIT_OPERATIONAL)
    return ids
