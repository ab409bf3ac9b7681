"""`mute REF... --for DURATION --reason TEXT` and `unmute REF...`: silencing spreadsheets for a while.

A REF is an id, the spreadsheet's URL or its name (``monitor.admin.targets``); ``--tag`` adds every
spreadsheet with that tag, so a whole group is muted (and unmuted) at once.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import click

from monitor import admin
from monitor.admin.targets import resolve_all
from monitor.app.operator_clock import operator_clock as clock
from monitor.cli.common import admin_call, changing_options, changing_or_exit, quiet_logs
from monitor.cli.output import emit_json, fail, short_time, when
from monitor.cli.state_access import EXIT_USAGE, load_or_exit
from monitor.config import Config, Sheet
from monitor.core.durations import parse_positive_duration
from monitor.core.invalid_value import InvalidValue
from monitor.core.logs import log_event

tag_option = click.option("--tag", "tags", multiple=True, metavar="TAG",
                          help="Every spreadsheet with this tag (repeatable).")


def _duration(ctx, param, value: str):
    try:
        return parse_positive_duration(value)
    except InvalidValue as exc:
        raise click.BadParameter(f"{exc.problem}; {exc.fix}") from None


def _targets(config: Config, references: tuple[str, ...], tags: tuple[str, ...], verb: str) -> list[Sheet]:
    if not references and not tags:
        fail(f"name what to {verb}: one or more IDs, URLs or names, or --tag TAG", EXIT_USAGE)
    return admin_call(resolve_all, config.sheets, references, tags)


@click.command()
@changing_options
@click.argument("references", metavar="[REF]...", nargs=-1)
@tag_option
@click.option("--for", "duration", required=True, callback=_duration, metavar="DURATION",
              help='How long, e.g. "2h", "1d", "90m". The mute ends by itself.')
@click.option("--reason", required=True, help="Why, for the next admin (shown by `sheets`).")
def mute(
    config_path: Path | None, as_json: bool, wait: float, references: tuple[str, ...],
    tags: tuple[str, ...], duration: timedelta, reason: str,
) -> None:
    """Silence spreadsheets for a while: new rounds leave them out and their alerts go to nobody.
    REF is an id, a URL or a name; --tag TAG takes every spreadsheet with that tag."""
    quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    sheets = _targets(config, references, tags, "mute")
    now = clock.now()
    with changing_or_exit(config, now, "mute", wait) as state:
        results = [admin_call(admin.mute, state, sheet, duration, reason, now) for sheet in sheets]
    for result in results:
        log_event("admin_mute", spreadsheet_id=result["id"], until=result["until"])
    if as_json:
        # "mute": the one spreadsheet's, as before several could be muted at once.
        emit_json({**({"mute": results[0]} if len(results) == 1 else {}), "muted": results})
        return
    for result in results:
        click.echo(f"{result['name']} ({result['id']}) muted until {when(result['until'], now)}: "
                   f"{result['reason']}")


@click.command()
@changing_options
@click.argument("references", metavar="[REF]...", nargs=-1)
@tag_option
def unmute(config_path: Path | None, as_json: bool, wait: float, references: tuple[str, ...],
           tags: tuple[str, ...]) -> None:
    """End mutes now; the spreadsheets join the next round and alert again. REF is an id, a URL or a
    name; --tag TAG takes every spreadsheet with that tag."""
    quiet_logs(logging.INFO)
    config = load_or_exit(config_path)
    now = clock.now()
    with changing_or_exit(config, now, "unmute", wait) as state:
        # A spreadsheet muted and then removed from the config is unmuted by its id.
        kept = [ref for ref in references if ref in state.mutes and ref not in config.sheets_by_id]
        rest = tuple(ref for ref in references if ref not in kept)
        if rest or tags or not kept:  # with nothing named at all, exits 2 saying what to name
            kept += [sheet.id for sheet in _targets(config, rest, tags, "unmute")]
        ids = kept
        results = [admin.unmute(state, sid, now) for sid in ids]
    for result in results:
        log_event("admin_unmute", spreadsheet_id=result["id"], was_muted=result["was_muted"])
    if as_json:
        emit_json({**({"unmute": results[0]} if len(results) == 1 else {}), "unmuted": results})
        return
    names = {sheet.id: sheet.name for sheet in config.sheets}
    for result in results:
        shown = f"{names[result['id']]} ({result['id']})" if result["id"] in names else result["id"]
        if result["was_muted"]:
            click.echo(f"{shown}: unmuted (the mute was to last until {short_time(result['until'])}).")
        else:
            click.echo(f"{shown}: was not muted.")
