"""The names of the state's files: worked out here and nowhere else.

In ``<state_dir>``, for a snapshot named ``properties.json``:

- ``properties.json``: the snapshot (a tinydb database, see ``format``);
- ``properties.json.bak``: the previous snapshot, the last good copy;
- ``properties.json.journal``: the changes made since the snapshot was written (see ``journal``);
- ``properties.json.journal.bak``: the journal the snapshot was compacted from: with the ``.bak`` it
  rebuilds the snapshot if the snapshot itself is ever unreadable;
- ``<name>.lock``: a lock file (``run.lock`` is the run lock);
- ``<file>.corrupt-<UTC stamp>`` and ``<file>.orphaned-<UTC stamp>``: files set aside for inspection;
- ``.<file>.<random>.tmp``: a file being written (``files.atomic_write_bytes``), renamed when whole.

The watchdog's store is ``watchdog-state.json`` with the same companions, a host's Redis generations
``redis-generations.json`` (``generations``), and the shipped folder holds its ``README.md``:
:func:`is_own_file` knows them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

STATE_FILE_NAME = "properties.json"
# A store's files and copies (<name>.json[.bak|.journal|.journal.bak][.corrupt-|.orphaned-<stamp>]),
# lock files, temporary files being written, and the folder's notes as shipped.
_OWN = re.compile(r"[\w.-]+\.json(\.journal)?(\.bak)?(\.(corrupt|orphaned)-\d{8}T\d{6}Z(-\d+)?)?"
                  r"|[\w-]+\.lock|\.[^/]+\.tmp|README\.md|\.gitignore")


@dataclass(frozen=True)
class StatePaths:
    snapshot: Path

    @classmethod
    def in_dir(cls, state_dir: str | Path) -> StatePaths:
        return cls(Path(state_dir) / STATE_FILE_NAME)

    @property
    def directory(self) -> Path:
        return self.snapshot.parent

    @property
    def backup(self) -> Path:
        return self._sibling(".bak")

    @property
    def journal(self) -> Path:
        return self._sibling(".journal")

    @property
    def journal_backup(self) -> Path:
        return self._sibling(".journal.bak")

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file that holds part of the state."""
        return (self.snapshot, self.backup, self.journal, self.journal_backup)

    def exist(self) -> bool:
        """True if any file of the state is there: something was saved (it may still be unreadable)."""
        return any(path.exists() for path in self.files)

    def lock(self, name: str) -> Path:
        return self.directory / f"{name}.lock"

    def _sibling(self, suffix: str) -> Path:
        return self.snapshot.with_name(self.snapshot.name + suffix)


def aside_name(path: Path, label: str, now: datetime, attempt: int = 0) -> Path:
    """``<path>.<label>-<UTC stamp>``, with ``-<attempt>`` from the second try on."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    suffix = f"-{attempt}" if attempt else ""
    return path.with_name(f"{path.name}.{label}-{stamp}{suffix}")


def is_own_file(name: str) -> bool:
    """Is ``name``, in a state folder, one of the monitor's own files (see the module docstring)?"""
    return _OWN.fullmatch(name) is not None
