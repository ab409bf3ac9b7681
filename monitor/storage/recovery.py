"""Opening the state: which snapshot, which journals, what could not be used, what a writer repairs.

The snapshot, in order:
- the snapshot, if readable and well-formed (a newer schema version is an error, never "corruption");
- snapshot and backup both missing: a fresh, empty state (generation 0; the first run);
- snapshot unreadable (not JSON, wrong shape, truncated, empty) or missing while a backup exists: the
  backup. A writer moves the bad snapshot aside as ``<name>.corrupt-<UTC stamp>`` and puts the
  backup's bytes in its place; a read-only opener (the watchdog) changes nothing;
- backup unusable too: ``StateUnreadable``, and no file is touched.
A file that exists but cannot be *opened* (permissions) is not corruption either: restoring over it
could destroy good data, so that is an error that touches nothing.

Then the journals, oldest first (``journal.bak``, then ``journal``), each applied if its generation is
the one the state has reached; the state then counts as the next generation. So the snapshot (gen S)
takes its journal (gen S); the backup (gen S - 1) takes ``journal.bak`` (gen S - 1), which a
compaction keeps for exactly this, and then the snapshot's journal: a restore loses nothing while
those files are intact. A journal of an older generation is already contained in the snapshot (a
compaction was interrupted before it replaced it) and is ignored. One of a newer generation belongs
to a snapshot that is lost: its changes cannot be applied to an older state, so they are reported
and a writer moves the file aside as ``.orphaned-<stamp>``; a damaged or headerless journal likewise,
as ``.corrupt-<stamp>``. After a damaged journal no later one is applied.

Readers take no lock, so a compaction may replace files while they read. Every compaction replaces
the snapshot first, and a reader reads the snapshot before the journals and checks afterwards that
the snapshot is still the file it read; if not, it reads everything again. If it is, the journals it
read were those of that snapshot (or already contained in it), so it sees the state after some
complete update. The properties are migrated to the current schema version last, because the
journals hold changes in the snapshot's version.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from monitor.storage.contract import RestoreReport
from monitor.storage.errors import StateError, StateUnreadable
from monitor.storage.files import atomic_write_bytes, move_aside, read_file, same_file, stat_or_none
from monitor.storage.format import (
    MIGRATIONS,
    SCHEMA_VERSION,
    MalformedState,
    Migration,
    ParsedState,
    check_version,
    migrate,
    parse_state,
)
from monitor.storage.journal import JournalContents, JournalUnreadable, parse_journal
from monitor.storage.paths import StatePaths

_MISSING = "the file is missing"
# A reader re-reads when a compaction replaced the snapshot under it; compactions are seconds apart
# at the least, so more than a few attempts means something else keeps replacing the file.
READ_ATTEMPTS = 10


@dataclass(frozen=True)
class OpenedState:
    properties: dict[str, str]  # journals replayed, migrated to the target version
    generation: int  # of the snapshot on disk (0: none yet)
    has_snapshot: bool
    identity: os.stat_result | None  # the snapshot's stat if it holds what was loaded
    snapshot_size: int
    report: RestoreReport | None
    needs_compaction: bool  # journals were replayed or the version migrated: a writer compacts now
    next_generation: int  # what that compaction writes
    # The journal file holds exactly the changes from the snapshot on disk to ``properties``, so
    # a compaction may keep it as ``journal.bak`` (a restore from the backup then loses nothing).
    journal_bridges: bool
    reusable_journal_size: int | None  # a clean, empty journal of this generation: append from here


@dataclass
class _Found:
    """What one pass of reading found, before any decision."""

    main: tuple[bytes, os.stat_result] | None
    main_parsed: ParsedState | None
    main_reason: str
    backup: ParsedState | None = None
    backup_payload: bytes = b""
    backup_reason: str = _MISSING
    journals: dict[Path, JournalContents | str | None] = field(default_factory=dict)


def open_state(
    paths: StatePaths,
    *,
    writable: bool,
    now: datetime,
    schema_version: int = SCHEMA_VERSION,
    migrations: Mapping[int, Migration] = MIGRATIONS,
) -> OpenedState:
    """Load the state following the decisions in this module's docstring."""
    for _ in range(READ_ATTEMPTS):
        found = _read(paths)
        # A writer holds the run lock: nothing changes under it.
        seen = found.main[1] if found.main else None
        current = stat_or_none(paths.snapshot)
        if writable or (seen is None and current is None) or same_file(seen, current):
            break
    else:
        raise StateError(
            f"the state {paths.snapshot} was replaced {READ_ATTEMPTS} times while it was being read;"
            " nothing was changed, try again"
        )
    return _decide(paths, found, writable, now, schema_version, migrations)


def _read(paths: StatePaths) -> _Found:
    main = read_file(paths.snapshot)
    parsed, reason = _parse(main)
    found = _Found(main, parsed, reason)
    journals = (paths.journal,)
    if parsed is None:
        backup = read_file(paths.backup)
        found.backup, found.backup_reason = _parse(backup)
        found.backup_payload = backup[0] if backup else b""
        # Only the backup needs the journal its successor was compacted from.
        journals = (paths.journal_backup, paths.journal)
    for path in journals:
        found.journals[path] = _read_journal(path)
    return found


