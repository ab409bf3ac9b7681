"""Drive's change log: every change to a file of the sandbox, at a numbered position.

One log for the whole sandbox (every account sees every file). A position is what a page token
names: Google's tokens are decimal strings ("4", "2870"), so the sandbox's are the position's
digits. ``getStartPageToken`` hands out the next position; ``changes.list`` from position P sees
each file changed at or after P once, at its latest change, as Google collapses several edits of
one file into one change.

A file whose access was removed (a permanent 403 fault, see faults.removes_access) is out of the
caller's view: it gets one ``removed`` change, and its later edits stay invisible until access
returns, which appears as a change of the file again.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass
from datetime import datetime

FIRST_POSITION = 1


@dataclass(frozen=True)
class Change:
    position: int
    file_id: str
    time: datetime
    removed: bool


@dataclass(frozen=True)
class ChangePage:
    changes: list[Change]
    next_position: int | None  # more remain: continue from here (nextPageToken)
    new_start: int | None  # the end was reached: future changes start here (newStartPageToken)


class ChangeLog:
    """Appends changes and pages through them by position. Thread-safe; times come from callers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[Change] = []  # ascending positions (not contiguous after a clear)
        self._next = FIRST_POSITION
        self._hidden: set[str] = set()  # files whose access was removed

    def next_position(self) -> int:
        """Where a change recorded now would go: the start page token's position."""
        with self._lock:
            return self._next

    def record(self, file_id: str, now: datetime) -> None:
        """The file changed (created, written, replaced); nothing while it is out of view."""
        with self._lock:
            if file_id not in self._hidden:
                self._append(file_id, now, removed=False)

    def record_removed(self, file_id: str, now: datetime) -> None:
        """The file was deleted: a ``removed`` change, unless access was already removed."""
        with self._lock:
            if file_id in self._hidden:
                self._hidden.discard(file_id)  # the caller already saw it leave
            else:
                self._append(file_id, now, removed=True)

    def remove_access(self, file_id: str, now: datetime) -> None:
        with self._lock:
            if file_id not in self._hidden:
                self._hidden.add(file_id)
                self._append(file_id, now, removed=True)

    def restore_access(self, file_id: str, now: datetime, exists: bool) -> None:
        """Access is back: the file reappears as a change (if it still exists)."""
        with self._lock:
            if file_id in self._hidden:
                self._hidden.discard(file_id)
                if exists:
                    self._append(file_id, now, removed=False)

    def page(self, start: int, size: int, include_removed: bool = True) -> ChangePage:
        """Up to ``size`` changes from position ``start``, one per file (its latest), in the order
        of those latest changes. ``start`` must be a valid position (see ``valid``)."""
        with self._lock:
            index = bisect.bisect_left(self._entries, start, key=lambda change: change.position)
            latest: dict[str, Change] = {}
            for change in self._entries[index:]:
                latest.pop(change.file_id, None)  # re-insert: dict order = order of latest change
                latest[change.file_id] = change
            found = [c for c in latest.values() if include_removed or not c.removed]
            if len(found) > size:
                return ChangePage(found[:size], found[size - 1].position + 1, None)
            return ChangePage(found, None, self._next)

    def valid(self, position: int) -> bool:
        """A position a token could have named: from the first ever to the next one."""
        with self._lock:
            return FIRST_POSITION <= position <= self._next

    def clear(self) -> None:
        """Forget every change; positions keep counting, so an old token never names new changes
        it did not see (it sees only what happens after the clear)."""
        with self._lock:
            self._entries.clear()
            self._hidden.clear()

    def _append(self, file_id: str, now: datetime, removed: bool) -> None:
        self._entries.append(Change(self._next, file_id, now, removed))
        self._next += 1
