"""`sheet-monitor suggest URL...`: a proposed profile, in the config's TOML, on stdout."""

from __future__ import annotations

import re
from pathlib import Path

import click

from monitor.admin.targets import spreadsheet_ids
from monitor.app.pacing import NoQuotaLeft
from monitor.cli.common import admin_call, clock, quiet_logs
from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit
from monitor.core.remedies import problem, remedy
from monitor.core.wording import counted

_PROFILE_NAME = re.compile(r"[A-Za-z0-9_-]+")  # a TOML bare key: [profiles.NAME] needs no quotes


@click.command()
@config_option
@click.argument("references", nargs=-1, required=True, metavar="URL|ID...")
@click.option("--name", "profile", default="suggested", show_default=True,
              help="The profile's name; a second template's profile is NAME_2, and so on.")
def suggest(config_path: Path | None, references: tuple[str, ...], profile: str) -> None:
    """Read each spreadsheet once (its tabs, header rows and values; paced within the quota as the runs
    are) and print a proposed profile in TOML, each check under a comment saying what it saw: formula
    errors over the used ranges, headers by the header row, keys that look unique (duplicates,
    missing), dates (freshness), numbers (bounds from what the values show, never tighter than
    today's data passes) and the columns filled in every row. Spreadsheets of one template (the same
    tabs and headers) get one profile; a key found whole in a spreadsheet alone of its template (a
    catalogue) gets a cross-sheet check. Then one [[sheets]] table per spreadsheet: add it all to the
    config and run `sheet-monitor check-config`.

    Spreadsheets are named by URL or id (or a configured name). Exit 0 when every one was read, 1 when
    one could not be (each is named on stderr, with what to do; the others are still proposed for),
    2 for a reference that is no spreadsheet."""
    quiet_logs()
    if not _PROFILE_NAME.fullmatch(profile):
        fail(f"--name {profile!r}: a profile's name has letters, digits, '-' and '_' only", EXIT_USAGE)
    config = load_or_exit(config_path, require_secrets=True, require_sheets=False)
    ids = admin_call(spreadsheet_ids, config.sheets, references)
    from monitor.app.suggest import heading, suggest_for  # gspread loads only for the command that reads

    try:
        suggestion = suggest_for(config, ids, clock, profile)
    except NoQuotaLeft as exc:
        fail(str(exc), EXIT_OPERATIONAL)
    if suggestion.proposals:
        click.echo(suggestion.toml(heading(suggestion, clock)), nl=False)
    for unread in suggestion.unread:
        error = unread.error
        status = f" (HTTP {error.http_status})" if error.http_status else ""
        why = problem(error) or error.message
        fix = remedy(error, after_problem=True)
        click.echo(f"{unread.sheet_id}: could not be read{status}: {why}" + (f"; {fix}" if fix else ""),
                   err=True)
    read = counted(len(suggestion.surveys), "spreadsheet")
    click.echo(f"Read {read} of {len(ids)}, {counted(suggestion.reads, 'read')} of quota; nothing was "
               "recorded.", err=True)
    if suggestion.unread:
        raise SystemExit(EXIT_OPERATIONAL)


COMMANDS = (suggest,)
