"""Which spreadsheets a round reads, when Google Drive says which ones changed.

Most reads of a round return what the last read returned; Drive knows which files changed and its
quota is far larger than Sheets'. So a round starts by asking Drive's change feed what changed since
the position the last round saved, and reads only the spreadsheets that may differ from their last
read (:func:`due_for_read`):

* Drive reported a change (or the file left our view: deleted, unshared) after the last read;
* never read, or read with other checks than the config's today;
* the last read is as old as the spreadsheet's ``max_age`` (it would be by the next round): a change
  Drive does not report, a value recomputed at Google, is seen within that age;
* its profile says ``always_read`` (NOW(), IMPORTRANGE, GOOGLEFINANCE change without an edit);
* it is failing (dead-lettered, or its breaker has a record): that is decided by reading, as before.

The others are judged again without a read (``monitor.engine.rejudge``). The feed's new position is
stored with the round it built, in one save: a run killed before that save asks again from the old
position, so no change is ever skipped. Every spreadsheet Drive named is marked (``changed_at``) in
the same save, so a change is remembered until a read sees it, even when the round's read of it fails
or the spreadsheet is muted meanwhile. When Drive cannot answer, the round reads every spreadsheet and
keeps the old position.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.logs import log_event
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document
from monitor.engine.events import ChangeFeedFailing, ChangeFeedRecovered, Event
from monitor.engine.health import ERROR, SheetHealth
from monitor.engine.inspect import SheetPlan

if TYPE_CHECKING:
    from monitor.engine.state import RunnerState  # which imports FeedState from here


@dataclass(frozen=True)
class ChangedFiles:
    """What Drive reported after a position."""

    changed: frozenset[str]  # edited (or created, or shared) since the position
    removed: frozenset[str]  # deleted, trashed, or no longer visible to the credential
    position: str  # where the next call starts
    requests: int  # how many Drive requests it took


class ChangeFeed(Protocol):
    """Drive's change feed as the run needs it (``monitor.google.changes`` implements it). Both raise
    ``SheetReadError`` (already classified), never a library's exception."""

    source: str  # whose feed it is (a credential's file name): a position is only valid in its own

    def start_position(self, timeout: float) -> str: ...

    def changed_since(self, position: str, timeout: float) -> ChangedFiles: ...


@document
class FeedState:
    """The change feed as the last round left it: where to ask from next, and whether it is failing."""

    position: str | None = None
    source: str | None = None  # the feed ``position`` belongs to
    asked_at: UtcTime | None = None  # when the position was taken (the last round's start)
    failing_since: UtcTime | None = None  # Drive could not answer from then on (every sheet is read)
    last_error: str | None = None


def due_for_read(plan: SheetPlan, record: SheetHealth | None, now: datetime, interval: timedelta,
                 failing: bool) -> bool:
    """Must this round read ``plan``'s spreadsheet, or may it be judged from its last read?

    ``failing``: it is dead-lettered or its breaker has a record; ``interval`` is the round interval
    (a last read that would pass ``max_age`` before the next round is read now)."""
    if plan.always_read or failing or record is None or record.read_at is None:
        return True
    if record.health is ERROR or record.checks != plan.fingerprint or record.change_unread:
        return True
    return now + interval - record.read_at >= plan.max_age


def marked_changed(record: SheetHealth | None, now: datetime) -> SheetHealth:
    """``record`` with Drive's report of a change at ``now``, kept until a read sees it."""
    return replace(record or SheetHealth(), changed_at=now)


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
        for spreadsheet_id in (changes.changed | changes.removed) & plans.keys():
            self.state.health[spreadsheet_id] = marked_changed(self.state.health.get(spreadsheet_id), now)
        read, unread = [], []
        for spreadsheet_id in candidates:
            due = due_for_read(plans[spreadsheet_id], self.state.health.get(spreadsheet_id), now, interval,
                               self.state.is_failing(spreadsheet_id))
            (read if due else unread).append(spreadsheet_id)
        return read, unread

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
        self.state.feed = FeedState(position, self.feed.source, now)
        return changes

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
        self.state.feed = replace(stored, position=stored.position if _passing(error) else None,
                                  failing_since=stored.failing_since or now, last_error=error.message[:200])


def _passing(error: SheetReadError) -> bool:
    """Is the feed's refusal one that asking again from the same position can outlast? A 500 is
    Google's "backend error", to retry like a 503 (classified uncertain only because, for a read,
    it may also be the spreadsheet's fault); dropping the position for it would make the next round
    read every spreadsheet once more."""
    if error.error_class in (ErrorClass.QUOTA, ErrorClass.TRANSIENT):
        return True
    return error.http_status is not None and error.http_status >= 500
