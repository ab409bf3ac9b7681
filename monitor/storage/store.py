"""The state file: a PropertiesService-like key-value store over tinydb.

Everything that must outlive a run lives here, as string values (JSON text by convention, as in Apps
Script); the store does not know what any key means. Contract:

- one process writes (the holder of the run lock, see ``monitor.store_lock``); any number of processes
  may read without the lock (``read_only=True``), because the file is only ever replaced atomically;
- every change is on disk (fsynced) when the call returns; ``transaction()`` groups changes into one write;
- reads come from memory; a write costs one serialization and one file replacement, never more;
- a ``kill -9`` at any instant leaves the old or the new state; a last good copy (``<name>.bak``) is used,
  and reported through ``restore_report``, if the main file is ever unreadable;
- files are 0600; a state folder the store creates is 0700.

The store is not thread-safe: one thread owns it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from tinydb import TinyDB

from monitor.core.clock import SystemClock
from monitor.storage.errors import (
    PropertyNotJSON,
    StateError,
    StateUnreadable,
    StateVersionError,
)
from monitor.storage.files import AtomicJSONStorage, ensure_private_dir, remove_stale_temp_files
from monitor.storage.format import DOC_ID, MIGRATIONS, PROPERTIES_TABLE, SCHEMA_VERSION, Migration
from monitor.storage.recovery import RestoreReport, open_state

__all__ = [
    "STATE_FILE_NAME",
    "PropertyNotJSON",
    "PropertyStore",
    "RestoreReport",
    "StateError",
    "StateUnreadable",
    "StateVersionError",
]

STATE_FILE_NAME = "properties.json"
_MISSING = object()


class _Clock(Protocol):
    def now(self) -> datetime: ...


class PropertyStore:
    """Apps Script's PropertiesService, persisted in one JSON file.

    ``PropertyStore(path)`` opens (or, for a missing file, starts) the state at ``path``. Opening may
    raise ``StateUnreadable`` (main file and backup both unusable, both untouched), ``StateVersionError``
    (written by a newer version) or ``StateError`` (cannot open the file at all).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        read_only: bool = False,
        clock: _Clock | None = None,
        schema_version: int = SCHEMA_VERSION,
        migrations: Mapping[int, Migration] = MIGRATIONS,
    ) -> None:
        """``read_only``: never write, restore or clean up (for the watchdog and status commands).

        A writable store must only be opened by the holder of the run lock. ``clock`` (default: the
        system clock) only names the ``.corrupt-<timestamp>`` file; ``schema_version`` and
        ``migrations`` exist so tests can exercise future versions.
        """
        self.path = Path(path)
        self.backup_path = self.path.with_name(self.path.name + ".bak")
        self.read_only = read_only
        if not read_only:
            ensure_private_dir(self.path.parent)
            # Only the writer may clean up: a reader could delete a temp file a live writer is filling.
            remove_stale_temp_files(self.path)
            remove_stale_temp_files(self.backup_path)
        opened = open_state(
            self.path,
            self.backup_path,
            writable=not read_only,
            now=(clock or SystemClock()).now(),
            schema_version=schema_version,
            migrations=migrations,
        )
        self.schema_version = opened.parsed.version
        self.restore_report: RestoreReport | None = opened.restored
        self._storage = AtomicJSONStorage(
            self.path, self.backup_path, opened.parsed.data, opened.payload, opened.identity
        )
        self._db = TinyDB(storage=lambda: self._storage)
        self._table = self._db.table(PROPERTIES_TABLE, cache_size=0)
        # While a transaction is open, all reads and changes go to this private copy.
        self._working: dict[str, str] | None = None
        if opened.needs_write and not read_only:
            self._storage.write(opened.parsed.data)

    @classmethod
    def in_dir(cls, state_dir: str | Path, **kwargs: Any) -> PropertyStore:
        """The store at ``<state_dir>/properties.json``."""
        return cls(Path(state_dir) / STATE_FILE_NAME, **kwargs)

    @property
    def restored_from_backup(self) -> bool:
        """True if this open used the last good copy; ``restore_report`` says why (make it an event)."""
        return self.restore_report is not None

    @property
    def write_count(self) -> int:
        """State writes made by this instance (a migration on open counts; a restore does not)."""
        return self._storage.writes

    # -- reads ---------------------------------------------------------------------------------

    def get_property(self, key: str) -> str | None:
        return self._current().get(key)

    def get_properties(self) -> dict[str, str]:
        """A copy of every property; changing it changes nothing in the store."""
        return dict(self._current())

    def get_keys(self) -> list[str]:
        return list(self._current())

    def get_json(self, key: str, default: Any = None) -> Any:
        """The property decoded from JSON, or ``default`` if it is not set."""
        value = self._current().get(key, _MISSING)
        if value is _MISSING:
            return default
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise PropertyNotJSON(
                f"state property {key!r} is not JSON ({exc.msg} at position {exc.pos});"
                f" it starts with {value[:40]!r}"
            ) from None

    # -- writes --------------------------------------------------------------------------------

    def set_property(self, key: str, value: str) -> None:
        _check_key(key)
        _check_value(key, value)
        with self.transaction():
            self._working[key] = value

    def set_json(self, key: str, obj: Any) -> None:
        """Store ``obj`` as compact JSON text; NaN and infinity are refused (they are not JSON)."""
        self.set_property(key, json.dumps(obj, ensure_ascii=False, separators=(",", ":"),
                                          allow_nan=False))

    def delete_property(self, key: str) -> None:
        """Remove ``key``; removing a missing key is not an error (as in Apps Script)."""
        with self.transaction():
            self._working.pop(key, None)

    def set_properties(self, values: Mapping[str, str], delete_all_others: bool = False) -> None:
        """Set several properties in one write; with ``delete_all_others`` they become the only ones.

        Every key and value is checked before anything changes.
        """
        for key, value in values.items():
            _check_key(key)
            _check_value(key, value)
        with self.transaction():
            if delete_all_others:
                self._working.clear()
            self._working.update(values)

    def delete_all_properties(self) -> None:
        self.set_properties({}, delete_all_others=True)

    @contextmanager
    def transaction(self) -> Iterator[PropertyStore]:
        """Group changes into one atomic write at the end of the outermost block.

        Reads inside the block see its changes. An exception leaving a block undoes that block's changes
        (an inner block behaves like a savepoint) and, from the outermost block, writes nothing. Nothing
        is written if the properties end up unchanged.
        """
        if self.read_only:
            raise StateError(f"the state {self.path} was opened read-only; it cannot be changed")
        outermost = self._working is None
        committed = self._committed()
        savepoint = dict(committed if outermost else self._working)
        self._working = dict(savepoint)
        try:
            yield self
        except BaseException:
            self._working = None if outermost else savepoint
            raise
        if outermost:
            working, self._working = self._working, None
            if working != committed:
                self._commit(working)

    # -- internals -----------------------------------------------------------------------------

    def _committed(self) -> dict[str, str]:
        # Straight from the storage's memory: tinydb's Table.get() would copy all properties per read.
        return self._storage.read()[PROPERTIES_TABLE][str(DOC_ID)]

    def _current(self) -> dict[str, str]:
        return self._committed() if self._working is None else self._working

    def _commit(self, properties: dict[str, str]) -> None:
        def replace_all(document: dict[str, str]) -> None:
            document.clear()
            document.update(properties)

        # One tinydb update is one storage write: the whole file, atomically.
        updated = self._table.update(replace_all, doc_ids=[DOC_ID])
        if updated != [DOC_ID]:  # the layout is validated on open, so this is a bug, not bad data
            raise StateError(f"the state {self.path} lost its properties document")

    def close(self) -> None:
        """Release tinydb; every change is already on disk."""
        self._db.close()

    def __enter__(self) -> PropertyStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _check_key(key: object) -> None:
    if not isinstance(key, str) or not key:
        raise ValueError(f"a state property key must be a non-empty string, got {key!r}")


def _check_value(key: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(
            f"state property {key!r} must be a string (use set_json for objects),"
            f" got {type(value).__name__}"
        )
