"""The dead-letter queue: a registry of spreadsheets that could not be read, one entry per episode.

Not a log: a spreadsheet that keeps failing the same way in later rounds updates its open entry
(occurrences, last failure) instead of adding one; when it is read again the entry is resolved and
removed, and the run tells people it recovered. Entries are capped by count and age so a long outage
cannot grow the state without bound. Pure data; ``now`` comes in.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.core.errors import ErrorInfo
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import Documents, document
from monitor.engine.tasks import Attempt, Task

MAX_ENTRIES = 2000  # above the reference size's worst day; the oldest go first
MAX_AGE = timedelta(days=30)  # a month-old failure nobody fixed is noise; `dlq list` showed it all along
HISTORY_LIMIT = 20  # attempts kept across the episode's rounds


@document
class DeadLetter:
    id: str  # the spreadsheet id: one open episode per spreadsheet
    name: str
    task: Task  # the task as it was dead-lettered (a copy: the round's task lives on)
    last_error: ErrorInfo
    first_failed_at: UtcTime
    last_failed_at: UtcTime
    occurrences: int = 1
    history: tuple[Attempt, ...] = ()


class DeadLetters(Documents[DeadLetter]):
    """The registry, keyed by spreadsheet id."""

    __slots__ = ()

    def record(self, spreadsheet_id: str, name: str, task: Task, error: ErrorInfo, now: datetime) -> bool:
        """File a failure; True when it opens a new episode (the caller alerts), False when it repeats."""
        snapshot = copy.copy(task)
        entry = self.get(spreadsheet_id)
        if entry is not None:
            self[spreadsheet_id] = replace(
                entry,
                occurrences=entry.occurrences + 1,
                last_failed_at=now,
                last_error=error,
                task=snapshot,
                history=(*entry.history, *task.history)[-HISTORY_LIMIT:],
            )
            return False
        self[spreadsheet_id] = DeadLetter(
            spreadsheet_id, name, snapshot, error, now, now, history=task.history[-HISTORY_LIMIT:]
        )
        return True

    def resolve(self, spreadsheet_id: str) -> DeadLetter | None:
        return self.pop(spreadsheet_id)

    def prune(self, now: datetime, max_entries: int = MAX_ENTRIES, max_age: timedelta = MAX_AGE) -> list[str]:
        """Drop entries older than ``max_age`` (by last failure), then the oldest beyond ``max_entries``."""
        cutoff = now - max_age
        dropped = [key for key, entry in self.items() if entry.last_failed_at < cutoff]
        for key in dropped:
            del self[key]
        if len(self) > max_entries:
            by_age = sorted(self.keys(), key=lambda key: self[key].last_failed_at)
            excess = by_age[: len(self) - max_entries]
            for key in excess:
                del self[key]
            dropped += excess
        return dropped