def _parse(read: tuple[bytes, os.stat_result] | None) -> tuple[ParsedState | None, str]:
    if read is None:
        return None, _MISSING
    try:
        return parse_state(read[0]), ""
    except MalformedState as exc:
        return None, str(exc)


def _read_journal(path: Path) -> JournalContents | str | None:
    """The journal, None if missing, or why it cannot be read."""
    read = read_file(path)
    if read is None:
        return None
    try:
        return parse_journal(read[0], str(path))
    except JournalUnreadable as exc:
        return str(exc)


def _decide(paths, found: _Found, writable, now, schema_version, migrations) -> OpenedState:
    if found.main_parsed is not None:
        base, restored = found.main_parsed, False
    elif found.main_reason == _MISSING and found.backup_reason == _MISSING:
        base, restored = ParsedState(schema_version, 0, {}), False
    elif found.backup is not None:
        base, restored = found.backup, True
    else:
        raise StateUnreadable(_both_unreadable_message(paths, found))
    where = str(paths.backup if restored else paths.snapshot)
    check_version(base.version, target=schema_version, where=where)

    properties, generation, replayed, notes, set_aside = _replay(base, found.journals)
    current = found.journals[paths.journal]
    applied_own = isinstance(current, JournalContents) and current.generation == base.generation
    properties = migrate(properties, base.version, target=schema_version, migrations=migrations,
                         where=str(paths.snapshot))
    migrated = base.version != schema_version

    identity = found.main[1] if found.main_parsed is not None else None
    moved_aside_to, journals_moved = None, ()
    if writable:
        if restored:
            if found.main_reason != _MISSING:
                moved_aside_to = move_aside(paths.snapshot, "corrupt", now)
            identity = atomic_write_bytes(paths.snapshot, found.backup_payload)
        journals_moved = tuple(move_aside(path, label, now) for path, label in set_aside)

    report = None
    if restored or notes:
        parts = []
        if restored:
            parts.append(
                f"the state file {paths.snapshot} could not be used ({found.main_reason});"
                f" its last good copy {paths.backup} was used"
            )
        report = RestoreReport(paths.snapshot, paths.backup, "; ".join(parts + notes),
                               moved_aside_to, journals_moved, from_backup=restored)
    reusable = (
        current.size
        if applied_own and current.clean and not current.changes and not migrated
        else None
    )
    return OpenedState(
        properties=properties,
        generation=base.generation,
        has_snapshot=found.main is not None or found.backup is not None,
        identity=identity,
        snapshot_size=len(found.main[0]) if found.main_parsed is not None else len(found.backup_payload),
        report=report,
        needs_compaction=replayed > 0 or migrated,
        next_generation=max(generation, base.generation + 1),
        journal_bridges=(not restored and not migrated and applied_own and current.damage is None),
        reusable_journal_size=reusable,
    )


def _replay(
    base: ParsedState, journals: dict[Path, JournalContents | str | None]
) -> tuple[dict[str, str], int, int, list[str], list[tuple[Path, str]]]:
    """Apply the journals that follow ``base``. Return the properties, the generation reached, how
    many changes were applied, what could not be used (for the report) and which files a writer
    should set aside (with a label)."""
    properties, generation, replayed = base.properties, base.generation, 0
    notes: list[str] = []
    set_aside: list[tuple[Path, str]] = []
    for path, journal in journals.items():
        if journal is None:
            continue
        if isinstance(journal, str):
            notes.append(f"the journal {path} cannot be read ({journal}); its changes were not applied")
            set_aside.append((path, "corrupt"))
        elif journal.generation < generation:
            continue  # already contained in the state
        elif journal.generation > generation:
            if journal.changes:
                notes.append(
                    f"the journal {path} holds {len(journal.changes)} updates made after a state that"
                    f" could not be used (generation {journal.generation}, the state used is"
                    f" generation {generation}); they were not applied"
                )
                set_aside.append((path, "orphaned"))
        else:
            for change in journal.changes:
                change.apply_to(properties)
            replayed += len(journal.changes)
            if journal.damage:
                # Only part of this journal was applied: the state is not its successor's base, so
                # the generation stays and a later journal counts as orphaned.
                notes.append(journal.damage)
                set_aside.append((path, "corrupt"))
            else:
                generation += 1
    return properties, generation, replayed, notes, set_aside


def _both_unreadable_message(paths: StatePaths, found: _Found) -> str:
    journal = paths.journal
    also = f" and `mv {journal} {journal}.broken`" if journal.exists() else ""
    return (
        f"The state cannot be loaded. State file {paths.snapshot}: {found.main_reason}. Its last good"
        f" copy {paths.backup}: {found.backup_reason}. The files were left as they are for"
        f" inspection. To recover, copy a good version from your own backups to {paths.snapshot};"
        f" or, to start over with an empty state (everything the monitor remembered is lost), move"
        f" both files aside, e.g. `mv {paths.snapshot} {paths.snapshot}.broken` and"
        f" `mv {paths.backup} {paths.backup}.broken`{also}."
    )
