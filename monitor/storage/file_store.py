"""The file backend: a snapshot in tinydb's layout plus an append-only journal of the changes since.

Files in the state folder (names in ``paths``): the snapshot ``properties.json``, its backup
``.bak``, the journal ``.journal`` and the journal the snapshot was compacted from, ``.journal.bak``.

- ``update()`` appends one record to the journal and fsyncs it: it costs what changed, not the size of
  the state. A crash mid-append leaves a torn last line that is ignored on reopen.
- Opening replays the journal onto the snapshot (``recovery``). A writer that replayed anything, or
  migrated the schema, compacts at once, so a killed run's journal does not grow across runs; it
  also compacts on ``close()``, and mid-run once the journal outgrows the snapshot (``journal_limit``).
- Compaction writes the next snapshot atomically (temp file, fsync, rename, directory fsync; the
  previous snapshot kept as ``.bak`` by hard link), keeps the journal it compacted as
  ``.journal.bak`` and starts an empty journal. ``.bak`` plus ``.journal.bak`` rebuild the snapshot,
  and the current journal then applies on top: a snapshot that becomes unreadable is restored
  without losing anything. Only when a compaction wrote more than "snapshot + journal" (a schema
  migration, a restore, or a change whose append had failed) is ``.journal.bak`` dropped, and a
  restore from ``.bak`` then returns to the previous compaction and loses the updates since (reported
  in ``restore_report``).
- ``kill -9`` at any instant leaves a state that opens to the one after the last ``update()`` that
  returned, or after the one in flight; readers without any lock see a state that existed after
  some complete update, even during a compaction (see ``recovery`` for why).
- Every file is 0600; the folder is 0700 (made so when it holds only the monitor's files; one that
  holds others' keeps its mode, and a writer logs ``state_dir_not_private``). Only a writer cleans
  up: stale temp files, unusable files set aside. A read-only store never writes, restores, cleans up
  or compacts.

One process writes (the holder of the run lock); one thread uses a store at a time.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from monitor.core.clock import SystemClock
from monitor.core.logs import log_event
from monitor.storage.contract import PropertyStore
from monitor.storage.errors import StateError
from monitor.storage.files import ensure_state_dir, folder_not_private, remove_stale_temp_files
from monitor.storage.format import MIGRATIONS, SCHEMA_VERSION, Migration, snapshot_chunks
from monitor.storage.journal import JournalWriter, record
from monitor.storage.lock import FlockLock
from monitor.storage.paths import StatePaths
from monitor.storage.recovery import open_state
from monitor.storage.snapshot import SnapshotFile
from monitor.storage.writability import writing

# Mid-run compaction once the journal is larger than the snapshot (and at least this): replaying it
# then costs readers no more than reading the snapshot again, disk use stays within ~4 x the state,
# and a compaction rewrites the state once per state's worth of journal, so its cost per update
# stays proportional to the update. The floor keeps a small state from compacting every few updates.
JOURNAL_FLOOR_BYTES = 1 << 20


class _Clock(Protocol):
    def now(self) -> datetime: ...


class FileStore(PropertyStore):
    """The state at ``path`` (``<state_dir>/properties.json``); see the module docstring.

    Opening may raise ``StateUnreadable`` (snapshot and backup both unusable, every file untouched),
    ``StateVersionError`` (written by a newer version) or ``StateError`` (a file cannot be read).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        read_only: bool = False,
        clock: _Clock | None = None,
        schema_version: int = SCHEMA_VERSION,
        migrations: Mapping[int, Migration] = MIGRATIONS,
        journal_limit: int | None = None,
    ) -> None:
        """A writable store must only be opened by the holder of the run lock.

        ``clock`` (default: the system clock) only names set-aside files; ``schema_version`` and
        ``migrations`` exist so tests can exercise future versions; ``journal_limit`` (bytes) replaces
        the mid-run compaction threshold (default: the snapshot's size, at least 1 MiB).
        """
        self.paths = StatePaths(Path(path))
        self.path = self.paths.snapshot
        self.backup_path = self.paths.backup
        with writing(self.paths.directory) if not read_only else contextlib.nullcontext():
            if not read_only:
                ensure_state_dir(self.paths.directory)
                if problem := folder_not_private(self.paths.directory):
                    log_event("state_dir_not_private", logging.WARNING, path=str(self.paths.directory),
                              problem=problem)
                # Only the writer may clean up: a reader could delete a temp file a live writer is filling.
                for target in self.paths.files:
                    remove_stale_temp_files(target)
            opened = open_state(
                self.paths,
                writable=not read_only,
                now=(clock or SystemClock()).now(),
                schema_version=schema_version,
                migrations=migrations,
            )
        super().__init__(opened.properties, read_only=read_only, restore_report=opened.report)
        self.schema_version = schema_version
        self.generation = opened.generation  # of the snapshot on disk
        self.compactions = 0
        self._has_snapshot = opened.has_snapshot
        self._snapshot = SnapshotFile(self.path, self.backup_path, opened.identity)
        self._snapshot_size = opened.snapshot_size
        self._journal_limit = journal_limit
        # Records in the journal file that the snapshot does not hold yet (replayed or appended).
        self._journal_records = 0
        self._journal_bridges = opened.journal_bridges
        self._journal: JournalWriter | None = None
        if read_only:
            return
        with writing(self.paths.directory):
            if opened.reusable_journal_size is not None:
                self._journal = JournalWriter(self.paths.journal, opened.reusable_journal_size)
            if opened.needs_compaction:
                self._compact(self._properties, opened.next_generation)

    @classmethod
    def in_dir(cls, state_dir: str | Path, **kwargs: Any) -> FileStore:
        """The store at ``<state_dir>/properties.json``."""
        return cls(StatePaths.in_dir(state_dir).snapshot, **kwargs)

    @property
    def journal_size(self) -> int:
        """Bytes in the journal this writer appends to (0 before its first append)."""
        return self._journal.size if self._journal else 0

    # -- PropertyStore ----------------------------------------------------------------------------

    def _persist(self, changed: dict[str, str], removed: list[str]) -> None:
        # Every failure to write says why in words (permissions, read-only filesystem, full disk).
        with writing(self.paths.directory):
            self._write_change(changed, removed)

    def _write_change(self, changed: dict[str, str], removed: list[str]) -> None:
        self._check_sole_writer()
        if self._journal is None:
            if self._journal_records or not self._has_snapshot:
                # The journal file holds changes this writer can no longer append after (a failed
                # append), or there is no snapshot for a journal to apply to: write a whole snapshot.
                properties = dict(self._properties)
                for key in removed:
                    del properties[key]
                properties.update(changed)
                self._compact(properties, self.generation + 1, bridges=False)
                return
            self._journal = JournalWriter.create(self.paths.journal, self.generation)
            self._journal_bridges = True
        try:
            self._journal.append(record(changed, removed))
        except BaseException:
            # Whatever the file now ends with, nothing may be appended after it: the next update
            # or ``close`` writes a snapshot instead, and that starts a new journal.
            self._drop_journal()
            raise
        self._journal_records += 1

    def _persisted(self) -> None:
        if self._journal is not None and self._journal.size > self._compaction_threshold():
            # The change is durable in the journal; if this compaction fails, the error propagates
            # but nothing is lost, and the next update compacts again.
            with writing(self.paths.directory):
                self._compact(self._properties, self.generation + 1)

    def _lock(self, name: str) -> FlockLock:
        return FlockLock(self.paths.lock(name))

    def _close(self) -> None:
        """Compact if the journal holds anything (a writer), then release the journal's file."""
        try:
            if not self.read_only and self._journal_records:
                with writing(self.paths.directory):
                    self._compact(self._properties, self.generation + 1)
        finally:
            self._drop_journal()

    def _describe(self) -> str:
        return f"the state {self.path}"

    # -- compaction -------------------------------------------------------------------------------

    def _compaction_threshold(self) -> int:
        if self._journal_limit is not None:
            return self._journal_limit
        return max(JOURNAL_FLOOR_BYTES, self._snapshot_size)

    def _compact(self, properties: dict[str, str], generation: int, *, bridges: bool | None = None) -> None:
        """Write ``properties`` as snapshot ``generation`` and start an empty journal for it.

        ``bridges`` (default: whether the journal file holds exactly the changes from the current
        snapshot to ``properties``) decides whether the journal is kept as ``.journal.bak``.

        Ordering: the snapshot is replaced first. From that instant the old journal is older than the
        snapshot and ignored, so no record may be appended to it any more: the writer is dropped
        before anything else. A crash at any step leaves either the old snapshot with its journal,
        or the new snapshot with an old journal or none; both open to the same state.
        """
        self._check_sole_writer()
        bridges = self._journal_bridges if bridges is None else bridges
        self._drop_journal()
        # Until this compaction completes, the journal file may no longer follow the snapshot.
        self._journal_bridges = False
        self._snapshot_size = self._snapshot.write(
            lambda: snapshot_chunks(properties, generation, self.schema_version)
        )
        self.generation, self._has_snapshot = generation, True
        if bridges and self.paths.journal.exists():
            os.replace(self.paths.journal, self.paths.journal_backup)
        else:
            # A .journal.bak of an older generation would only be ignored; do not leave it to confuse.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.paths.journal_backup)
        self._journal = JournalWriter.create(self.paths.journal, generation)
        self._journal_records, self._journal_bridges = 0, True
        self.compactions += 1

    def _check_sole_writer(self) -> None:
        """Refuse to write if another writer replaced our files since we opened them.

        The run lock is what keeps writers apart; this only turns a broken rule (a second writer
        opened without the lock compacts, and our appends would go to a file nobody reads; a snapshot
        edited by hand would be overwritten) into an error instead of lost updates. Two ``stat`` calls
        per update; not atomic, so not a lock.
        """
        journal_mine = self._journal is None or self._journal.is_current()
        if not (journal_mine and self._snapshot.unchanged()):
            raise StateError(
                f"{self._describe()} was changed by another writer since this store opened it;"
                " nothing was written. Only the holder of the run lock may change the state."
            )

    def _drop_journal(self) -> None:
        if self._journal is not None:
            journal, self._journal = self._journal, None
            journal.close()
