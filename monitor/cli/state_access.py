"""The operator commands' access to the config and the state, with failures turned into exit codes.

Reading needs no lock: the state only ever changes atomically. Changing takes the run lock, waiting
up to ``--wait`` seconds (default LOCK_WAIT_SECONDS) for a run to finish; if the lock stays taken the
command changes nothing and exits 1. Waiting briefly rather than failing at once lets a command typed
while a short run finishes just work; not waiting long keeps an admin from staring at a silent
terminal for a whole run (up to the budget).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import click

from monitor.cli.output import emit_json, fail
from monitor.config import Config, ConfigError, load_config, resolve_config_path
from monitor.core.logs import log_event
from monitor.engine.folder_sync import monitored_config
from monitor.state import State, admin_lock, changing_state, read_state, shares_state
from monitor.storage import FileLocation, StateError
from monitor.storage.configured import describe_location, state_location

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


def with_listed_folders(config: Config) -> Config:
    """``config`` with its folders' spreadsheets as the state holds them (none before a run listed
    them, or when the state cannot be read: the command that reads it says so)."""
    if not config.folders:
        return config
    try:
        state = read_state(state_location(config), only=("folders",))
    except StateError:
        return config
    return monitored_config(config, state.folders) if state is not None else config


def state_file(config: Config) -> str:
    """The runner's state file (or its Redis hash), to name in messages."""
    location = state_location(config)
    if isinstance(location, FileLocation):
        return str(location.paths().snapshot)
    return describe_location(location)


def read_or_exit(config: Config, as_runner: bool = False) -> State | None:
    """The state as the last save left it (None before the first run), or exit 1 with the store's
    message when neither it nor its last good copy can be read. ``as_runner``: beside runners sharing
    the state, as this host's runner sees it (its own heartbeat, run history and totals)."""
    place = state_location(config)
    runner = config.state.runner if as_runner and shares_state(place) else None
    try:
        return read_state(place, runner=runner)
    except StateError as exc:
        fail(str(exc), EXIT_OPERATIONAL)


@contextmanager
def changing_or_exit(config: Config, now: datetime, command: str, wait: float) -> Iterator[State]:
    """Hold the run lock, yield the state, save it if the block ends normally, release the lock.

    Exits 1, changing nothing, when a run keeps the lock for ``wait`` seconds or the state cannot be
    opened. An exception in the block (an exit included) saves none of its changes; what opening had
    to repair (a restore, damaged entries) is saved before the block runs.
    """
    location = state_location(config)
    state_dir = describe_location(location)
    try:
        with changing_state(location, actor=f"admin-{command}", now=now, wait=wait,
                            lock=admin_lock(location)) as session:
            if session is None:
                fail(
                    f"a run is in progress (it holds the run lock in {state_dir}); nothing was changed. "
                    "Try again when it ends (a run ends within its budget), or pass --wait SECONDS to wait "
                    "longer.",
                    EXIT_OPERATIONAL,
                )
            yield session.state
    except StateError as exc:
        fail(str(exc), EXIT_OPERATIONAL)
    log_event("admin_state_changed", command=command, state_dir=state_dir)
