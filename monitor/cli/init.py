"""`sheet-monitor init`: a starter config, its JSON Schema, the two cron lines and the systemd units
for this machine, written into a folder (``monitor.app.starter``); exit 2 when a file exists and
``--force`` was not given, or a spreadsheet or path cannot be used."""

from __future__ import annotations

from pathlib import Path

import click

from monitor.app.starter import StarterError, starter_files, starter_for, this_machine, write_starter
from monitor.app.starter_texts import Place, Starter
from monitor.cli.output import fail
from monitor.cli.state_access import EXIT_USAGE


@click.command()
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="The folder to write into: the config, and the state, keys and logs "
                                      "beside it.")
@click.option("--sheet", "sheets", multiple=True, metavar="ID|URL",
              help="A spreadsheet to monitor, by its id or its URL (repeatable).")
@click.option("--folder", "folders", multiple=True, metavar="URL|ID",
              help="A Drive folder whose Google Sheets are all monitored, by its URL or id (repeatable).")
@click.option("--profile", default=None, metavar="NAME",
              help="The profile the spreadsheets and folders given are checked with (default: the "
                   "starter's, or the first of --suggested).")
@click.option("--suggested", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="`sheet-monitor suggest`'s output, written into the config in place of the starter "
                   "profile, with its [[folders]] and [[sheets]] tables.")
@click.option("--endpoint", metavar="URL",
              help="The Google API to ask instead of Google's ([google] api_endpoint): the sandbox's.")
@click.option("--credentials", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
              help="A service account's JSON key (repeatable; default: secrets/sa-1.json beside the config).")
@click.option("--chat-id", default=None, help="The Telegram chat to tell (else messages are printed).")
@click.option("--force", is_flag=True, help="Replace the files init writes if they exist.")
def init(folder: Path, sheets: tuple[str, ...], folders: tuple[str, ...], profile: str | None,
         suggested: Path | None, endpoint: str | None, credentials: tuple[Path, ...], chat_id: str | None,
         force: bool) -> None:
    """Write a starter monitor.toml (with its JSON Schema beside it, for editors), the two cron lines
    (sheet-monitor.cron: the runs every 5 minutes, the watchdog every 15) and the systemd units
    (systemd/) for this machine: this installation's executables, this user, the folder's paths.
    Nothing is replaced without --force."""
    try:
        place = this_machine(folder)
        starter = starter_for(place, sheets, credentials, chat_id, folders=folders, profile=profile,
                              suggested=suggested, endpoint=endpoint)
        written = write_starter(place, starter_files(place, starter), force)
    except StarterError as exc:
        fail(str(exc), EXIT_USAGE)
    for path in written.files:
        click.echo(f"wrote {path}")
    for made in written.folders:
        click.echo(f"made  {made}/ (0700)")
    _next_steps(place, starter)


def _next_steps(place: Place, starter: Starter) -> None:
    config = place.config
    steps = []
    key = place.folder / starter.credentials[0]
    if starter.credentials == Starter().credentials and not key.exists():  # named for the key to be put there
        steps.append(f"put the service account's JSON key in {key} (chmod 600)")
    if not starter.sheets and not starter.watches_folders:
        steps.append(f"list your spreadsheets in {config} ([[sheets]], at least one)")
    if starter.chat_id:
        steps.append(f"put the bot token in {place.token_file} (chmod 600)")
    access = " --access" if starter.watches_folders else ""  # can the keys open the folders?
    steps += [f"sheet-monitor check-config{access} --config {config}",
              f"sheet-monitor run --config {config}",
              f"install the cron lines of {place.folder / 'sheet-monitor.cron'}, or the units in "
              f"{place.folder / 'systemd'} (docs/operations.md)"]
    click.echo("\nNext:")
    for number, step in enumerate(steps, start=1):
        click.echo(f"  {number}. {step}")
