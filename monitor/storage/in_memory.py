"""The in-memory twin of the file store: the same contract, no files.

A ``MemoryBacking`` plays the part of a state folder: every ``MemoryStore`` opened on one backing sees
the same data and the same locks, as processes opening one state folder do. A test can so open the
run's store, an admin command's store and a read-only reader on one state.

As in the file store, an instance works on the copy it took when it was opened: a reader opened before
a change keeps seeing the state from before it; one opened after sees the change.
"""

from __future__ import annotations

import threading

from monitor.storage.contract import PropertyStore, StoreLock


class MemoryBacking:
    """The shared state behind ``MemoryStore`` instances: properties and named locks."""

    def __init__(self, properties: dict[str, str] | None = None) -> None:
        self._properties = dict(properties or {})
        # Held while a change is applied or a copy taken: nobody copies half of an update.
        self._mutex = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def copy(self) -> dict[str, str]:
        with self._mutex:
            return dict(self._properties)

    def apply(self, changed: dict[str, str], removed: list[str]) -> None:
        with self._mutex:
            for key in removed:
                self._properties.pop(key, None)
            self._properties.update(changed)

    def named_lock(self, name: str) -> threading.Lock:
        with self._mutex:
            return self._locks.setdefault(name, threading.Lock())


class MemoryStore(PropertyStore):
    """A ``PropertyStore`` on a ``MemoryBacking`` (a new, empty one if none is given)."""

    def __init__(self, backing: MemoryBacking | None = None, *, read_only: bool = False) -> None:
        self.backing = backing if backing is not None else MemoryBacking()
        super().__init__(self.backing.copy(), read_only=read_only)

    def _persist(self, changed: dict[str, str], removed: list[str]) -> None:
        self.backing.apply(changed, removed)

    def _lock(self, name: str) -> MemoryLock:
        return MemoryLock(self.backing, name)

    def _describe(self) -> str:
        return "the in-memory state"


class MemoryLock(StoreLock):
    """A named lock of a ``MemoryBacking``; it excludes every other instance, whatever its thread."""

    def __init__(self, backing: MemoryBacking, name: str) -> None:
        self.name = name
        # A plain Lock, not an RLock: it may be released from another thread than the one that took it.
        self._lock = backing.named_lock(name)
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    def acquire(self, timeout: float) -> bool:
        if self._held:
            return True
        if timeout > 0:
            self._held = self._lock.acquire(timeout=timeout)
        else:
            self._held = self._lock.acquire(blocking=False)
        return self._held

    def release(self) -> None:
        if self._held:
            self._held = False
            self._lock.release()

    def describe(self) -> str:
        return f"{self.name!r} (in memory)"
