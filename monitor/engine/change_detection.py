"""Which spreadsheets a round reads, when Google Drive says which ones changed.

Most reads of a round return what the last read returned; Drive knows which files changed and its
quota is far larger than Sheets'. So a round starts by asking Drive's change feed what changed since
the position the last round saved, and reads only the spreadsheets that may differ from their last
read (:func:`due_for_read`):

* Drive reported a change (or the file left our view: deleted, unshared; or went to the trash,
  which is told on its own, :class:`SpreadsheetTrashed`) after the last read;
* never read, or read with other checks than the config's today;
* the last read would be older than the spreadsheet's ``max_age`` by the next round: a change
  Drive does not report, a value recomputed at Google, is seen within that age;
* its profile says ``always_read`` (NOW(), IMPORTRANGE, GOOGLEFINANCE change without an edit);
* it is failing (dead-lettered, or its breaker has a record): that is decided by reading, as before;
* it has a freshness check and its time zone is not known (a record from before zones were read:
  its moments were found in the config's zone, and may be hours off).

The others are judged again without a read (``monitor.engine.rejudge``), but for a few read early,
oldest first, so that max_age's reads are spread evenly over the rounds (``_read_early``).

While a run has budget left it asks the feed again every ``[run] change_poll`` (``watch``): what
changed is read at once, ahead of the round's routine reads, in the round under way (``Round.read_first``),
and its position saved with what it queued, as a round's is.

The feed's new position is stored with the round it built, in one save: a run killed before that save
asks again from the old position, so no change is ever skipped. Every spreadsheet Drive named is
marked (``changed_at``) in the same save, so a change is remembered until a read sees it, even when
the round's read of it fails or the spreadsheet is muted meanwhile. When Drive cannot answer, the
round reads every spreadsheet and keeps the old position.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from fractions import Fraction
from typing import TYPE_CHECKING, Protocol

from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.logs import log_event
from monitor.engine.events import (
    ChangeFeedFailing,
    ChangeFeedRecovered,
    Event,
    SpreadsheetRestored,
    SpreadsheetTrashed,
)
from monitor.engine.feed_state import FeedState
from monitor.engine.health import ERROR, SheetHealth
from monitor.engine.inspect import SheetPlan

if TYPE_CHECKING:
    from monitor.engine.runner_state import RunnerState


# Drive's largest page of changes: the feed asks for it, so it costs a request per this many changes.
CHANGES_PER_FEED_REQUEST = 1000


@dataclass(frozen=True, slots=True)
class DriveFile:
    """A changed file as the feed shows it after the change: what deciding a folder's members needs."""

    name: str
    mime_type: str
    parents: tuple[str, ...]
    trashed: bool = False


@dataclass(frozen=True)
class ChangedFiles:
    """What Drive reported after a position."""

    changed: frozenset[str]  # edited (or created, shared, trashed, restored) since the position
    removed: frozenset[str]  # deleted, or no longer visible to the credential
    position: str  # where the next call starts
    requests: int  # how many Drive requests it took
    trashed: frozenset[str] = frozenset()  # of ``changed``, those now in Drive's trash
    edited: Mapping[str, datetime] = field(default_factory=dict)  # of ``changed``: their modifiedTime
    files: Mapping[str, DriveFile] = field(default_factory=dict)  # of ``changed``: each as it is now


class ChangeFeed(Protocol):
    """Drive's change feed as the run needs it (``monitor.google.drive_feed`` implements it). Both raise
    ``SheetReadError`` (already classified), never a library's exception."""

    source: str  # whose feed it is (a credential's file name): a position is only valid in its own

    def start_position(self, timeout: float) -> str: ...

    def changed_since(self, position: str, timeout: float) -> ChangedFiles: ...



def due_for_read(plan: SheetPlan, record: SheetHealth | None, now: datetime, interval: timedelta,
                 failing: bool) -> bool:
    """Must this round read ``plan``'s spreadsheet, or may it be judged from its last read?

    ``failing``: it is dead-lettered or its breaker has a record; ``interval`` is the round interval
    (a last read that would pass ``max_age`` before the next round is read now)."""
    if plan.always_read or failing or record is None or record.read_at is None:
        return True
    if record.health is ERROR or record.checks != plan.fingerprint or record.change_unread:
        return True
    if plan.needs_time_zone and record.time_zone is None:
        return True
    return now + interval - record.read_at > plan.max_age  # the next round would find it too old


