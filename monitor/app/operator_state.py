"""The operator commands' way to read the runner's state: its location built from the config here, so
the CLI names no backend and only maps what these return or raise (``StateError``) to its messages
and exit codes. Reading needs no lock: the state only ever changes atomically. (Changing it:
``operator_changes``, apart so that a run, which reads its summary through here, does not load the
operators' library.)
"""

from __future__ import annotations

from monitor.config import Config
from monitor.engine.folder_sync import monitored_config
from monitor.state import State, own_lock, read_state, read_state_with_repairs, run_lock_held, shares_state
from monitor.storage import FileLocation, RestoreReport, StateError
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
