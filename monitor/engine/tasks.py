"""Task records and rounds: what is queued, what is in flight, what is done.

A *round* is one pass over every configured spreadsheet: one task each, in the order the round was
built (least recently checked first). The round's :class:`RoundInfo` lists that order; a task that is
still *fresh* (pending, never tried) is implied by it and not stored at all, so starting a round of
20,000 spreadsheets writes one document, not 20,000. A task is stored, as a document of its own, once
it changes, so a checkpoint writes the tasks that changed. A run killed at any instant leaves tasks
that are ``pending``, ``processing`` (taken by the dead run: the next run reclaims the lease) or
finished. Every change of a task goes through a :class:`Round` method, which records it for the next
save. Nothing here does I/O or reads a clock: ``now`` comes in.

The poison guard: a task the run was killed *alone* with (the only read in flight)
POISON_INTERRUPTIONS times is dead-lettered, so it cannot wedge every following run. A kill with
several reads in flight blames none of them: each goes back to the queue *quarantined*, and is read
later on its own, after the round's other due work, where a second kill does point at it. Even alone,
a kill counts only when the read could be its cause: its answer was overdue (the run marks that on
the task, ``monitor.engine.overdue``), or its spreadsheet never answered at all. A merely slow
spreadsheet killed before its answer was due is quarantined again, never counted, whenever kills land.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from enum import StrEnum

from monitor.core.errors import POISON, ErrorInfo
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import Documents, Interned, document


class TaskStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"  # leased by a run; a run that finds it so at start reclaims it
    DONE = "done"
    FAILED = "failed"  # dead-lettered


PENDING, PROCESSING, DONE, FAILED = TaskStatus
FINISHED = frozenset({DONE, FAILED})

# A task whose run was killed this many times while it alone was in flight is "poison": it goes to the
# DLQ so it cannot wedge every following run (a spreadsheet so large it always exhausts memory, say).
POISON_INTERRUPTIONS = 3
# Attempt history kept per task: enough to tell "503, 503, ok" without letting a flapping sheet grow it.
HISTORY_LIMIT = 10


@document
class Attempt:
    """One try of a task: ``outcome`` is "ok", an error class, or "skipped_<reason>"."""

    at: UtcTime
    outcome: str
    error: ErrorInfo | None = None


@document(frozen=False)
class Task:
    """Check one spreadsheet (``target``) in one round. Changed only by :class:`Round`."""

    id: str
    target: Interned  # spreadsheet id
    round_id: Interned
    created_at: UtcTime
    status: TaskStatus = PENDING
    attempts: int = 0  # counted tries, the last success included (quota waits do not count)
    last_error: ErrorInfo | None = None
    next_attempt_at: UtcTime | None = None  # set while waiting for a retry
    interruptions: int = 0  # runs that died while this task alone was processing, to its blame
    # When a run that died with it in flight was found: it is read alone, after the other due work,
    # suspects in the order they became suspects.
    quarantined_at: UtcTime | None = None
    history: tuple[Attempt, ...] = ()
    # The run that leased it (set while ``processing``): runners sharing a state blame a kill by the
    # dead run's own reads in flight, which this names (monitor.engine.sharing).
    run_id: str | None = None
    # Its read in flight has been out longer than its spreadsheet's answers take: a run killed now
    # may have been killed by it (monitor.engine.overdue). Only while ``processing``.
    overdue: bool = False

    @property
    def quarantined(self) -> bool:
        return self.quarantined_at is not None

    @property
    def fresh(self) -> bool:
        """Pending and never tried: what the round's list of targets implies, so it need not be stored."""
        return (self.status is PENDING and not self.attempts and self.last_error is None
                and self.next_attempt_at is None and not self.interruptions and not self.quarantined
                and not self.history)


@document
class RoundInfo:
    id: str
    started_at: UtcTime
    # The round's spreadsheets in order; task n (1-based) checks targets[n - 1]. A spreadsheet removed
    # from the config leaves its place empty (None), so the others' task ids do not change.
    targets: tuple[Interned | None, ...] = ()
    behind_reported: bool = False  # "falling behind" was told for this round (once per round)
    unread: int = 0  # spreadsheets judged without a read: Drive reported no change (engine.changes)