def rounds_between_reads(max_age: timedelta, interval: timedelta) -> int:
    """How many rounds apart :func:`due_for_read` reads a spreadsheet Drive never reports changed,
    rounds starting ``interval`` apart (what check-config plans with): the whole intervals in
    ``max_age``, at least one. With rounds 5m apart and max_age 1h, a read at 0:00 (or a little after
    its round's start) is not due at 0:55, where the next round would find it an hour old at most,
    and is at 1:00."""
    return max(1, max_age // interval)


def marked_changed(record: SheetHealth | None, at: datetime) -> SheetHealth:
    """``record`` with a change made at ``at``, kept until a read sees it. Of several changes unread,
    the latest is kept: a read sent before it may not have seen it (``Run``), and the verdict the
    next read gives is that edit's (the lag from an edit to its verdict counts from it)."""
    record = record or SheetHealth()
    return replace(record, changed_at=max(at, record.changed_at or at))


def edited_at(changes: ChangedFiles, spreadsheet_id: str, now: datetime) -> datetime:
    """When Drive says the spreadsheet was modified, else (removed, no time given) when it said so;
    never later than ``now`` (a clock behind Google's)."""
    return min(changes.edited.get(spreadsheet_id, now), now)


class ChangeDetection:
    """Chooses each new round's reads with Drive's change feed (``feed`` None: detection is off and
    every spreadsheet is read), and keeps ``state.feed``: the position, and a failing feed's episode."""

    def __init__(self, feed: ChangeFeed | None, state: RunnerState, run_id: str,
                 emit: Callable[[Event], None]) -> None:
        self.feed = feed
        self.state = state
        self.run_id = run_id
        self._emit = emit
        self.drive_requests = 0

    def select(self, candidates: Sequence[str], plans: Mapping[str, SheetPlan], now: datetime,
               interval: timedelta, timeout: float) -> tuple[list[str], list[str]]:
        """(``candidates`` to read this round, in their order; those to judge without a read)."""
        if self.feed is None:
            if self.state.feed != FeedState():
                self.state.feed = FeedState()  # switched off: a later switch-on starts afresh
            return list(candidates), []
        try:
            changes = self._ask(now, timeout)
        except SheetReadError as error:
            self._failed(error, now)
            return list(candidates), []
        if changes is None:
            return list(candidates), []  # a fresh position: nothing before it is known, all is read
        self._mark(changes, plans, now)
        read, unread = [], []
        for spreadsheet_id in candidates:
            due = due_for_read(plans[spreadsheet_id], self.state.health.get(spreadsheet_id), now, interval,
                               self.state.is_failing(spreadsheet_id))
            (read if due else unread).append(spreadsheet_id)
        # Edits first (after what `dlq retry` asked for): the routine reads, longest unread first,
        # would otherwise put a spreadsheet edited a minute ago behind an hour's worth of them.
        first, health = set(self.state.retry_first.spreadsheet_ids), self.state.health
        read.sort(key=lambda sid: (sid not in first, not (sid in health and health[sid].change_unread)))
        early = self._read_early(read, unread, plans, interval)
        if early:
            taken = set(early)
            read += early
            unread = [spreadsheet_id for spreadsheet_id in unread if spreadsheet_id not in taken]
        return read, unread

    def watch(self, plans: Mapping[str, SheetPlan], now: datetime, timeout: float) -> set[str]:
        """Ask the feed again while the round goes on: the configured spreadsheets that changed (or
        left the credential's view) since the last look, marked changed. The caller queues their
        reads and saves them with the new position in one save. Nothing when the feed is off or has
        no position to ask from (the next round takes one), or cannot answer (told once per episode,
        as at a round's start: the round's routine reads go on)."""
        stored = self.state.feed
        if self.feed is None or stored.position is None or stored.source != self.feed.source:
            return set()
        try:
            changes = self._ask(now, timeout)
        except SheetReadError as error:
            self._failed(error, now)
            return set()
        assert changes is not None  # asked from a position of this feed
        return self._mark(changes, plans, now)

    def _mark(self, changes: ChangedFiles, plans: Mapping[str, SheetPlan], now: datetime) -> set[str]:
        """Mark the configured spreadsheets Drive named changed (and tell of the trash): those."""
        named = (changes.changed | changes.removed) & plans.keys()
        for spreadsheet_id in named:
            at = edited_at(changes, spreadsheet_id, now)
            self.state.health[spreadsheet_id] = marked_changed(self.state.health.get(spreadsheet_id), at)
        self._note_trash(changes, plans, now)
        return named

    def due_to_ask(self, now: datetime, every: timedelta | None) -> bool:
        """Is it time to ask the feed again (``every``: ``[run] change_poll``, None: only at a round's
        start)? Beside other runners the last look is any runner's: one asks, all read."""
        asked = self.state.feed.asked_at
        return self.watches(every) and (asked is None or now - asked >= every)

    def watches(self, every: timedelta | None) -> bool:
        """Is the feed asked again while the run goes on (on, with a position to ask from)?"""
        return self.feed is not None and every is not None and self.state.feed.position is not None

    def _read_early(self, read: list[str], unread: list[str], plans: Mapping[str, SheetPlan],
                    interval: timedelta) -> list[str]:
        """The unchanged spreadsheets to read before their max_age comes due, oldest read first, so
        that every round reads about its share of them. Without it, the spreadsheets a full round read
        together (the first, or one after Drive failed) would all come due together max_age later: a
        round of nearly everything, on one credential far longer than a round interval. The share is
        the whole reads per round that keep every spreadsheet within its max_age; reads made anyway
        (changed, due, failing) count toward it."""
        ages = Counter(plans[spreadsheet_id].max_age for spreadsheet_id in (*read, *unread)
                       if not plans[spreadsheet_id].always_read)
        share = int(sum(Fraction(count, rounds_between_reads(max_age, interval))
                        for max_age, count in ages.items()))
        wanted = share - sum(1 for spreadsheet_id in read if not plans[spreadsheet_id].always_read)
        if wanted <= 0:
            return []
        oldest = sorted(unread, key=lambda spreadsheet_id: self.state.health[spreadsheet_id].read_at)
        return oldest[:wanted]

    def _ask(self, now: datetime, timeout: float) -> ChangedFiles | None:
        """What changed since the stored position, and the new position stored (saved with the round
        that reads those changes); None when there was no position of this feed to ask from."""
        assert self.feed is not None
        stored = self.state.feed
        if stored.position is None or stored.source != self.feed.source:
            position, changes = self.feed.start_position(timeout), None
            self.drive_requests += 1
        else:
            changes = self.feed.changed_since(stored.position, timeout)
            position = changes.position
            self.drive_requests += changes.requests
        if stored.failing_since is not None:
            self._emit(ChangeFeedRecovered(at=now, run_id=self.run_id, failing_since=stored.failing_since))
        self.state.feed = FeedState(position, self.feed.source, now, trashed=stored.trashed)
        return changes

    def _note_trash(self, changes: ChangedFiles, plans: Mapping[str, SheetPlan], now: datetime) -> None:
        """Tell people when Drive reports a configured spreadsheet put in its trash (it still reads
        fine until Drive deletes it for good) and when it comes out. A trashed file that is then
        removed (deleted for good, or unshared) is forgotten here: its next read says what happened."""
        before = self.state.feed.trashed
        trashed = {sid: since for sid, since in before.items() if sid in plans}
        for sid in sorted((changes.changed | changes.removed) & plans.keys()):
            sheet = {"at": now, "run_id": self.run_id, "spreadsheet_id": sid, "name": plans[sid].name,
                     "tags": plans[sid].tags}
            if sid in changes.trashed and sid not in trashed:
                trashed[sid] = now
                self._emit(SpreadsheetTrashed(**sheet))
            elif sid not in changes.trashed and sid in trashed:
                since = trashed.pop(sid)
                if sid in changes.changed:
                    self._emit(SpreadsheetRestored(**sheet, trashed_at=since))
        if trashed != before:
            self.state.feed = replace(self.state.feed, trashed=trashed)

    def _failed(self, error: SheetReadError, now: datetime) -> None:
        """Every spreadsheet is read this round. A feed refused for quota or a passing fault (a 5xx,
        a timeout) is asked from the same position next round; any other refusal (a position Drive
        no longer knows, the Drive API not enabled, an answer not Drive's) starts from a fresh
        position once Drive answers again."""
        stored = self.state.feed
        log_event("change_feed_failed", logging.WARNING, status=error.http_status, error=error.message,
                  error_class=error.error_class.value)
        if stored.failing_since is None:
            self._emit(ChangeFeedFailing(at=now, run_id=self.run_id, error=error.message[:200]))
        self.state.feed = replace(stored, position=stored.position if _passing(error) else None, asked_at=now,
                                  failing_since=stored.failing_since or now, last_error=error.message[:200])


def _passing(error: SheetReadError) -> bool:
    """Is the feed's refusal one that asking again from the same position can outlast? A 500 is
    Google's "backend error", to retry like a 503 (classified uncertain only because, for a read,
    it may also be the spreadsheet's fault); dropping the position for it would make the next round
    read every spreadsheet once more."""
    if error.error_class in (ErrorClass.QUOTA, ErrorClass.TRANSIENT):
        return True
    return error.http_status is not None and error.http_status >= 500
