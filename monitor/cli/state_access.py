"""The operator commands' config and state (``app.operator_state``), their failures as exit codes.

Changing waits up to ``--wait`` seconds (default LOCK_WAIT_SECONDS) for a run to let the lock go; if
it stays taken the command changes nothing and exits 1. Waiting briefly rather than failing at once
lets a command typed while a short run finishes just work; not waiting long keeps an admin from
staring at a silent terminal for a whole run (up to the budget).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from monitor.app.operator_state import saved_state, with_listed_folders
from monitor.cli.output import emit_json, fail
from monitor.config import Config, ConfigError, load_config, resolve_config_path
from monitor.state import State
from monitor.storage import StateError

EXIT_OPERATIONAL, EXIT_USAGE = 1, 2
LOCK_WAIT_SECONDS = 10.0

wait_option = click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=LOCK_WAIT_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for a run in progress to finish before giving up (exit 1).",
)


def load_or_exit(config_path: Path | None, *, require_secrets: bool = False, as_json: bool = False,
                 listed: bool = True, require_sheets: bool = True) -> Config:
    """The validated config, or exit 2 with every problem listed on stderr (and, ``as_json``, all of
    them as a JSON document on stdout). Read-only commands do not need the credential files or the
    Telegram token, so by default they are not required; `suggest` and `check URL` need no listed
    spreadsheet (``require_sheets=False``). ``listed``: with the spreadsheets its ``[[folders]]``
    held when the last run listed them (`run` and `check-config` ask Drive instead)."""
    path = resolve_config_path(config_path, os.environ)
    try:
        config = load_config(path, os.environ, require_secrets=require_secrets, require_sheets=require_sheets)
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        if as_json:
            emit_json({"valid": False, "config": str(path),
                       "problems": [issue.to_dict() for issue in exc.issues]})
        raise SystemExit(EXIT_USAGE) from None
    return with_listed_folders(config) if listed else config


def read_or_exit(config: Config, as_runner: bool = False) -> State | None:
    """The state as the last save left it (None before the first run), or exit 1 with the store's
    message when neither it nor its last good copy can be read. ``as_runner``: beside runners sharing
    the state, as this host's runner sees it (its own heartbeat, run history and totals)."""
    try:
        return saved_state(config, as_runner=as_runner)
    except StateError as exc:
        fail(str(exc), EXIT_OPERATIONAL)