MAX_TICK_SLACK = timedelta(seconds=30)


def tick_slack(interval: timedelta) -> timedelta:
    """How much sooner than ``interval`` after a round started the next one may start. Cron starts
    runs one interval apart, but a round starts after its run's start-up (imports, the state, the
    first request), which varies by a second or more from run to run: without this, about every other
    tick would find its round begun a moment less than an interval ago and do nothing, and a change
    would wait two intervals to be read. A tenth of the interval, at most 30 s: far below a 5-minute
    tick, and it never lets a round of a longer ``round_interval`` start a cron tick early."""
    return min(interval / 10, MAX_TICK_SLACK)


def task_id(round_id: str, number: int) -> str:
    """The id of the ``number``-th task (1-based) of a round."""
    return f"{round_id}-{number:06d}"


def task_number(task_id_: str) -> int | None:
    """The inverse of :func:`task_id`; None for an id of another shape."""
    _, _, number = task_id_.rpartition("-")
    return int(number) if number.isdigit() else None


class Round:
    """The tasks of one pass, in order, with a cheap way to find the next due one.

    Fresh tasks are taken in round order through a cursor; tasks waiting for a retry sit in a heap
    keyed by their due time; counts by status are kept as tasks move. Every query the run makes per
    step is O(log n) or better, which keeps the runner's overhead flat at 20,000 spreadsheets.
    """

    def __init__(self, info: RoundInfo, stored: Iterable[Task] = ()) -> None:
        """The round ``info`` describes: its fresh tasks, with the ``stored`` ones (tasks that changed
        since the round began, already checked to belong to it) in their places.

        A fresh task is made when first asked for (``Documents.hold_unread``, its "text" its target):
        a new round of 20,000 spreadsheets made 20,000 of them before its first read, and its first
        save looked at each to find them all fresh, for a run that reads a few hundred."""
        self.info = info
        by_id = {task.id: task for task in stored}
        self._order: list[str] = []  # task ids in target order: the round's order
        self._by_target: dict[str, str] = {}
        known: dict[str, Task] = {}
        fresh: dict[str, str] = {}  # task id -> target, for the tasks not stored
        for number, target in enumerate(info.targets, start=1):
            if target is not None:
                id = task_id(info.id, number)
                self._order.append(id)
                self._by_target[target] = id
                task = by_id.get(id)
                if task is None:
                    fresh[id] = target
                else:
                    known[id] = task
        self.tasks: Documents[Task] = Documents(known)
        self.tasks.hold_unread(fresh, self._fresh_task)
        self._info_changed = False
        self._first: deque[str] = deque()  # read before the cursor's: see read_first
        self._cursor = 0
        self._waiting: list[tuple[datetime, str]] = []  # (next_attempt_at, task id)
        self._counts = dict.fromkeys(TaskStatus, 0)
        self._counts[PENDING] = len(fresh)
        suspects = []
        for task in known.values():
            self._counts[task.status] += 1
            if task.status is PENDING and task.next_attempt_at:
                heapq.heappush(self._waiting, (task.next_attempt_at, task.id))
            elif task.status is PENDING and task.quarantined:
                suspects.append(task)
        # Quarantined task ids, read one at a time in this order: the longest suspected first, so a
        # task that was just in flight alone again when a run died waits behind the others.
        self._quarantine = deque(task.id for task in sorted(suspects, key=lambda task: task.quarantined_at))

    def _fresh_task(self, id: str, target: str) -> Task:
        return Task(id, target, self.info.id, self.info.started_at)

    @classmethod
    def build(cls, targets: Iterable[str], now: datetime, unread: int = 0) -> Round:
        rnd = cls(RoundInfo("r" + now.strftime("%Y%m%dT%H%M%S"), now, tuple(targets), unread=unread))
        rnd._info_changed = True  # the one document a new round writes: its fresh tasks are implied
        return rnd

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def started_at(self) -> datetime:
        return self.info.started_at

    # -- queries -----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._order)

    def counts(self) -> dict[TaskStatus, int]:
        return dict(self._counts)

    def finished(self) -> int:
        return self._counts[DONE] + self._counts[FAILED]

    def is_complete(self) -> bool:
        return self.finished() == len(self._order)

    def continues(self, now: datetime, interval: timedelta) -> bool:
        """Will the next run keep working on this round (rather than start a new one)? Yes while it
        is unfinished, and until ``interval`` has passed since it started, less :func:`tick_slack`."""
        return not self.is_complete() or now - self.started_at < interval - tick_slack(interval)

    def oldest_pending(self) -> Task | None:
        pending = [task for id in self._order if (task := self.tasks[id]).status is PENDING]
        return min(pending, key=lambda task: task.created_at) if pending else None

    def next_retry_at(self) -> datetime | None:
        self._drop_stale_waiting()
        return self._waiting[0][0] if self._waiting else None

    def next_due(self, now: datetime) -> Task | None:
        """The next pending task that may run at ``now``: retries that came due first, then fresh ones
        (quarantined tasks are offered by :meth:`next_quarantined` only).

        Nothing changes until the caller takes the task (:meth:`start` or :meth:`skip`): a task it
        leaves (no quota yet) is offered again on the next call.
        """
        self._drop_stale_waiting()
        if self._waiting and self._waiting[0][0] <= now:
            # Left in the heap: once taken, its entry goes stale and is dropped then.
            return self.tasks[self._waiting[0][1]]
        while self._first:  # edits Drive reported, in the order it reported them
            first = self.tasks.get(self._first[0])
            if first is not None and self._is_fresh(first):
                return first
            self._first.popleft()  # read since, waiting for a retry now, or dropped
        # The cursor only ever skips tasks that are no longer fresh, so a fresh task handed out but
        # not taken stays under it.
        order = self._order
        while self._cursor < len(order) and not self._is_fresh(self.tasks[order[self._cursor]]):
            self._cursor += 1
        return self.tasks[order[self._cursor]] if self._cursor < len(order) else None

    def next_quarantined(self) -> Task | None:
        """The next quarantined task, for the caller to read with nothing else in flight."""
        while self._quarantine:
            task = self.tasks.get(self._quarantine[0])
            if task is not None and task.status is PENDING and task.quarantined and not task.next_attempt_at:
                return task
            self._quarantine.popleft()  # stale: finished, rescheduled or dropped since it was queued
        return None

    @staticmethod
    def _is_fresh(task: Task) -> bool:
        return task.status is PENDING and not task.next_attempt_at and not task.quarantined

    # -- a task's life -------------------------------------------------------------------------------

    def start(self, task: Task, run_id: str | None = None) -> None:
        """Lease the task to this run: it is ``processing`` until it ends one way or another."""
        task.run_id = run_id
        self._set_status(task, PROCESSING)

    def mark_overdue(self, task: Task) -> None:
        """Its read in flight is out longer than its answers take: a kill from now on counts."""
        task.overdue = True
        self.tasks.touch(task.id)

    def adopt(self, stored: Task) -> None:
        """Take ``stored`` (what another runner saved of this task) in place of the one held here, as
        saved: it is not written back. Its place in the queues follows its status."""
        held = self.tasks.get(stored.id)
        if held is None:
            return
        self._counts[held.status] -= 1
        self._counts[stored.status] += 1
        self.tasks.load(stored.id, stored)
        if stored.status is PENDING and stored.next_attempt_at:
            heapq.heappush(self._waiting, (stored.next_attempt_at, stored.id))
        elif stored.status is PENDING and stored.quarantined:
            self._quarantine.append(stored.id)
        elif stored.status is PENDING:
            self._cursor = min(self._cursor, self._order.index(stored.id))

    def succeed(self, task: Task, now: datetime) -> None:
        task.attempts += 1
        task.next_attempt_at = None
        self._record(task, now, "ok")
        self._set_status(task, DONE)

    def skip(self, task: Task, now: datetime, reason: str) -> None:
        """Done for this round without a read (muted, or its breaker is open)."""
        self._record(task, now, f"skipped_{reason}")
        self._set_status(task, DONE)

    def record_failure(self, task: Task, now: datetime, error: ErrorInfo, attempts: int) -> None:
        """A try failed: remember it (``attempts`` as the retry policy counted it); then call one of
        :meth:`retry_at`, :meth:`fail` or :meth:`give_up_for_round`."""
        task.attempts = attempts
        task.last_error = error
        self._record(task, now, error.error_class, error)

    def record_quota_wait(self, task: Task, now: datetime, error: ErrorInfo, at: datetime) -> None:
        """Google refused for quota: not the spreadsheet's fault, so no attempt is counted."""
        self._record(task, now, error.error_class, error)
        self.retry_at(task, at)

    def retry_at(self, task: Task, at: datetime) -> None:
        task.next_attempt_at = at
        self._set_status(task, PENDING)
        heapq.heappush(self._waiting, (at, task.id))

    def release(self, task: Task) -> None:
        """Give back a task whose read was still in flight when the run had to end, or whose request
        only read its spreadsheet's time zone (the values read follows): it is pending again, as it
        was, and no interruption or attempt is counted."""
        self._set_status(task, PENDING)
        if task.next_attempt_at:  # a retry: back in line by its due time
            heapq.heappush(self._waiting, (task.next_attempt_at, task.id))
        elif task.quarantined:
            self._quarantine.append(task.id)
        else:  # fresh again, and perhaps behind the cursor
            self._cursor = min(self._cursor, self._order.index(task.id))

    def fail(self, task: Task) -> None:
        """Dead-lettered: finished for this round."""
        task.next_attempt_at = None
        self._set_status(task, FAILED)

    def give_up_for_round(self, task: Task) -> None:
        """Attempts remain but its breaker now guards the spreadsheet: the next round probes it."""
        self._set_status(task, DONE)

    def requeue_now(self, target: str) -> bool:
        """Make a target's task due at once with a fresh start (``dlq retry``); False when the round
        has none for it."""
        task = self.tasks.get(self._by_target.get(target, ""))
        if task is not None:
            task.attempts = 0
            task.interruptions = 0  # an admin's retry is a fresh start for the poison guard too
            task.quarantined_at = None
            task.next_attempt_at = None
            self._set_status(task, PENDING)
            self._cursor = min(self._cursor, self._order.index(task.id))
            return True
        return False

    def read_first(self, target: str, now: datetime) -> bool:
        """Drive reported ``target`` changed while the round goes on: its read goes next, ahead of the
        round's routine reads. A task done this round is read again (a fresh start for its attempts:
        its last read worked; its poison guard's count stays); a spreadsheet the round judged without a
        read gets a task of its own. A task in flight, waiting for a retry, quarantined or dead-lettered
        is left as it is: its own next read comes anyway. False when nothing was queued."""
        task = self.tasks.get(self._by_target.get(target, ""))
        if task is None:
            number = len(self.info.targets) + 1
            self.info = replace(self.info, targets=(*self.info.targets, target),
                                unread=max(0, self.info.unread - 1))
            self._info_changed = True
            task = Task(task_id(self.id, number), target, self.id, now)
            self.tasks[task.id] = task
            self._by_target[target] = task.id
            self._counts[PENDING] += 1
            self._order.append(task.id)
        elif task.status is DONE:
            task.attempts, task.last_error, task.next_attempt_at = 0, None, None
            self._set_status(task, PENDING)
        elif not self._is_fresh(task):
            return False
        self._first.append(task.id)
        return True

    def drop_targets(self, targets: set[str]) -> list[Task]:
        """Remove tasks of spreadsheets no longer in the config (they are dropped, not dead-lettered)."""
        ids = {self._by_target[target] for target in targets if target in self._by_target}
        dropped = [self.tasks[id] for id in self._order if id in ids]
        for task in dropped:
            del self.tasks[task.id]
            del self._by_target[task.target]
            self._counts[task.status] -= 1
        self.info = replace(self.info, targets=tuple(None if target in targets else target
                                                     for target in self.info.targets))
        self._info_changed = True
        self._order = [task_id for task_id in self._order if task_id not in ids]
        self._cursor = 0
        self._waiting = [(due, task_id) for due, task_id in self._waiting if task_id not in ids]
        heapq.heapify(self._waiting)
        return dropped

    def mark_behind_reported(self) -> None:
        self.info = replace(self.info, behind_reported=True)
        self._info_changed = True

    # -- crash recovery ----------------------------------------------------------------------------

    def reclaim_abandoned(self, now: datetime, dead: Callable[[str | None], bool] | None = None,
                          answered: Callable[[str], bool] | None = None) -> tuple[list[Task], list[Task]]:
        """Tasks left ``processing`` by a killed run go back to ``pending``, quarantined (their lease
        is void). ``dead`` says whether a run id's lease is gone (None: every other run is dead, as
        for one runner, which holds the run lock); a live run's tasks stay as they are.

        Only a task that was alone in flight in its run counts the interruption against it, and only
        when its read was overdue or ``answered`` says its spreadsheet never completed a read (None:
        none did); at POISON_INTERRUPTIONS it is poisoned and marked failed, and the caller
        dead-letters it. Returns (reclaimed, poisoned).
        """
        by_run: dict[str | None, list[Task]] = {}
        # In the round's order; a task not made yet (see __init__) is fresh, so not processing.
        processing = sorted((task for _, task in self.tasks.read_items() if task.status is PROCESSING),
                            key=lambda task: task_number(task.id) or 0)
        for task in processing:
            if dead is None or dead(task.run_id):
                # One runner: every task it finds processing was the last run's, whatever run id a
                # release before run ids recorded; several: each dead run's own reads in flight.
                by_run.setdefault(None if dead is None else task.run_id, []).append(task)
        reclaimed, poisoned = [], []
        for abandoned in by_run.values():
            self._reclaim(abandoned, now, reclaimed, poisoned, answered)
        self._cursor = 0
        return reclaimed, poisoned

    def _reclaim(self, abandoned: list[Task], now: datetime, reclaimed: list[Task], poisoned: list[Task],
                 answered: Callable[[str], bool] | None) -> None:
        for task in abandoned:
            task.run_id = None
            # Alone, it may have killed the run: by hanging past its answer's time, or by an answer
            # that kills the process. A spreadsheet that answers, killed before its answer was due,
            # did neither; one that never answered cannot show it.
            if len(abandoned) == 1 and (task.overdue or answered is None or not answered(task.target)):
                task.interruptions += 1
            if task.interruptions >= POISON_INTERRUPTIONS:
                task.last_error = ErrorInfo(
                    POISON, f"the run was killed {task.interruptions} times while checking it alone"
                )
                task.quarantined_at = None
                self._set_status(task, FAILED)
                poisoned.append(task)
                continue
            task.quarantined_at = now
            task.next_attempt_at = None  # a retry that was in flight was due: now it waits its turn alone
            self._set_status(task, PENDING)
            self._quarantine.append(task.id)
            reclaimed.append(task)

    # -- saving ------------------------------------------------------------------------------------

    def pending_changes(self) -> tuple[RoundInfo | None, dict[str, Task], set[str]]:
        """(the info if it changed, changed tasks by id, removed task ids) since the last save."""
        changed, removed = self.tasks.pending_changes()
        return (self.info if self._info_changed else None), changed, removed

    def targets(self) -> Collection[str]:
        """The spreadsheets the round has a task for."""
        return self._by_target.keys()

    def mark_all_changed(self) -> None:
        """A new round replaces every stored task: each task made so far is to be written (those still
        fresh are not: the round's document implies them), the others are fresh by construction."""
        for id, _ in list(self.tasks.read_items()):
            self.tasks.touch(id)

    def mark_saved(self) -> None:
        self.tasks.mark_saved()
        self._info_changed = False

    # -- internals ---------------------------------------------------------------------------------

    def _set_status(self, task: Task, status: TaskStatus) -> None:
        self._counts[task.status] -= 1
        self._counts[status] += 1
        task.status = status
        if status is not PROCESSING:
            task.run_id = None  # the lease ends with the processing
            task.overdue = False
        self.tasks.touch(task.id)

    def _record(self, task: Task, at: datetime, outcome: str, error: ErrorInfo | None = None) -> None:
        task.quarantined_at = None  # it was read and the run lived: whatever comes next, it is not poison
        task.history = (*task.history, Attempt(at, outcome, error))[-HISTORY_LIMIT:]
        self.tasks.touch(task.id)

    def _drop_stale_waiting(self) -> None:
        # A heap entry goes stale when its task was finished or rescheduled after it was pushed.
        while self._waiting:
            due, task_id = self._waiting[0]
            task = self.tasks.get(task_id)
            if task is not None and task.status is PENDING and task.next_attempt_at == due:
                return
            heapq.heappop(self._waiting)
