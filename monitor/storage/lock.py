"""The run lock: at most one process changes the state at a time.

A run takes it without waiting (if another run holds it, that run is doing the work: exit 0); admin
commands that change state wait a few seconds for it. Readers such as the watchdog never take it.

It is an ``flock`` on ``<state_dir>/run.lock`` through filelock: the kernel drops the lock when its holder
dies, even by ``kill -9``, so a crashed run never wedges the next one. The lock file stays in place on
release (deleting it would let two processes lock two different inodes).
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from monitor.storage.errors import StateError
from monitor.storage.files import PRIVATE_FILE_MODE, ensure_private_dir

LOCK_FILE_NAME = "run.lock"


class RunLockHeld(StateError):
    """Another process holds the run lock."""


class RunLock:
    """An exclusive, non-reentrant lock between processes (and between instances in one process)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # thread_local=False: the runner may release from another thread than the one that acquired.
        self._lock = FileLock(self.path, mode=PRIVATE_FILE_MODE, thread_local=False)

    @classmethod
    def in_dir(cls, state_dir: str | Path) -> RunLock:
        return cls(Path(state_dir) / LOCK_FILE_NAME)

    @property
    def held(self) -> bool:
        """True while this instance holds the lock."""
        return self._lock.is_locked

    def try_acquire(self) -> bool:
        """Take the lock if it is free, without waiting; False if another holder has it."""
        return self.acquire(timeout=0)

    def acquire(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the lock; False if it stayed taken.

        Acquiring again while this instance holds it is a no-op returning True.
        """
        if self.held:
            return True
        ensure_private_dir(self.path.parent)
        try:
            self._lock.acquire(timeout=timeout, poll_interval=0.05)
        except Timeout:
            return False
        return True

    def release(self) -> None:
        """Release the lock if this instance holds it (safe to call twice)."""
        if self.held:
            self._lock.release(force=True)

    def __enter__(self) -> RunLock:
        """Take the lock without waiting; raise ``RunLockHeld`` if another process has it."""
        if not self.try_acquire():
            raise RunLockHeld(
                f"another sheet-monitor process holds the run lock {self.path}; it is released"
                " automatically when that process ends"
            )
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()
