"""The storage contract every backend implements: Apps Script's PropertiesService, plus locks.

Keys and values are strings; values are JSON text by convention, but the store never interprets them
and knows nothing of what a key means. The contract, for every backend:

- reads (``get_property``, ``get_properties``, ``get_keys``) see this instance's own writes at once. An
  instance opened read-only sees a state that existed after some complete ``update`` (never half of
  one); what other instances write later is certain to be visible only to an instance opened later.
- ``update(values, deleted)`` is the one writing primitive and the other writing methods are spelled
  with it. It is atomic: when it returns, all of it is durable; if it raises (or the process dies),
  none of it is, except that an update in flight when the process dies may be found whole on reopen.
  Every key and value is checked before anything changes; an update that changes nothing writes
  nothing (``write_count`` counts the updates that did write).
- one process writes at a time: the holder of the ``"run"`` lock (``lock()``). Readers take no lock.
  A lock excludes other holders of the same name on the same state, in this process or another one.
- a read-only store refuses every write with ``StateError`` and changes nothing, ever; a closed store
  refuses writes too.
- ``restore_report`` is None, or says what of the saved state could not be used (and what was used
  instead), so the caller can record it as an event.
- ``memory_lost`` is None, or the generation of a state this host saw and the backend no longer holds
  (a Redis restarted without its data), so the caller can say the memory was lost rather than
  present an empty state as a fresh install. Only a store opened to write looks.

A store is not thread-safe: one thread uses it at a time (a lock may be released from another thread).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Self

from monitor.storage.errors import LockHeld, StateError

RUN_LOCK = "run"
_NO_VALUES: Mapping[str, str] = MappingProxyType({})
# A lock's name becomes part of a file name (``<state_dir>/<name>.lock``): no separators, no dot files.
_LOCK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class RestoreReport:
    """Part of the saved state could not be used; ``reason`` says what and what it cost (a store's
    ``restore_report``; ``monitor.storage.recovery`` makes it)."""

    path: Path  # the snapshot
    backup_path: Path
    reason: str
    moved_aside_to: Path | None  # where the bad snapshot now is; None if missing or opened read-only
    journals_moved_aside: tuple[Path, ...] = ()
    from_backup: bool = False  # the snapshot was unreadable: what was loaded is the backup's


class StoreLock(ABC):
    """An exclusive, non-reentrant lock between processes and between instances in one process.

    Taking it again while this instance holds it is a no-op that answers True. Releasing a lock this
    instance does not hold does nothing, so ``release`` is safe to call twice.
    """

    @property
    @abstractmethod
    def held(self) -> bool:
        """True while this instance holds the lock."""

    @abstractmethod
    def acquire(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds (0: not at all) for the lock; False if it stayed taken."""

    @abstractmethod
    def release(self) -> None:
        """Release the lock if this instance holds it."""

    @abstractmethod
    def describe(self) -> str:
        """Where the lock lives, for messages (a lock file's path)."""

    def try_acquire(self) -> bool:
        """Take the lock if it is free, without waiting."""
        return self.acquire(timeout=0)

    def __enter__(self) -> Self:
        """Take the lock without waiting; raise ``LockHeld`` if another holder has it."""
        if not self.try_acquire():
            raise LockHeld(
                f"another sheet-monitor process holds the lock {self.describe()}; it is released"
                " automatically when that process ends"
            )
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


