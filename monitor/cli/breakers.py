"""`breakers [list]` and `breakers reset ID`: per-spreadsheet circuit breakers, for operators."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import click

from monitor import admin
from monitor.app.operator_clock import operator_clock as clock
from monitor.cli.common import admin_call, changing_options, changing_or_exit, quiet_logs, reading_options
from monitor.cli.output import echo_table, emit_json, short_time
from monitor.cli.state_access import load_or_exit, read_or_exit
from monitor.core.durations import format_duration
from monitor.core.logs import log_event
from monitor.state import State


@click.group(invoke_without_command=True)
@reading_options
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
@reading_options
def breakers_list(config_path: Path | None = None, as_json: bool = False) -> None:
    """Every stored breaker, open ones first: failures in a row, when it opened, when it probes next."""
    quiet_logs()
    config = load_or_exit(config_path)
    state = read_or_exit(config) or State()
    now = clock.now()
    names = {sheet.id: sheet.name for sheet in config.sheets}
    rows = admin.breakers_list(state, names, now, names)
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
@changing_options
@click.argument("spreadsheet_id", metavar="ID")
def breakers_reset(config_path: Path | None, as_json: bool, wait: float, spreadsheet_id: str) -> None:
    """Close a spreadsheet's breaker now; it is read again in its next turn."""
    quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    configured = set(config.sheets_by_id)
    with changing_or_exit(config, clock.now(), "breakers-reset", wait) as state:
        result = admin_call(admin.breaker_reset, state, spreadsheet_id, configured)
    log_event("admin_breaker_reset", spreadsheet_id=spreadsheet_id, was=result["was"])
    if as_json:
        emit_json({"breaker": result})
        return
    if result["was"] == "closed":
        click.echo(f"{spreadsheet_id}: the breaker was already closed.")
    else:
        click.echo(f"{spreadsheet_id}: breaker closed (was {result['was']}).")
