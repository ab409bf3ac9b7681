"""The state store: one contract (``PropertyStore``), an in-memory twin, the file backend and
the Redis backend.

Callers import from here; the submodules are the backends' parts. The Redis backend
(``storage.redis_store``) is imported only where it is chosen, so a file-backed process never loads
the Redis client.
"""

from monitor.storage.contract import RUN_LOCK, PropertyStore, RestoreReport, StoreLock
from monitor.storage.errors import (
    LockHeld,
    StateError,
    StateUnavailable,
    StateUnreadable,
    StateVersionError,
    StateWriteError,
)
from monitor.storage.file_store import FileStore
from monitor.storage.in_memory import MemoryBacking, MemoryLock, MemoryStore
from monitor.storage.location import PROPERTIES, FileLocation, MemoryLocation, StateLocation, location_of
from monitor.storage.lock import FlockLock
from monitor.storage.paths import STATE_FILE_NAME, StatePaths

__all__ = [
    "PROPERTIES",
    "RUN_LOCK",
    "STATE_FILE_NAME",
    "FileLocation",
    "FileStore",
    "FlockLock",
    "LockHeld",
    "MemoryBacking",
    "MemoryLocation",
    "MemoryLock",
    "MemoryStore",
    "PropertyStore",
    "RestoreReport",
    "StateError",
    "StateLocation",
    "StateUnavailable",
    "StatePaths",
    "StateUnreadable",
    "StateVersionError",
    "StateWriteError",
    "StoreLock",
    "location_of",
]
