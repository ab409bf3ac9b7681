"""What the engine keeps between runs, as typed documents in memory.

``RunnerState`` holds every document the run reads and changes. ``monitor.state`` loads it from the
store (validating each document), and saves exactly what changed since the last save: each
collection records its changed ids (see ``monitor.core.tracking``), and assigning one of the single
documents (``state.heartbeat = ...``) records that it changed. Documents are values: change one by
storing a new one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from monitor.core.runners import is_runner_name
from monitor.core.tracking import Documents, Single, document
from monitor.engine.api_health import ApiState
from monitor.engine.breaker import BreakerState
from monitor.engine.credentials import CredentialsState
from monitor.engine.dlq import DeadLetters
from monitor.engine.events import Event
from monitor.engine.feed_state import FeedState
from monitor.engine.folder_listing import FolderListings
from monitor.engine.health import SheetHealth
from monitor.engine.heartbeat import Heartbeat, RunHistory
from monitor.engine.history import SheetHistory
from monitor.engine.incidents import Incident
from monitor.engine.maintenance import Maintenance
from monitor.engine.mutes import Mute, active_mutes
from monitor.engine.pacer import QuotaLog
from monitor.engine.runlog import RunHour
from monitor.engine.tasks import Round
from monitor.engine.totals import RunTotals

EVENTS_KEPT = 1000  # undelivered events kept; beyond it the oldest go (the notifier summarises anyway)


@document
class RetryFirst:
    """Spreadsheets `dlq retry` asked for between rounds: the next round reads them first."""

    spreadsheet_ids: tuple[str, ...] = ()


class EventLog:
    """Events not yet handed to people, oldest first; each one a document of its own.

    A key is a zero-padded sequence number, so keys sort in the order events came. Runners sharing
    one state each add their own name (``suffix``): ``000000000042.host-a``. Two runners that both
    take 42 next then write two keys, never one over the other, and the pair still sorts by number.
    """

    __slots__ = ("_documents", "_next", "suffix")

    def __init__(self, events: Mapping[int | str, Event] | None = None, suffix: str = "") -> None:
        events = events or {}
        self._documents: Documents[Event] = Documents(
            {_key(key) if isinstance(key, int) else key: event for key, event in events.items()})
        self._next = max((sequence_of(key) for key in self._documents), default=0) + 1
        self.suffix = suffix

    def __len__(self) -> int:
        return len(self._documents)

    def __iter__(self) -> Iterator[Event]:
        return (self._documents[key] for key in sorted(self._documents))

    def add(self, event: Event) -> None:
        key = _key(self._next) + (f".{self.suffix}" if self.suffix else "")
        self._documents[key] = event
        self._next += 1
        if len(self._documents) > EVENTS_KEPT:
            del self._documents[min(self._documents)]

    def pending(self) -> list[tuple[str, Event]]:
        """(key, event) for every waiting event, oldest first: keys for :meth:`remove`."""
        return [(key, self._documents[key]) for key in sorted(self._documents)]

    def remove(self, keys: list[str]) -> None:
        """Forget events the notifier has turned into messages."""
        for key in keys:
            self._documents.pop(key)

    @property
    def documents(self) -> Documents[Event]:
        return self._documents


def _key(seq: int) -> str:
    return f"{seq:012d}"  # zero-padded: the keys sort in the order the events came


def sequence_of(key: str) -> int:
    """The sequence number of an event key (``000000000042`` or ``000000000042.host-a``)."""
    return int(key.partition(".")[0])


def is_event_key(key: str) -> bool:
    number, dot, runner = key.partition(".")
    return number.isdigit() and (not dot or is_runner_name(runner))


class RunnerState:
    """Every document the run keeps, loaded by ``monitor.state`` (a fresh state when there is none)."""

    round = Single()  # Round | None: replacing it replaces every task document
    heartbeat = Single()  # Heartbeat | None
    runs = Single()  # RunHistory
    api = Single()  # ApiState
    quota = Single()  # QuotaLog | None
    retry_first = Single()  # RetryFirst
    feed = Single()  # FeedState: Drive's change feed as the last round left it
    credentials = Single()  # CredentialsState: the credentials refused now, told once
    totals = Single()  # RunTotals: every finished run's counts added up (the metrics' counters)
    maintenance = Single()  # Maintenance: windows started from the chat (monitor.engine.maintenance)
    folders = Single()  # FolderListings: the [[folders]] folders as Drive last listed them

    def __init__(
        self,
        *,
        round: Round | None = None,
        health: Mapping[str, SheetHealth] | None = None,
        breakers: Mapping[str, BreakerState] | None = None,
        dlq: Mapping[str, Any] | None = None,
        mutes: Mapping[str, Mute] | None = None,
        events: Mapping[int, Event] | None = None,
        heartbeat: Heartbeat | None = None,
        runs: RunHistory | None = None,
        api: ApiState | None = None,
        quota: QuotaLog | None = None,
        retry_first: RetryFirst | None = None,
        feed: FeedState | None = None,
        credentials: CredentialsState | None = None,
        history: Mapping[str, SheetHistory] | None = None,
        totals: RunTotals | None = None,
        runlog: Mapping[str, RunHour] | None = None,
        incidents: Mapping[str, Incident] | None = None,
        maintenance: Maintenance | None = None,
        folders: FolderListings | None = None,
    ) -> None:
        self.changed_singles: set[str] = set()
        self.health: Documents[SheetHealth] = Documents(health)
        self.breakers: Documents[BreakerState] = Documents(breakers)
        self.dlq = DeadLetters(dlq)
        self.mutes: Documents[Mute] = Documents(mutes)
        self.history: Documents[SheetHistory] = Documents(history)  # metric history, cross-sheet sides
        self.runlog: Documents[RunHour] = Documents(runlog)  # the runs of the last days, by UTC hour
        self.incidents: Documents[Incident] = Documents(incidents)  # each spreadsheet's latest trouble
        self.events = EventLog(events)
        self.round = round
        self.heartbeat = heartbeat
        self.runs = runs or RunHistory()
        self.api = api or ApiState()
        self.quota = quota
        self.retry_first = retry_first or RetryFirst()
        self.feed = feed or FeedState()
        self.credentials = credentials or CredentialsState()
        self.totals = totals or RunTotals()
        self.maintenance = maintenance or Maintenance()
        self.folders = folders or FolderListings()
        self.changed_singles.clear()  # as loaded: nothing to save yet

    def active_mutes(self, now: datetime) -> dict[str, Mute]:
        """Mutes in force at ``now``; one that has ended silences nothing."""
        return active_mutes(self.mutes, now)

    def is_muted(self, spreadsheet_id: str, now: datetime) -> bool:
        mute = self.mutes.get(spreadsheet_id)
        return mute is not None and mute.in_force(now)

    def mute_skips_reads(self, spreadsheet_id: str, now: datetime) -> bool:
        """Muted for a while (not "until fixed", which still reads it): left out of the round."""
        mute = self.mutes.get(spreadsheet_id)
        return mute is not None and mute.in_force(now) and mute.skips_reads

    def is_failing(self, spreadsheet_id: str) -> bool:
        """Dead-lettered, its breaker has a record, or its reads fail since the last that worked."""
        if spreadsheet_id in self.dlq or spreadsheet_id in self.breakers:
            return True
        record = self.health.get(spreadsheet_id)
        return record is not None and record.unreadable is not None

    def open_breakers(self) -> list[str]:
        return sorted(sid for sid, breaker in self.breakers.items() if not breaker.is_closed)