class PropertyStore(ABC):
    """The contract (module docstring); a backend supplies persistence (``_persist``) and locks."""

    def __init__(
        self,
        properties: dict[str, str],
        *,
        read_only: bool,
        restore_report: RestoreReport | None = None,
    ) -> None:
        """``properties`` is the opened state; the store owns that dict from now on."""
        self._properties = properties
        self.read_only = read_only
        self.restore_report = restore_report
        self.memory_lost: str | None = None
        self.write_count = 0
        self._closed = False

    # -- reads ---------------------------------------------------------------------------------

    def get_property(self, key: str) -> str | None:
        return self._properties.get(key)

    def get_properties(self) -> dict[str, str]:
        """A copy of every property; changing it changes nothing in the store."""
        return dict(self._properties)

    def get_keys(self, prefix: str = "") -> list[str]:
        """The keys that start with ``prefix``, sorted (so every backend answers in the same order)."""
        return sorted(key for key in self._properties if key.startswith(prefix))

    @property
    def restored_from_backup(self) -> bool:
        """True if opening could not use all of the saved state; ``restore_report`` says why."""
        return self.restore_report is not None

    # -- writes --------------------------------------------------------------------------------

    def update(self, values: Mapping[str, str] = _NO_VALUES, deleted: Iterable[str] = ()) -> None:
        """Set ``values`` and delete ``deleted`` in one atomic change (see the module docstring).

        Deleting a missing key is not an error. A key may not be both set and deleted. Raises
        ``ValueError``/``TypeError`` for a bad key or value, ``StateError`` on a read-only or closed
        store, and whatever the backend's write raised (the state and this instance then unchanged).
        """
        self._check_writable()
        values, deleted = check_change(values, deleted)
        changed = {key: value for key, value in values.items() if self._properties.get(key) != value}
        removed = [key for key in deleted if key in self._properties]
        if not changed and not removed:
            return
        self._persist(changed, removed)
        # Only once the change is durable: a failed write leaves this instance at the old state.
        for key in removed:
            del self._properties[key]
        self._properties.update(changed)
        self.write_count += 1
        self._persisted()

    def set_property(self, key: str, value: str) -> None:
        self.update({key: value})

    def delete_property(self, key: str) -> None:
        """Remove ``key``; removing a missing key is not an error (as in Apps Script)."""
        self.update(deleted=[key])

    def set_properties(self, values: Mapping[str, str], delete_all_others: bool = False) -> None:
        """Set several properties in one update; with ``delete_all_others`` they become the only ones."""
        others = [key for key in self._properties if key not in values] if delete_all_others else []
        self.update(values, others)

    def delete_all_properties(self) -> None:
        self.update(deleted=list(self._properties))

    # -- locks and life cycle ----------------------------------------------------------------------

    def lock(self, name: str = RUN_LOCK) -> StoreLock:
        """The lock ``name`` on this state (not taken yet). Any instance, read-only too, may make one."""
        if not isinstance(name, str) or not _LOCK_NAME.fullmatch(name):
            raise ValueError(f"a lock name must be letters, digits, '-' or '_', got {name!r}")
        return self._lock(name)

    def close(self) -> None:
        """Finish with the store (a backend may tidy its files here); safe to call twice."""
        if not self._closed:
            self._closed = True
            self._close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- what a backend supplies -------------------------------------------------------------------

    @abstractmethod
    def _persist(self, changed: dict[str, str], removed: list[str]) -> None:
        """Make this effective change durable, atomically, or raise having changed nothing.

        ``changed`` holds only keys whose value differs, ``removed`` only keys that exist; at least
        one is non-empty. The in-memory properties still hold the old state during the call.
        """

    def _persisted(self) -> None:  # noqa: B027 (an optional hook: most backends need nothing here)
        """Called after a change was persisted and applied in memory (a backend may tidy up)."""

    @abstractmethod
    def _lock(self, name: str) -> StoreLock: ...

    def _close(self) -> None:  # noqa: B027 (an optional hook, as ``_persisted``)
        """Release what the backend holds; the base class guarantees it runs once."""

    def _describe(self) -> str:
        """What this store is, for messages."""
        return "the state"

    def _check_writable(self) -> None:
        if self.read_only:
            raise StateError(f"{self._describe()} was opened read-only; it cannot be changed")
        if self._closed:
            raise StateError(f"{self._describe()} was closed; open it again to change it")


def check_change(
    values: Mapping[str, str], deleted: Iterable[str]
) -> tuple[Mapping[str, str], list[str]]:
    """Validate an update's keys and values; return the deleted keys without repeats.

    The same rules apply to what a journal replays, so a file cannot smuggle in what ``update``
    would refuse.
    """
    if isinstance(deleted, str | bytes):
        # A string is an iterable of one-letter keys: almost certainly a mistake.
        raise TypeError(f"deleted must be a collection of keys, not the single string {deleted!r}")
    for key, value in values.items():
        check_key(key)
        if not isinstance(value, str):
            raise TypeError(
                f"state property {key!r} must be a string (JSON text), got {type(value).__name__}"
            )
    removed = list(dict.fromkeys(deleted))
    for key in removed:
        check_key(key)
        if key in values:
            raise ValueError(f"state property {key!r} is both set and deleted in one update")
    return values, removed


def check_key(key: object) -> None:
    if not isinstance(key, str) or not key:
        raise ValueError(f"a state property key must be a non-empty string, got {key!r}")
