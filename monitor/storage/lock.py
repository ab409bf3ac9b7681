"""File locks: at most one process changes the state at a time.

A run takes the run lock without waiting (if another run holds it, that run is doing the work: exit
0); admin commands that change state wait a few seconds for it. Readers such as the watchdog never
take it. Other lock names serve other single-holder jobs (the watchdog's own ``watchdog.lock``).

It is an ``flock`` on ``<state_dir>/<name>.lock`` through filelock: the kernel drops the lock when its
holder dies, even by ``kill -9``, so a crashed run never wedges the next one. The lock file stays in
place on release (deleting it would let two processes lock two different inodes).
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from monitor.storage.contract import RUN_LOCK, StoreLock
from monitor.storage.files import PRIVATE_FILE_MODE, ensure_state_dir
from monitor.storage.paths import StatePaths
from monitor.storage.writability import writing


class FlockLock(StoreLock):
    """The file backend's lock; see the module docstring."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # thread_local=False: the runner may release from another thread than the one that acquired.
        self._lock = FileLock(self.path, mode=PRIVATE_FILE_MODE, thread_local=False)

    @classmethod
    def in_dir(cls, state_dir: str | Path, name: str = RUN_LOCK) -> FlockLock:
        """The lock ``name`` of the state in ``state_dir`` (the run lock is ``run.lock``)."""
        return cls(StatePaths.in_dir(state_dir).lock(name))

    @property
    def held(self) -> bool:
        return self._lock.is_locked

    def acquire(self, timeout: float) -> bool:
        if self.held:
            return True
        # A lock file that cannot be created or opened (another owner, a read-only filesystem) says so.
        with writing(self.path.parent):
            ensure_state_dir(self.path.parent)
            try:
                self._lock.acquire(timeout=timeout, poll_interval=0.05)
            except Timeout:
                return False
        return True

    def release(self) -> None:
        if self.held:
            self._lock.release(force=True)

    def describe(self) -> str:
        return str(self.path)
