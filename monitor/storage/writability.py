"""Why the state folder cannot be written, or read, in words a person can act on.

Two uses: a write of the file backend that failed (:func:`writing` turns the ``OSError`` into a
``StateWriteError`` whose message says what, where and how to fix it; :func:`reading` does the same for
a look or a read this user is not allowed), and a look before anything fails (:func:`folder_problem`,
:func:`read_problem`, for ``check-config`` and the watchdog, which must say why the runs stopped when
the runs themselves cannot tell anyone: their outbox is in that folder).

The failures met in practice, each with its own fix: the folder or a file in it belongs to another
user (a run started once with ``sudo``; a command typed as another user than cron's, which may not
even read a folder of mode 0700), the filesystem went read-only (the kernel remounts it so after I/O
errors), the disk is full.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from monitor.storage.errors import StateError, StateWriteError

_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})
_NOT_PERMITTED = frozenset({errno.EACCES, errno.EPERM})
# A save needs room for a new snapshot beside the old one (a compaction) and its journal records.
MIN_FREE_BYTES = 1 << 20


def user_name(uid: int | None = None) -> str:
    uid = os.geteuid() if uid is None else uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _owner(path: Path) -> str | None:
    try:
        return user_name(path.stat().st_uid)
    except OSError:
        return None


def _mode(path: Path) -> str | None:
    try:
        return f"{stat.S_IMODE(path.stat().st_mode):04o}"
    except OSError:
        return None


def not_readable_text(path: Path, folder: Path) -> str:
    """``path`` (the state folder, a file in it, or a folder above it) shuts this user out."""
    return shut_out_text(path, folder, me=user_name(), owner=_owner(path), mode=_mode(path))


def shut_out_text(path: Path, folder: Path, *, me: str, owner: str | None, mode: str | None) -> str:
    """``not_readable_text`` for user ``me`` and ``path``'s ``owner`` and ``mode`` ("0700"), when known."""
    what = "it" if path == folder else str(path)
    whose = f"{what} belongs to {owner}" if owner else f"{what} is not open to {me}"
    if mode:
        whose += f", mode {mode}"
    inside = path == folder or folder in path.parents
    run_as = (f"run sheet-monitor as {owner}, its owner (sudo -u {owner} sheet-monitor ...)" if owner
              else "run sheet-monitor as the user the runs' cron lines belong to")
    if owner == me:
        fix = f"chmod u+rwX -R {folder}" if inside else f"chmod u+x {path}"
    elif inside:  # the state's own: it may be handed over, if that user is the one to run the monitor
        fix = (f"{run_as}; or, if {me} is to run the monitor, sudo chown -R {me} {folder} && "
               f"chmod u+rwX -R {folder}")
    else:  # a folder above the state's (a home folder): not the monitor's to change
        fix = run_as
    return f"the state folder {folder} cannot be read by user {me}: {whose}. Fix: {fix}"


def read_problem(folder: Path, files: tuple[Path, ...] = ()) -> str | None:
    """What stops this user from reading the state in ``folder`` (with its ``files``), in words with
    the fix; None when nothing does (a folder not made yet included). Only looks: a folder on the way
    this user may not enter, the folder itself, a file of the state it may not read."""
    folder = Path(os.path.abspath(folder))
    for place in (*reversed(folder.parents), folder):  # from the root down: the first that shuts out
        if not place.exists():
            return None
        if not os.access(place, os.X_OK):
            return not_readable_text(place, folder)
    if not os.access(folder, os.R_OK):
        return not_readable_text(folder, folder)
    for path in files:
        if path.exists() and not os.access(path, os.R_OK):
            return not_readable_text(path, folder)
    return None


def not_permitted_text(path: Path, folder: Path) -> str:
    me, owner = user_name(), _owner(path)
    whose = f" (it belongs to {owner})" if owner and owner != me else ""
    return (f"the state folder {folder} is not writable by user {me}: {path} cannot be written{whose}. "
            f"Fix: sudo chown -R {me} {folder} && chmod u+rwX -R {folder}, or run sheet-monitor as the "
            f"user that owns it")


