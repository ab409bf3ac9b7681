"""The operator commands' way to the runner's state: its location built from the config here, so the
CLI names no backend and only maps what these return or raise (``StateError``, ``AdminError``) to
its messages and exit codes.

Reading needs no lock: the state only ever changes atomically. Changing holds the lock an admin
command takes (the run lock, or beside runners sharing the state the round lock), waiting up to
``wait`` seconds for a run to let it go.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from monitor.admin import AdminError
from monitor.admin.transfer import Exported, export_document, replace_all
from monitor.config import Config
from monitor.core.logs import log_event
from monitor.core.wording import counted
from monitor.engine.folder_sync import monitored_config
from monitor.state import (
    State,
    admin_lock,
    changing_state,
    own_lock,
    read_state,
    read_state_with_repairs,
    run_lock_held,
    shares_state,
)
from monitor.storage import RUN_LOCK, FileLocation, RestoreReport, StateError
from monitor.storage.configured import describe_location, state_location


def where(config: Config) -> str:
    """The state's place as messages name it: the state folder, or the Redis hash."""
    return describe_location(state_location(config))


def state_file(config: Config) -> str:
    """The runner's state file (or its Redis hash), to name in messages."""
    location = state_location(config)
    if isinstance(location, FileLocation):
        return str(location.paths().snapshot)
    return describe_location(location)


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


def saved_state(config: Config, *, as_runner: bool = False, only: tuple[str, ...] | None = None
                ) -> State | None:
    """The state as the last save left it (None before the first run); raises ``StateError`` when
    neither it nor its last good copy can be read. ``as_runner``: beside runners sharing the state,
    as this host's runner sees it (its own heartbeat, run history and totals)."""
    location = state_location(config)
    runner = config.state.runner if as_runner and shares_state(location) else None
    return read_state(location, only=only, runner=runner)


def saved_state_with_repairs(config: Config) -> tuple[State | None, RestoreReport | None]:
    """``saved_state``, and what of the saved state could not be used (None when all of it could)."""
    return read_state_with_repairs(state_location(config))


def run_in_progress(config: Config, runner: str | None = None) -> bool:
    """Does a run hold the run lock now (``runner``'s own, beside runners sharing the state)?"""
    location = state_location(config)
    return run_lock_held(location, own_lock(runner)) if runner else run_lock_held(location)


@contextmanager
def changed_state(config: Config, now: datetime, command: str, wait: float) -> Iterator[State]:
    """Hold the admin lock, yield the state, save it if the block ends normally, let the lock go.

    Raises ``AdminError`` (exit 1), changing nothing, when a run keeps the lock for ``wait`` seconds,
    and ``StateError`` when the state cannot be opened. An exception in the block saves none of its
    changes; what opening had to repair (a restore, damaged entries) is saved before the block runs.
    """
    location = state_location(config)
    place = describe_location(location)
    with changing_state(location, actor=f"admin-{command}", now=now, wait=wait,
                        lock=admin_lock(location)) as session:
        if session is None:
            raise AdminError(
                f"a run is in progress (it holds the run lock in {place}); nothing was changed. Try again "
                "when it ends (a run ends within its budget), or pass --wait SECONDS to wait longer.")
        yield session.state
    log_event("admin_state_changed", command=command, state_dir=place)


def exported_state(config: Config, now: datetime) -> tuple[bytes, int]:
    """Every key of the runner's state as one export document, and how many keys it holds. Raises
    ``AdminError`` when no state is saved yet, ``StateError`` when it cannot be read."""
    location = state_location(config)
    if not location.exists():
        raise AdminError(f"no state is saved at {describe_location(location)} yet: nothing to export")
    with location.open(read_only=True) as store:
        return export_document(store, describe_location(location), now), len(store.get_keys())


def imported_state(config: Config, exported: Exported, replace: bool, wait: float) -> int:
    """Load ``exported`` into the configured backend in one atomic update, under the run lock; how
    many entries it replaced. Raises ``AdminError`` (changing nothing) when a run keeps the lock for
    ``wait`` seconds or the target holds a state and ``replace`` is not given; ``StateError`` when
    the state cannot be reached."""
    location = state_location(config)
    place = describe_location(location)
    lock = location.lock(RUN_LOCK)
    if not lock.acquire(timeout=wait):
        raise AdminError(f"a run is in progress (it holds the run lock in {place}); nothing was imported."
                         " Stop cron's runs first (docs/operations.md), or pass --wait SECONDS")
    try:
        with location.open() as store:
            held = len(store.get_keys())
            if held and not replace:
                raise AdminError(f"the state at {place} already holds {counted(held, 'entry', 'entries')};"
                                 " nothing was imported. Pass --replace to replace them (`sheet-monitor"
                                 " state export` them first to keep a copy)")
            replace_all(store, exported.properties)
    finally:
        lock.release()
    log_event("state_imported", entries=len(exported.properties), into=place)
    return held
