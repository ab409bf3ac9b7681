"""The operator commands' access to the config and the state file, with failures turned into exit codes.

Reading needs no lock: the state file is only ever replaced atomically. Changing takes the run lock,
waiting up to ``--wait`` seconds (default LOCK_WAIT_SECONDS) for a run to finish; if the lock stays
taken the command changes nothing and exits 1. Waiting briefly rather than failing at once lets a
command typed while a short run finishes just work; not waiting long keeps an admin from staring at a
silent terminal for a whole run (up to the budget, 6 minutes by default).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import click

from monitor.cli.output import fail
from monitor.config import Config, ConfigError, load_config, resolve_config_path
from monitor.core.logs import log_event
from monitor.state import events
from monitor.state.runner_state import RunnerState, dump_state, load_state
from monitor.storage import STATE_FILE_NAME, FileStore, FlockLock, StateError, StatePaths

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


def load_or_exit(config_path: Path | None, *, require_secrets: bool = False) -> Config:
    """The validated config, or exit 2 with every problem listed. Read-only commands do not need the
    credential files or the Telegram token, so by default they are not required."""
    path = resolve_config_path(config_path, os.environ)
    try:
        return load_config(path, os.environ, require_secrets=require_secrets)
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        raise SystemExit(EXIT_USAGE) from None


def state_file(config: Config) -> Path:
    return Path(config.run.state_dir) / STATE_FILE_NAME


def load_state_file(config: Config) -> RunnerState | None:
    """The state as the last checkpoint left it, None when no run has written one yet; raises the
    store's StateError (StateUnreadable names both files and how to restore the last good copy)."""
    path = state_file(config)
    if not StatePaths(path).exist():
        return None
    store = FileStore(path, read_only=True)
    try:
        return load_state(store.get_properties())
    finally:
        store.close()


def read_state(config: Config) -> RunnerState | None:
    """``load_state_file``, or exit 1 with the store's message when the state cannot be read."""
    try:
        return load_state_file(config)
    except StateError as exc:
        fail(str(exc), EXIT_OPERATIONAL)


@contextmanager
def changing_state(config: Config, now: datetime, command: str, wait: float) -> Iterator[RunnerState]:
    """Hold the run lock, yield the state, save it if the block ends normally, release the lock.

    Exits 1, changing nothing, when a run keeps the lock for ``wait`` seconds or the state is
    unreadable. An exception in the block saves none of its changes (a restore from the last good
    copy, and its event for the next run's notifier, are saved before the block runs).
    """
    state_dir = Path(config.run.state_dir)
    lock = FlockLock.in_dir(state_dir)
    if not lock.acquire(timeout=wait):
        fail(
            f"a run is in progress (it holds {lock.path}); nothing was changed. Try again when it ends "
            f"(a run ends within its budget), or pass --wait SECONDS to wait longer.",
            EXIT_OPERATIONAL,
        )
    try:
        try:
            store = FileStore.in_dir(state_dir)
        except StateError as exc:
            fail(str(exc), EXIT_OPERATIONAL)
        try:
            state = load_state(store.get_properties())
            if store.restored_from_backup:
                # Opening restored the last good copy; the run that would have reported it will now
                # find a good file, so the event is recorded here for the next run's notifier.
                reason = store.restore_report.reason if store.restore_report else ""
                state.add_event(events.Event.make(
                    events.STATE_RESTORED, now, f"admin-{command}", details={"reason": reason}).to_dict())
                # Saved at once: if the command then fails, the restore must still be told.
                store.set_properties(dump_state(state))
            yield state
            store.set_properties(dump_state(state))
            log_event("admin_state_changed", command=command, state_file=str(store.path))
        finally:
            store.close()
    finally:
        lock.release()
