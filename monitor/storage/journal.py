"""The journal: an append-only file of the changes made since the snapshot was written.

Layout: UTF-8 text, one frame per line; a frame is the CRC-32 of its JSON body in 8 hex digits, a
space, the compact JSON body, and a newline. JSON escapes newlines inside strings, so a newline
only ever ends a frame::

    3f1c0a2b {"journal":1,"generation":7}
    9e04d1c7 {"set":{"task:a":"{...}"},"del":["dlq:b"]}

The first frame is the header: the journal's format and the snapshot generation its changes apply
to. Every other frame is one ``update``: applied whole or not at all.

Why the frames: a process killed while appending leaves a partial last line (no newline, or a CRC
that does not match). Such a torn tail is an update that never returned; it is ignored. A bad frame
followed by good ones is not something a crash leaves (an append only ever follows a good frame), so
it is reported as damage, and what follows it is not applied: applying later changes without an
earlier one could build a state that never existed.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from monitor.storage.contract import check_change
from monitor.storage.errors import StateVersionError
from monitor.storage.files import atomic_write_bytes

JOURNAL_FORMAT = 1


@dataclass(frozen=True)
class Change:
    """One update as the journal holds it."""

    values: dict[str, str]
    deleted: list[str]

    def apply_to(self, properties: dict[str, str]) -> None:
        for key in self.deleted:
            properties.pop(key, None)
        properties.update(self.values)


@dataclass(frozen=True)
class JournalContents:
    generation: int
    changes: list[Change] = field(default_factory=list)
    size: int = 0  # bytes of the header and the good frames
    torn_tail: bool = False  # bytes after the good frames that are an interrupted append
    damage: str | None = None  # a bad frame followed by good ones: what and where

    @property
    def clean(self) -> bool:
        """Nothing but good frames: appending may go on at its end."""
        return not self.torn_tail and self.damage is None


class JournalUnreadable(ValueError):
    """The journal has no usable header; the message says what is wrong."""


def frame(body: object) -> bytes:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"%08x %s\n" % (zlib.crc32(data), data)


def header(generation: int) -> bytes:
    return frame({"journal": JOURNAL_FORMAT, "generation": generation})


def record(values: Mapping[str, str], deleted: Sequence[str]) -> bytes:
    body: dict[str, object] = {}
    if values:
        body["set"] = values
    if deleted:
        body["del"] = deleted
    return frame(body)


def parse_journal(payload: bytes, where: str) -> JournalContents:
    """Read a journal; ``JournalUnreadable`` without a good header, ``StateVersionError`` if newer."""
    lines = payload.split(b"\n")
    # The piece after the last newline is empty for a journal whose every append completed.
    complete, tail = lines[:-1], lines[-1]
    head = _unframe(complete[0]) if complete else None
    if not isinstance(head, dict) or not _is_counter(head.get("journal"), 1):
        raise JournalUnreadable("the header is missing or damaged")
    if head["journal"] > JOURNAL_FORMAT:
        raise StateVersionError(
            f"{where} has journal format {head['journal']}, but this sheet-monitor understands"
            f" formats up to {JOURNAL_FORMAT}. It was written by a newer sheet-monitor; the file is"
            " unchanged."
        )
    if not _is_counter(head.get("generation"), 0):
        raise JournalUnreadable(f"the header's generation is {head.get('generation')!r}")
    changes: list[Change] = []
    size = len(complete[0]) + 1
    for index, line in enumerate(complete[1:], start=1):
        change = _change(_unframe(line))
        if change is None:
            later = sum(_change(_unframe(rest)) is not None for rest in complete[index + 1:])
            damage = None
            if later:
                damage = (
                    f"{where}: record {index} is damaged; the {index - 1} records before it were"
                    f" applied, the {later} good records after it were not"
                )
            return JournalContents(head["generation"], changes, size, damage is None, damage)
        changes.append(change)
        size += len(line) + 1
    return JournalContents(head["generation"], changes, size, torn_tail=bool(tail))


def _unframe(line: bytes) -> object | None:
    """The frame's body, or None if the line is not a whole, intact frame."""
    if len(line) < 10 or line[8:9] != b" ":
        return None
    try:
        checksum = int(line[:8], 16)
    except ValueError:
        return None
    body = line[9:]
    if zlib.crc32(body) != checksum:
        return None
    try:
        return json.loads(body)
    except ValueError:  # not UTF-8 or not JSON: a CRC collision on garbage
        return None


def _change(body: object) -> Change | None:
    """The change a record holds, or None if it is not a valid one (it then counts as damaged)."""
    if not isinstance(body, dict) or not set(body) <= {"set", "del"}:
        return None
    values, deleted = body.get("set", {}), body.get("del", [])
    if not isinstance(values, dict) or not isinstance(deleted, list):
        return None
    try:
        _, deleted = check_change(values, deleted)
    except (TypeError, ValueError):
        return None
    return Change(values, deleted)


def _is_counter(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


class JournalWriter:
    """Appends records to a journal; each append is on disk when ``append`` returns.

    The file is opened with O_APPEND and written by one writer (the holder of the run lock).
    """

    def __init__(self, path: Path, size: int) -> None:
        """Append to the journal at ``path``, whose good frames end at byte ``size``."""
        self.path = path
        self.size = size
        self.records = 0  # appended by this writer
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)

    @classmethod
    def create(cls, path: Path, generation: int) -> JournalWriter:
        """Replace ``path`` atomically with an empty journal for snapshot ``generation``."""
        first = header(generation)
        atomic_write_bytes(path, first)
        return cls(path, len(first))

    def append(self, data: bytes) -> None:
        """Append one frame and make it durable, or raise leaving the file as it was if possible.

        A record that failed must not be replayed (its caller was told it failed), hence the cut back
        to the old size. If even that fails, the frame may remain partial at the end, which replay
        ignores as a torn tail as long as nothing is appended after it: the owner of this writer
        must stop appending to this file after any failure.
        """
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            # fdatasync flushes the data and the size (what an append changes), not the times.
            (os.fdatasync if hasattr(os, "fdatasync") else os.fsync)(self._fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self.size)
            raise
        self.size += len(data)
        self.records += 1

    def is_current(self) -> bool:
        """True while ``path`` is still the file this writer appends to (no one replaced it)."""
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(self._fd)
        return (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)
