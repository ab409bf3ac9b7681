"""The operator commands' changes to the runner's state, wired from the config: a change under the
lock an admin command takes (the run lock, or beside runners sharing the state the round lock),
waiting up to ``wait`` seconds for a run to let it go; the whole state exported and imported. What
cannot be done raises ``AdminError`` (exit 1, nothing changed), what cannot be reached ``StateError``.
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
from monitor.state import State, admin_lock, changing_state
from monitor.storage import RUN_LOCK
from monitor.storage.configured import describe_location, state_location


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
