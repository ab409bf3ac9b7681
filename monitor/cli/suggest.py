"""`sheet-monitor suggest URL...`: a proposed profile, in the config's TOML, on stdout."""

from __future__ import annotations

import re
from pathlib import Path

import click

from monitor.admin.targets import spreadsheet_ids
from monitor.app.operator_clock import operator_clock as clock
from monitor.app.pacing import NoQuotaLeft
from monitor.cli.common import admin_call, quiet_logs
from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit
from monitor.config import DEFAULT_CONFIG_NAME, Config, ConfigError
from monitor.config.fields import folder_id
from monitor.core.errors import SheetReadError
from monitor.core.invalid_value import InvalidValue
from monitor.core.remedies import problem, remedy
from monitor.core.wording import counted

_PROFILE_NAME = re.compile(r"[A-Za-z0-9_-]+")  # a TOML bare key: [profiles.NAME] needs no quotes


@click.command()
@config_option
@click.argument("references", nargs=-1, required=True, metavar="URL|ID...")
@click.option("--name", "profile", default="suggested", show_default=True,
              help="The profile's name; a second template's profile is NAME_2, and so on.")
@click.option("--recursive", is_flag=True,
              help="A folder's subfolders' spreadsheets too (its [[folders]] table says recursive).")
@click.option("--credentials", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
              help="A service account's JSON key to read with, instead of a config's [google] "
                   "(repeatable): suggest before any config exists.")
@click.option("--endpoint", metavar="URL",
              help="With --credentials: the Google API to ask instead of Google's (the sandbox's "
                   "address, as [google] api_endpoint).")
def suggest(config_path: Path | None, references: tuple[str, ...], profile: str, recursive: bool,
            credentials: tuple[Path, ...], endpoint: str | None) -> None:
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
    from monitor.app.suggest import (  # gspread loads only for the command that reads
        FolderProblem,
        heading,
        suggest_for,
    )

    config = _config(config_path, credentials, endpoint)
    folders = [(reference, _folder_id(reference)) for reference in references if _DRIVE in reference]
    sheets = [reference for reference in references if _DRIVE not in reference]
    ids = admin_call(spreadsheet_ids, config.sheets, sheets)
    try:
        suggestion = suggest_for(config, ids, clock, profile, folders, recursive)
    except FolderProblem as exc:
        fail(str(exc), EXIT_USAGE)
    except SheetReadError as exc:  # Drive gave no answer to a listing: try again
        fail(f"the folder could not be listed: {exc.message}; try again in a minute", EXIT_OPERATIONAL)
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
    requests = counted(suggestion.listings, "request")
    listed = f" (Drive listed {counted(len(folders), 'folder')} in {requests})" if folders else ""
    click.echo(f"Read {read} of {suggestion.reads}{listed}, {counted(suggestion.reads, 'read')} of quota; "
               "nothing was recorded.", err=True)
    if suggestion.folders and not credentials:
        click.echo("Next: append it to your config, then `sheet-monitor check-config --access`.", err=True)
    elif suggestion.proposals and credentials:
        click.echo("Next: `sheet-monitor init --suggested FILE` (FILE: where this went) writes a config "
                   "that holds it, with the cron lines.", err=True)
    if suggestion.unread:
        raise SystemExit(EXIT_OPERATIONAL)


_DRIVE = "drive.google.com/"  # a folder's address; a spreadsheet's is on docs.google.com


def _folder_id(reference: str) -> str:
    try:
        return folder_id(reference)
    except InvalidValue as exc:
        fail(f"{reference}: {exc.problem}; {exc.fix}", EXIT_USAGE)


def _config(config_path: Path | None, credentials: tuple[Path, ...], endpoint: str | None) -> Config:
    """The config's, or with ``--credentials`` one of [google] alone made of the options."""
    if not credentials:
        if endpoint:
            fail("--endpoint goes with --credentials; with a config, write it as [google] api_endpoint",
                 EXIT_USAGE)
        return load_or_exit(config_path, require_secrets=True, require_sheets=False)
    if config_path is not None:
        fail("give --config or --credentials, not both", EXIT_USAGE)
    from monitor.app.suggest import google_only_config

    try:
        return google_only_config(credentials, endpoint, Path.cwd())
    except ConfigError as exc:
        fail(str(exc).replace(str(Path.cwd() / DEFAULT_CONFIG_NAME), "--credentials/--endpoint"), EXIT_USAGE)


COMMANDS = (suggest,)
