"""Crash-safe file primitives for the state folder, and the tinydb storage built on them.

Contract: every file written here is replaced atomically (a crash or ``kill -9`` at any instant leaves the
old or the new content, never a mix), is created with mode 0600 before any byte is written, and the
directory entry change is fsynced so a power cut cannot roll the rename back after we reported success.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
_TEMP_SUFFIX = ".tmp"


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (with parents) if it is missing; the directory we create gets mode 0700.

    An existing directory keeps its mode: the admin may have chosen it on purpose.
    """
    if path.is_dir():
        return
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    # mkdir's mode is filtered through the umask; say what we mean.
    os.chmod(path, PRIVATE_DIR_MODE)


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
    target: Path, data: bytes, *, before_replace: Callable[[], object] | None = None
) -> os.stat_result:
    """Replace ``target`` with ``data`` atomically; return the new file's stat (its identity).

    The temp file lives in the target's directory because ``os.replace`` is atomic only within one
    filesystem. ``before_replace`` runs once the new data is safely on disk, just before the rename.
    On any failure the temp file is removed and ``target`` is unchanged.
    """
    fd, temp_name = tempfile.mkstemp(
        prefix=_temp_prefix(target), suffix=_TEMP_SUFFIX, dir=target.parent
    )
    try:
        # mkstemp already creates 0600; set it explicitly so the guarantee does not hide in a default.
        os.fchmod(fd, PRIVATE_FILE_MODE)
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
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


def encode_state(data: Any) -> bytes:
    """The on-disk form: compact UTF-8 JSON (the state can be megabytes; indentation would double it)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class AtomicJSONStorage(Storage):
    """A tinydb storage that writes whole files atomically and keeps the last good copy.

    tinydb's own ``JSONStorage`` truncates and rewrites the file in place, so a crash mid-write tears it.
    This one serves reads from memory (one process writes, so memory is the truth) and on every write:

    1. writes the new content to a temp file (0600) and fsyncs it;
    2. makes the current main file the backup, by hard link: no data is copied, so the backup costs a
       link and a rename instead of a second multi-megabyte write. The backup is therefore exactly one
       write behind: if the main file is ever lost, restoring it loses at most the last checkpoint.
       The main file is rotated only if it is still the file we last loaded or wrote (same inode, size
       and mtime): a file changed behind our back is not known to be good and must not replace the backup.
    3. renames the temp file over the main file and fsyncs the directory.

    Without a previous main file (the first write) or on a filesystem without hard links, the new
    content itself is also written as the backup, so a last good copy exists from the first write on.
    """

    def __init__(
        self,
        path: Path,
        backup_path: Path,
        data: dict[str, Any],
        payload: bytes,
        identity: os.stat_result | None,
    ) -> None:
        """``data`` is the validated content of ``payload``; ``identity`` the stat of the main file it
        was read from (None if the main file does not hold it, e.g. a fresh store)."""
        self.path = path
        self.backup_path = backup_path
        self._data = data
        self._last_good_payload = payload
        self._identity = identity
        self._hard_links_work = True
        self.writes = 0

    def read(self) -> dict[str, Any]:
        # tinydb mutates what we return before calling write(); write() restores it if the write fails.
        return self._data

    def write(self, data: dict[str, Any]) -> None:
        payload = encode_state(data)
        rotated = []
        try:
            # Rotate only once the new data is on disk: a failed write (disk full) changes no file.
            self._identity = atomic_write_bytes(
                self.path, payload, before_replace=lambda: rotated.append(self._rotate_backup())
            )
        except BaseException:
            # The caller's in-place mutation must not survive a failed write: go back to what is on disk.
            self._data = json.loads(self._last_good_payload)
            raise
        self._data = data
        self._last_good_payload = payload
        self.writes += 1
        if not rotated[0]:
            # The change is already durable; an error here (only the copy failed) still propagates.
            atomic_write_bytes(self.backup_path, payload)

    def _rotate_backup(self) -> bool:
        """Make the current main file the backup; False if that is impossible or not known to be safe."""
        if not self._hard_links_work:
            return False
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            return False
        if not same_file(current, self._identity):
            return False
        link_name = self.backup_path.with_name(
            f"{_temp_prefix(self.backup_path)}{os.getpid()}.link{_TEMP_SUFFIX}"
        )
        with contextlib.suppress(FileNotFoundError):
            link_name.unlink()
        try:
            os.link(self.path, link_name)
        except OSError:
            # Some filesystems (FAT, some network mounts) have no hard links: fall back to copies.
            self._hard_links_work = False
            return False
        # The main file is 0600 unless someone created it by hand; the backup must be private too.
        os.chmod(link_name, PRIVATE_FILE_MODE)
        os.replace(link_name, self.backup_path)
        # If the backup already was this very file (a crash between the two renames of an earlier
        # write), POSIX rename succeeds without removing the link name; do not leave it behind.
        with contextlib.suppress(FileNotFoundError):
            link_name.unlink()
        # No directory fsync here: the main file's write fsyncs the same directory right after.
        return True

    def close(self) -> None:
        """Nothing is buffered: every write is on disk when ``write`` returns."""