def read_only_text(folder: Path) -> str:
    return (f"the state folder {folder} is on a read-only filesystem. Fix: find out why it went "
            f"read-only (dmesg; the kernel does so after disk errors), remount it read-write "
            f"(mount -o remount,rw), or set [run] state_dir to a writable folder")


def no_space_text(folder: Path, free: int | None) -> str:
    left = f" ({free / 2**20:.1f} MiB free)" if free is not None else ""
    return (f"no space left on the device holding the state folder {folder}{left}. The state is intact "
            f"as of its last save. Fix: free space on that disk (df -h {folder}; logs, old "
            f".corrupt-/.orphaned- files)")


def write_failure_text(exc: OSError, folder: Path) -> str:
    """What a failed write of the state means, where, and how to fix it."""
    return f"cannot save the state ({exc.strerror or type(exc).__name__}): {_failure_text(exc, folder)}"


def _failure_text(exc: OSError, folder: Path) -> str:
    path = Path(exc.filename) if isinstance(exc.filename, str) else folder
    if exc.errno in _NOT_PERMITTED:
        # A folder this user may not even read says so: its files' owner cannot be seen from here.
        text = read_problem(folder) or not_permitted_text(path, folder)
    elif exc.errno == errno.EROFS:
        text = read_only_text(folder)
    elif exc.errno in _NO_SPACE:
        text = no_space_text(folder, _free_bytes(folder))
    else:
        text = (f"cannot write the state in {folder}: {path}: {exc.strerror or exc}. The state is intact "
                f"as of its last save. Fix: check the disk (dmesg) and the folder")
    return text


@contextmanager
def writing(folder: Path) -> Iterator[None]:
    """Turn an ``OSError`` raised by a write inside the block into a ``StateWriteError``."""
    try:
        yield
    except StateError:
        raise
    except OSError as exc:
        raise StateWriteError(write_failure_text(exc, folder), exc.errno,
                              exc.filename if isinstance(exc.filename, str) else None) from exc


@contextmanager
def reading(folder: Path) -> Iterator[None]:
    """Turn a ``PermissionError`` raised by a look or a read inside the block into a ``StateError``
    that says who may not read what, and the fix."""
    try:
        yield
    except PermissionError as exc:
        path = Path(exc.filename) if isinstance(exc.filename, str) else folder
        raise StateError(read_problem(folder) or not_readable_text(path, folder)) from exc


def folder_problem(
    folder: Path,
    files: tuple[Path, ...] = (),
    *,
    needed_bytes: int = MIN_FREE_BYTES,
    free_bytes: Callable[[Path], int | None] | None = None,
) -> str | None:
    """What stops this user from saving a state in ``folder`` (whose files the writer appends to or
    replaces are ``files``), in words with the fix; None when nothing does. Writes and removes one
    small probe file: permissions alone do not show a read-only filesystem or a full disk. A folder
    this user may not read is told as such first (a save reads the state before it writes)."""
    unreadable = read_problem(folder, files)
    if unreadable is not None:
        return unreadable
    existing = folder
    while not existing.is_dir():  # the store creates a missing folder: its parent must allow that
        if existing.parent == existing:
            break
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        if _read_only(existing):
            return read_only_text(folder)
        return not_permitted_text(existing, folder)
    for path in files:
        if path.exists() and not os.access(path, os.W_OK):
            return read_only_text(folder) if _read_only(path) else not_permitted_text(path, folder)
    free = (free_bytes or _free_bytes)(existing)
    if free is not None and free < needed_bytes:
        return no_space_text(folder, free)
    try:
        _probe(existing)
    except OSError as exc:
        return _failure_text(exc, folder)
    return None


def _probe(folder: Path) -> None:
    fd, name = tempfile.mkstemp(prefix=".write-probe.", dir=folder)
    try:
        os.write(fd, b"probe")
        os.fsync(fd)
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None
