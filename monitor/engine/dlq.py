"""The dead-letter queue: a registry of spreadsheets that could not be read, one entry per episode.

Not a log: a spreadsheet that keeps failing the same way in later rounds updates its open entry
(occurrences, last failure) instead of adding one; when it is read again the entry is resolved and
removed, and the caller emits a "recovered" event. Entries are capped by count and age so a long
outage cannot grow the state file without bound. Pure data; ``now`` comes in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from monitor.core.timefmt import format_utc, parse_utc

MAX_ENTRIES = 2000  # above the reference size's worst day; the oldest go first
MAX_AGE = timedelta(days=30)  # a month-old failure nobody fixed is noise; `dlq list` showed it all along


@dataclass
class DeadLetter:
    id: str  # the spreadsheet id: one open episode per spreadsheet
    name: str
    task: dict
    # SheetReadError.to_dict() ("error_class", "http_status", "google_status", "message", "range"),
    # or a poisoned task's {"error_class": "poison", "message"} (monitor.tasks)
    last_error: dict
    first_failed_at: str
    last_failed_at: str
    occurrences: int = 1
    history: list[dict] = field(default_factory=list)


class DeadLetters:
    def __init__(self, entries: dict[str, DeadLetter] | None = None) -> None:
        self.entries: dict[str, DeadLetter] = entries or {}

    @classmethod
    def from_dict(cls, data: dict) -> DeadLetters:
        return cls({key: DeadLetter(**value) for key, value in data.items()})

    def to_dict(self) -> dict:
        """The entries as JSON-ready dicts, for saving. Shallow: nested values are the entries' own
        (``asdict`` deep-copied them all, ~50 us per entry on every checkpoint)."""
        return {key: dict(vars(entry)) for key, entry in self.entries.items()}

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, spreadsheet_id: str) -> bool:
        return spreadsheet_id in self.entries

    def get(self, spreadsheet_id: str) -> DeadLetter | None:
        return self.entries.get(spreadsheet_id)

    def record(self, spreadsheet_id: str, name: str, task: dict, error: dict, now: datetime) -> bool:
        """File a failure; True when it opens a new episode (the caller alerts), False when it repeats."""
        at = format_utc(now)
        entry = self.entries.get(spreadsheet_id)
        if entry is not None:
            entry.occurrences += 1
            entry.last_failed_at = at
            entry.last_error = error
            entry.task = task
            entry.history = (entry.history + list(task.get("history", [])))[-20:]
            return False
        self.entries[spreadsheet_id] = DeadLetter(
            id=spreadsheet_id, name=name, task=task, last_error=error, first_failed_at=at,
            last_failed_at=at, history=list(task.get("history", [])),
        )
        return True

    def resolve(self, spreadsheet_id: str) -> DeadLetter | None:
        return self.entries.pop(spreadsheet_id, None)

    def prune(self, now: datetime, max_entries: int = MAX_ENTRIES, max_age: timedelta = MAX_AGE) -> list[str]:
        """Drop entries older than ``max_age`` (by last failure), then the oldest beyond ``max_entries``."""
        cutoff = now - max_age
        dropped = [key for key, e in self.entries.items() if parse_utc(e.last_failed_at) < cutoff]
        for key in dropped:
            del self.entries[key]
        if len(self.entries) > max_entries:
            by_age = sorted(self.entries, key=lambda key: self.entries[key].last_failed_at)
            excess = by_age[: len(self.entries) - max_entries]
            for key in excess:
                del self.entries[key]
            dropped += excess
        return dropped
