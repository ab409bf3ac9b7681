"""`mute ID --for DURATION --reason TEXT` and `unmute ID`: silencing one spreadsheet for a while."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import click

from monitor import admin
from monitor.cli.common import admin_call, changing_options, clock, quiet_logs, sheet_or_exit
from monitor.cli.output import emit_json, fail, short_time, when
from monitor.cli.state_access import EXIT_USAGE, changing_or_exit, load_or_exit
from monitor.core.durations import parse_positive_duration
from monitor.core.invalid import InvalidValue
from monitor.core.logs import log_event


def _duration(ctx, param, value: str):
    try:
        return parse_positive_duration(value)
    except InvalidValue as exc:
        raise click.BadParameter(f"{exc.problem}; {exc.fix}") from None


@click.command()
@changing_options
@click.argument("spreadsheet_id", metavar="ID")
@click.option("--for", "duration", required=True, callback=_duration, metavar="DURATION",
              help='How long, e.g. "2h", "1d", "90m". The mute ends by itself.')
@click.option("--reason", required=True, help="Why, for the next admin (shown by `sheets`).")
def mute(
    config_path: Path | None, as_json: bool, wait: float, spreadsheet_id: str, duration: timedelta,
    reason: str,
) -> None:
    """Silence one spreadsheet for a while: new rounds leave it out and its alerts go to nobody."""
    quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    sheet = sheet_or_exit(config, spreadsheet_id)
    now = clock.now()
    with changing_or_exit(config, now, "mute", wait) as state:
        result = admin_call(admin.mute, state, sheet, duration, reason, now)
    log_event("admin_mute", spreadsheet_id=spreadsheet_id, until=result["until"])
    if as_json:
        emit_json({"mute": result})
        return
    click.echo(f"{sheet.name} ({sheet.id}) muted until {when(result['until'], now)}: {result['reason']}")


@click.command()
@changing_options
@click.argument("spreadsheet_id", metavar="ID")
def unmute(config_path: Path | None, as_json: bool, wait: float, spreadsheet_id: str) -> None:
    """End a mute now; the spreadsheet joins the next round and alerts again."""
    quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    now = clock.now()
    with changing_or_exit(config, now, "unmute", wait) as state:
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
