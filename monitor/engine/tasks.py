"""Task records and rounds: what is queued, what is in flight, what is done.

A *round* is one pass over every configured spreadsheet: one ``check_spreadsheet`` task each, oldest
checked first. The round is persisted whole (``Round.to_dict``) at every checkpoint, so a run killed at
any instant leaves tasks that are ``pending`` (never taken), ``processing`` (taken by the dead run: the
lease is reclaimed by the next run) or finished. Nothing here does I/O or reads a clock: ``now`` comes in.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from monitor.core.timefmt import format_utc, parse_utc

PENDING, PROCESSING, DONE, FAILED = "pending", "processing", "done", "failed"
TASK_TYPE = "check_spreadsheet"

# A task whose run was killed this many times while holding it is "poison": it goes to the DLQ so it
# cannot wedge every following run (a spreadsheet so large it always exhausts memory, say).
POISON_INTERRUPTIONS = 3
# Attempt history kept per task: enough to tell "503, 503, ok" without letting a flapping sheet grow it.
HISTORY_LIMIT = 10


@dataclass
class Task:
    id: str
    target: str  # spreadsheet id
    round_id: str
    created_at: str  # UTC ISO-8601 with Z
    type: str = TASK_TYPE
    status: str = PENDING
    attempts: int = 0  # counted tries, the last success included (quota waits do not count)
    # The record's shape (SPEC 5) and the transient limit; the limit applied is per error class
    # (retry.DEFAULT_POLICIES: uncertain errors stop at 3), so this field is never consulted.
    max_attempts: int = 5
    last_error: dict | None = None
    next_attempt_at: str | None = None  # set while waiting for a retry
    interruptions: int = 0  # runs that died while this task was processing
    history: list[dict] = field(default_factory=list)

    def record_attempt(self, at: datetime, outcome: str, error: dict | None = None) -> None:
        entry = {"at": format_utc(at), "outcome": outcome}
        if error:
            entry["error"] = error
        self.history.append(entry)
        del self.history[:-HISTORY_LIMIT]

    def due_at(self) -> datetime | None:
        return parse_utc(self.next_attempt_at) if self.next_attempt_at else None

    def to_dict(self) -> dict:
        # A shallow copy is enough (the result is serialised at once) and, unlike
        # dataclasses.asdict, costs no deep copy of every history entry at every checkpoint.
        return {**vars(self), "history": list(self.history)}

    @classmethod
    def from_dict(cls, data: dict) -> Task:
        return cls(**data)


class Round:
    """The tasks of one pass, in order, with a cheap way to find the next due one.

    Fresh tasks are taken in round order through a cursor; tasks waiting for a retry sit in a heap
    keyed by their due time. Picking the next task is therefore O(log n), which keeps the runner's
    overhead flat at 5,000 spreadsheets.
    """

    def __init__(self, round_id: str, started_at: str, tasks: Iterable[Task]) -> None:
        self.id = round_id
        self.started_at = started_at
        self.tasks: dict[str, Task] = {task.id: task for task in tasks}
        self._order = list(self.tasks)
        self._cursor = 0
        self._waiting: list[tuple[str, str]] = []  # (next_attempt_at, task id); ISO strings sort as times
        for task in self.tasks.values():
            if task.status == PENDING and task.next_attempt_at:
                heapq.heappush(self._waiting, (task.next_attempt_at, task.id))

    # -- building and persisting ---------------------------------------------------------------

    @classmethod
    def build(cls, targets: Iterable[str], now: datetime, max_attempts: int = 5) -> Round:
        created = format_utc(now)
        round_id = "r" + now.strftime("%Y%m%dT%H%M%S")
        tasks = [
            Task(id=f"{round_id}-{n:05d}", target=target, round_id=round_id, created_at=created,
                 max_attempts=max_attempts)
            for n, target in enumerate(targets, start=1)
        ]
        return cls(round_id, created, tasks)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "started_at": self.started_at,
            "tasks": [self.tasks[task_id].to_dict() for task_id in self._order],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Round:
        return cls(data["id"], data["started_at"], (Task.from_dict(t) for t in data["tasks"]))

    # -- queries ---------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        counts = {PENDING: 0, PROCESSING: 0, DONE: 0, FAILED: 0}
        for task in self.tasks.values():
            counts[task.status] += 1
        return counts

    def is_complete(self) -> bool:
        return all(task.status in (DONE, FAILED) for task in self.tasks.values())

    def oldest_pending(self) -> Task | None:
        pending = [t for t in self.tasks.values() if t.status == PENDING]
        return min(pending, key=lambda t: t.created_at) if pending else None

    def next_retry_at(self) -> datetime | None:
        self._drop_stale_waiting()
        return parse_utc(self._waiting[0][0]) if self._waiting else None

    # -- taking work -------------------------------------------------------------------------------

    def next_due(self, now: datetime) -> Task | None:
        """The next pending task that may run at ``now``: retries that came due first, then fresh ones.

        Nothing changes until the caller takes the task (marks it processing or finished): a task it
        leaves (no quota yet) is offered again on the next call.
        """
        self._drop_stale_waiting()
        if self._waiting and self._waiting[0][0] <= format_utc(now):
            # Left in the heap: once taken, its entry goes stale (finished or rescheduled) and is
            # dropped then.
            return self.tasks[self._waiting[0][1]]
        # The cursor only ever skips tasks that are no longer fresh, so a fresh task handed out but
        # not taken stays under it.
        while self._cursor < len(self._order) and not self._is_fresh(self.tasks[self._order[self._cursor]]):
            self._cursor += 1
        if self._cursor < len(self._order):
            return self.tasks[self._order[self._cursor]]
        return None

    @staticmethod
    def _is_fresh(task: Task) -> bool:
        return task.status == PENDING and not task.next_attempt_at

    def schedule_retry(self, task: Task, at: datetime) -> None:
        task.status = PENDING
        task.next_attempt_at = format_utc(at)
        heapq.heappush(self._waiting, (task.next_attempt_at, task.id))

    def requeue_now(self, target: str) -> bool:
        """Make a target's task due at once (``dlq retry``); False when the round has none for it."""
        for task in self.tasks.values():
            if task.target == target:
                task.status = PENDING
                task.attempts = 0
                task.next_attempt_at = None
                self._cursor = min(self._cursor, self._order.index(task.id))
                return True
        return False

    def drop_targets(self, targets: set[str]) -> list[Task]:
        """Remove tasks of spreadsheets no longer in the config (they are dropped, not dead-lettered)."""
        dropped = [t for t in self.tasks.values() if t.target in targets]
        for task in dropped:
            del self.tasks[task.id]
        self._order = [task_id for task_id in self._order if task_id in self.tasks]
        self._cursor = 0
        self._waiting = [(due, tid) for due, tid in self._waiting if tid in self.tasks]
        heapq.heapify(self._waiting)
        return dropped

    def _drop_stale_waiting(self) -> None:
        # A heap entry goes stale when its task was finished or rescheduled after it was pushed.
        while self._waiting:
            due_text, task_id = self._waiting[0]
            task = self.tasks.get(task_id)
            if task is not None and task.status == PENDING and task.next_attempt_at == due_text:
                return
            heapq.heappop(self._waiting)

    # -- crash recovery ----------------------------------------------------------------------------

    def reclaim_abandoned(self) -> tuple[list[Task], list[Task]]:
        """Tasks left ``processing`` by a killed run go back to ``pending`` (their lease is void).

        Returns (reclaimed, poisoned): a task interrupted POISON_INTERRUPTIONS times is poisoned and
        marked failed; the caller dead-letters it.
        """
        reclaimed, poisoned = [], []
        for task in self.tasks.values():
            if task.status != PROCESSING:
                continue
            task.interruptions += 1
            if task.interruptions >= POISON_INTERRUPTIONS:
                task.status = FAILED
                task.last_error = {
                    "error_class": "poison",
                    "message": f"the run was killed {task.interruptions} times while checking it",
                }
                poisoned.append(task)
            else:
                task.status = PENDING
                reclaimed.append(task)
                if task.next_attempt_at:
                    heapq.heappush(self._waiting, (task.next_attempt_at, task.id))
        self._cursor = 0
        return reclaimed, poisoned
