"""Writing the snapshot: a whole-file atomic replacement that keeps the previous one as the backup.

tinydb's own ``JSONStorage`` truncates and rewrites the file in place, so a crash mid-write tears it.
Each write here:

1. writes the new content to a temp file (0600) and fsyncs it;
2. makes the current snapshot the backup, by hard link: no data is copied, so the backup costs a link
   and a rename instead of a second multi-megabyte write. The backup is therefore exactly one
   snapshot behind. The current file is rotated only if it is still the file we last loaded or wrote
   (same inode, size and mtime): a file changed behind our back is not known to be good and must not
   replace the backup;
3. renames the temp file over the snapshot and fsyncs the directory.

Without a previous snapshot (the first write) or on a filesystem without hard links, the new content
itself is also written as the backup, so a last good copy exists from the first write on.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from monitor.storage.files import (
    PRIVATE_FILE_MODE,
    atomic_write_bytes,
    same_file,
    stat_or_none,
    temp_name_for,
)


class SnapshotFile:
    def __init__(self, path: Path, backup_path: Path, identity: os.stat_result | None) -> None:
        """``identity``: the stat of the snapshot as it was loaded (None if it was not, e.g. fresh)."""
        self.path = path
        self.backup_path = backup_path
        self._identity = identity
        self._hard_links_work = True
        self.writes = 0

    def unchanged(self) -> bool:
        """True while the snapshot is the file last loaded or written here (or still absent)."""
        current = stat_or_none(self.path)
        return current is None if self._identity is None else same_file(current, self._identity)

    def write(self, payload: Callable[[], Iterable[bytes]]) -> int:
        """Replace the snapshot with the bytes ``payload()`` yields (called again if the backup must be
        written as a copy); return the new snapshot's size. On failure the snapshot and backup are
        unchanged, except that the backup may already have been rotated (it then holds the current
        snapshot)."""
        rotated = []
        # Rotate only once the new data is on disk: a failed write (disk full) changes no file.
        self._identity = atomic_write_bytes(
            self.path, payload(), before_replace=lambda: rotated.append(self._rotate_backup())
        )
        self.writes += 1
        if not rotated[0]:
            # The change is already durable; an error here (only the copy failed) still propagates.
            atomic_write_bytes(self.backup_path, payload())
        return self._identity.st_size

    def _rotate_backup(self) -> bool:
        """Make the current snapshot the backup; False if that is impossible or not known to be safe."""
        if not self._hard_links_work:
            return False
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            return False
        if not same_file(current, self._identity):
            return False
        link_name = temp_name_for(self.backup_path, f"{os.getpid()}.link")
        with contextlib.suppress(FileNotFoundError):
            link_name.unlink()
        try:
            os.link(self.path, link_name)
        except OSError:
            # Some filesystems (FAT, some network mounts) have no hard links: fall back to copies.
            self._hard_links_work = False
            return False
        # The snapshot is 0600 unless someone created it by hand; the backup must be private too.
        os.chmod(link_name, PRIVATE_FILE_MODE)
        os.replace(link_name, self.backup_path)
        # If the backup already was this very file (a crash between the two renames of an earlier
        # write), POSIX rename succeeds without removing the link name; do not leave it behind.
        with contextlib.suppress(FileNotFoundError):
            link_name.unlink()
        # No directory fsync here: the snapshot's write fsyncs the same directory right after.
        return True
