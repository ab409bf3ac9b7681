"""Opening the state file: the main file if it is good, else the last good copy, else a clear error.

Decisions, in order:
- main file readable and well-formed: use it (a newer schema version is an error, never "corruption");
- main and backup both missing: a fresh, empty state (the first run);
- main unreadable (not JSON, wrong shape, truncated, empty) or missing while a backup exists: use the
  backup. A writer moves the bad main file aside as ``<name>.corrupt-<UTC timestamp>`` and puts the
  backup's bytes in its place; a read-only opener (the watchdog) changes nothing;
- backup unusable too: ``StateUnreadable``, and neither file is touched.

A main file that exists but cannot be *opened* (permissions) is not corruption either: restoring over it
could destroy good data, so that is an error that touches nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from monitor.storage.errors import StateError, StateUnreadable
from monitor.storage.files import atomic_write_bytes, encode_state
from monitor.storage.format import (
    SCHEMA_VERSION,
    MalformedState,
    Migration,
    ParsedState,
    empty_state,
    migrate,
    parse_state,
)

_MISSING = "the file is missing"


@dataclass(frozen=True)
class RestoreReport:
    """The main state file was unusable and its last good copy was used instead."""

    path: Path
    backup_path: Path
    reason: str  # why the main file could not be used
    moved_aside_to: Path | None  # where the bad main file now is; None if missing or opened read-only


@dataclass(frozen=True)
class OpenedState:
    parsed: ParsedState  # already migrated to the target version
    payload: bytes  # the bytes ``parsed`` was decoded from (before migration)
    identity: os.stat_result | None  # stat of the main file if it holds exactly ``payload``
    restored: RestoreReport | None
    needs_write: bool  # migrated in memory; a writer should persist it


def open_state(
    path: Path,
    backup_path: Path,
    *,
    writable: bool,
    now: datetime,
    schema_version: int = SCHEMA_VERSION,
    migrations: Mapping[int, Migration] | None = None,
) -> OpenedState:
    """Load the state following the decisions in this module's docstring."""

    def upgrade(parsed: ParsedState, where: Path) -> ParsedState:
        kwargs = {} if migrations is None else {"migrations": migrations}
        return migrate(parsed, target=schema_version, where=str(where), **kwargs)

    main_reason, main = _load(path)
    if main is not None:
        payload, identity, parsed = main
        migrated = upgrade(parsed, path)
        return OpenedState(migrated, payload, identity, None, migrated is not parsed)

    backup_reason, backup = _load(backup_path)
    if main_reason == _MISSING and backup_reason == _MISSING:
        fresh = empty_state(schema_version)
        return OpenedState(ParsedState(schema_version, fresh), encode_state(fresh), None, None, False)
    if backup is None:
        raise StateUnreadable(_both_unreadable_message(path, main_reason, backup_path, backup_reason))

    payload, _, parsed = backup
    migrated = upgrade(parsed, backup_path)
    identity = None
    moved_aside_to = None
    if writable:
        if main_reason != _MISSING:
            moved_aside_to = _move_aside(path, now)
        identity = atomic_write_bytes(path, payload)
    report = RestoreReport(path, backup_path, main_reason, moved_aside_to)
    return OpenedState(migrated, payload, identity, report, migrated is not parsed)


def _load(path: Path) -> tuple[str, tuple[bytes, os.stat_result, ParsedState] | None]:
    """Return ("", (payload, stat, parsed)) for a good file, or (reason, None) for a missing/bad one."""
    try:
        with open(path, "rb") as stream:
            identity = os.fstat(stream.fileno())
            payload = stream.read()
    except FileNotFoundError:
        return _MISSING, None
    except OSError as exc:
        raise StateError(
            f"cannot read the state file {path}: {exc.strerror}. Run sheet-monitor as the user that"
            " owns the state folder, or fix the file's owner and mode (0600); nothing was changed."
        ) from exc
    try:
        return "", (payload, identity, parse_state(payload))
    except MalformedState as exc:
        return str(exc), None


def _move_aside(path: Path, now: datetime) -> Path:
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while target.exists():  # two restores within one second must not overwrite the first evidence
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
        counter += 1
    os.rename(path, target)
    return target


def _both_unreadable_message(path: Path, main_reason: str, backup: Path, backup_reason: str) -> str:
    return (
        f"The state cannot be loaded. State file {path}: {main_reason}. Its last good copy"
        f" {backup}: {backup_reason}. Both files were left as they are for inspection. To recover,"
        f" copy a good version from your own backups to {path}; or, to start over with an empty"
        f" state (everything the monitor remembered is lost), move both files aside, e.g."
        f" `mv {path} {path}.broken` and `mv {backup} {backup}.broken`."
    )
