"""Where a state lives, and the one safe order to use it: take the lock, then open the store.

Opening a store to write is already writing (a file store cleans up a killed writer's temp files and
compacts its journal), so only the holder of the lock may do it. A location hands out locks without
opening anything, and opens the stores it holds by name: ``properties`` (the runner's state) and
``watchdog-state`` (the watchdog's own). A file location is a state folder; a memory location is the
in-memory twin the tests use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from monitor.storage.contract import RUN_LOCK, PropertyStore, StoreLock
from monitor.storage.file_store import FileStore
from monitor.storage.in_memory import MemoryBacking, MemoryLock, MemoryStore
from monitor.storage.lock import FlockLock
from monitor.storage.paths import StatePaths
from monitor.storage.writability import reading

PROPERTIES = "properties"  # the runner's state


class StateLocation(ABC):
    # Can several processes write its stores at once, each fenced by its own lock (compare-and-set,
    # re-reads: monitor.storage.redis_shared)? Then runners share it rather than take turns.
    shared_writers = False
    fence: str = RUN_LOCK  # the lock whose token a writer must still hold (where the backend checks)

    @abstractmethod
    def exists(self, name: str = PROPERTIES) -> bool:
        """True if anything of the store ``name`` was ever saved (it may still be unreadable)."""

    @abstractmethod
    def open(self, name: str = PROPERTIES, *, read_only: bool = False) -> PropertyStore:
        """The store ``name``; to write, hold its lock first."""

    @abstractmethod
    def lock(self, name: str = RUN_LOCK) -> StoreLock:
        """The lock ``name``, not taken yet."""


class FileLocation(StateLocation):
    """A state folder: store ``name`` is ``<state_dir>/<name>.json`` (with its journal and copies)."""

    def __init__(self, state_dir: str | Path) -> None:
        self.state_dir = Path(state_dir)

    def paths(self, name: str = PROPERTIES) -> StatePaths:
        return StatePaths(self.state_dir / f"{name}.json")

    def exists(self, name: str = PROPERTIES) -> bool:
        # A folder this user may not enter cannot say: the StateError says who may, and the fix.
        with reading(self.state_dir):
            return self.paths(name).exist()

    def open(self, name: str = PROPERTIES, *, read_only: bool = False) -> FileStore:
        with reading(self.state_dir):
            return FileStore(self.paths(name).snapshot, read_only=read_only)

    def lock(self, name: str = RUN_LOCK) -> FlockLock:
        return FlockLock.in_dir(self.state_dir, name)

    def __repr__(self) -> str:
        return f"FileLocation({str(self.state_dir)!r})"


class MemoryLocation(StateLocation):
    """Stores and locks in memory, shared by everything that uses this one location object."""

    def __init__(self) -> None:
        self.backings: dict[str, MemoryBacking] = {}
        self._locks = MemoryBacking()  # only its named locks are used

    def exists(self, name: str = PROPERTIES) -> bool:
        return bool(name in self.backings and self.backings[name].copy())

    def open(self, name: str = PROPERTIES, *, read_only: bool = False) -> MemoryStore:
        return MemoryStore(self.backings.setdefault(name, MemoryBacking()), read_only=read_only)

    def lock(self, name: str = RUN_LOCK) -> MemoryLock:
        return MemoryLock(self._locks, name)


def location_of(place: StateLocation | str | Path) -> StateLocation:
    """A location as given, or the state folder at a path."""
    return place if isinstance(place, StateLocation) else FileLocation(place)
