"""Crash-safe file primitives for the state folder.

Contract: every file written here is replaced atomically (a crash or ``kill -9`` at any instant leaves the
old or the new content, never a mix), is created with mode 0600 before any byte is written, and the
directory entry change is fsynced so a power cut cannot roll the rename back after we reported success.
The folder is the owner's alone (0700) whenever it holds only the monitor's files.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from monitor.core import private_folders
from monitor.core.logs import log_event
from monitor.core.private_folders import PRIVATE_DIR_MODE
from monitor.storage.errors import StateError
from monitor.storage.paths import aside_name, is_own_file
from monitor.storage.writability import not_readable_text

PRIVATE_FILE_MODE = 0o600
_TEMP_SUFFIX = ".tmp"


def ensure_state_dir(path: Path) -> None:
    """Create the state folder ``path`` (with parents) 0700 if it is missing. One that others may
    enter is made 0700 when it holds only the monitor's files (the shipped ``state/``, 0755 as git
    left it), and logged once so; one that holds other files keeps its mode (see
    :func:`monitor.core.private_folders.ensure_private_dir`, and :func:`folder_not_private`)."""
    was = private_folders.ensure_private_dir(path, is_own_file)
    if was is not None:
        log_event("state_dir_made_private", path=str(path), mode_before=f"{was:04o}",
                  mode=f"{PRIVATE_DIR_MODE:04o}")


def folder_not_private(path: Path) -> str | None:
    """Why the state folder ``path`` is not the owner's alone, with the fix; None when it is."""
    return private_folders.shared_folder_problem(path, is_own_file, "the state folder")


def fsync_dir(path: Path) -> None:
    """Make renames and unlinks inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_prefix(target: Path) -> str:
    # A leading dot keeps temp files out of casual listings; the target's name makes them attributable.
    return f".{target.name}."


def atomic_write_bytes(
    target: Path, data: bytes | Iterable[bytes], *, before_replace: Callable[[], object] | None = None,
    mode: int = PRIVATE_FILE_MODE,
) -> os.stat_result:
    """Replace ``target`` with ``data`` (bytes, or pieces written one after the other) atomically;
    return the new file's stat (its identity). ``mode``: the owner's alone unless a file is meant to
    be read by others (the status page a web server serves).

    The temp file lives in the target's directory because ``os.replace`` is atomic only within one
    filesystem. ``before_replace`` runs once the new data is safely on disk, just before the rename.
    On any failure the temp file is removed and ``target`` is unchanged.
    """
    fd, temp_name = tempfile.mkstemp(
        prefix=_temp_prefix(target), suffix=_TEMP_SUFFIX, dir=target.parent
    )
    try:
        # mkstemp already creates 0600; set the mode explicitly so the guarantee does not hide in a default.
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as stream:
            for piece in (data,) if isinstance(data, bytes) else data:
                stream.write(piece)
            stream.flush()
            os.fsync(stream.fileno())
            identity = os.fstat(stream.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    fsync_dir(target.parent)
    return identity


def remove_stale_temp_files(target: Path) -> list[Path]:
    """Delete temp files a killed writer left next to ``target``; return what was removed.

    Only the single writer may call this (a concurrent writer's temp file would vanish under it).
    """
    removed = []
    for stale in target.parent.glob(f"{_temp_prefix(target)}*{_TEMP_SUFFIX}"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            removed.append(stale)
    return removed


def same_file(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    """True when two stats describe the same unchanged file (inode, size and modification time)."""
    if a is None or b is None:
        return False
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns) == (
        b.st_dev,
        b.st_ino,
        b.st_size,
        b.st_mtime_ns,
    )


def temp_name_for(target: Path, tag: str) -> Path:
    """A fixed temp name next to ``target`` that ``remove_stale_temp_files`` recognises."""
    return target.with_name(f"{_temp_prefix(target)}{tag}{_TEMP_SUFFIX}")


def read_file(path: Path) -> tuple[bytes, os.stat_result] | None:
    """The file's bytes and the stat of what was read; None if it does not exist.

    Any other failure (permissions, I/O) is a ``StateError`` that says how to fix it: a file we cannot
    open is not a damaged file, and treating it as one could replace good data.
    """
    try:
        with open(path, "rb") as stream:
            identity = os.fstat(stream.fileno())
            return stream.read(), identity
    except FileNotFoundError:
        return None
    except PermissionError as exc:  # who may read it, and how to fix it; nothing was changed
        raise StateError(not_readable_text(path, path.parent)) from exc
    except OSError as exc:
        raise StateError(
            f"cannot read the state file {path}: {exc.strerror}. Run sheet-monitor as the user that"
            " owns the state folder, or fix the file's owner and mode (0600); nothing was changed."
        ) from exc


def stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def move_aside(path: Path, label: str, now: datetime) -> Path:
    """Rename ``path`` to ``<path>.<label>-<UTC stamp>`` for inspection; return the new name.

    Two set-asides within one second must not overwrite the first evidence: a counter is added.
    """
    attempt = 0
    while (target := aside_name(path, label, now, attempt)).exists():
        attempt += 1
    os.rename(path, target)
    return target
