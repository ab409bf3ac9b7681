"""The state store's exceptions: one root, each message says what is wrong, where and how to fix it."""

from __future__ import annotations


class StateError(Exception):
    """Root of every error raised by the state store (also: a write to a read-only or closed store)."""


class StateUnreadable(StateError):
    """Neither the state nor its last good copy can be used; every file was left untouched.

    The CLI turns this into exit 1; the message is written for the admin who has to decide what to do.
    """


class StateVersionError(StateError):
    """The state was written by a newer sheet-monitor, or no migration path exists to this one."""


class LockHeld(StateError):
    """Another holder has the lock (raised by ``with lock:``; ``acquire`` answers False instead)."""


class StateWriteError(StateError, OSError):
    """The state folder cannot be written: no permission, a read-only filesystem, a full disk.

    Raised instead of the ``OSError`` by every write of the file backend; the state on disk is as the
    last write that succeeded left it. An ``OSError`` too, with the original ``errno``, so callers
    that handled the bare error keep working. The message says what, where and how to fix it
    (``monitor.storage.writability``).
    """

    def __init__(self, message: str, errno: int | None = None, path: str | None = None) -> None:
        OSError.__init__(self, message)
        self.errno = errno
        self.path = path

    def __str__(self) -> str:
        return str(self.args[0])


class StateUnavailable(StateError):
    """The state's server (Redis) cannot be reached or refused us; nothing was read or changed.

    The CLI turns this into exit 1; the message names the server (never its password) and the fix.
    """
