"""Runners sharing one state on Redis: claims, turns and leases (the engine's ``Sharing``).

What each does and why is monitor.engine.sharing's docstring; this is how, on the Redis backend:

- a claim is one compare-and-set script (monitor.storage.redis_shared): the task document is
  replaced by its leased version only if Redis still holds the text this runner last saw of it and
  the round is still the one it works on; the spreadsheet's documents are read back in the same step.
- a turn holds the lock ``round`` (a short lease, renewed while held), re-reads the whole hash, and
  puts what it read in the runner's memory: the round and its tasks, every spreadsheet's documents,
  the events, the outbox and alert memory, the change feed. This runner's own documents (heartbeat,
  run history, quota log) are its alone and stay. Everything the runner changed is saved first.
- a run's lease is the lock ``live-<run id>``, ``[state] lease`` long (10 s) and renewed every third
  of it while the run's process lives. Renewed rather than sized to a read's timeout: a run killed
  with several reads in flight must lose them all at once, or a task whose lease ran out first would
  look like the dead run's only read and be blamed alone. Short, because another runner can take
  those reads only once it has expired; long enough for a process stalled a few seconds on a loaded
  machine.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from monitor.core.logs import log_event
from monitor.engine.sharing import Claim
from monitor.engine.tasks import Task
from monitor.state.access import NOTIFY_LOCK, ROUND_LOCK, StateSession, own_lock
from monitor.state.repository import StateRepository
from monitor.state.schema import BREAKER, DLQ, HEALTH, HISTORY, MUTE, ROUND, TASK, DocumentError
from monitor.state.whole import State
from monitor.storage.redis_shared import GUARD_CHANGED, SET, alive, compare_and_set, refresh
from monitor.storage.redis_store import RedisLocation, RedisLock

# How long a runner waits for another's turn: a turn is a re-read and, once a round, asking Drive
# what changed (a request of its own, a few seconds at worst), or a killed runner's lease to expire.
TURN_WAIT_SECONDS = 15.0
# A spreadsheet's documents a claim reads back, and where they go in the state.
_SHEET_DOCUMENTS = (("health", HEALTH), ("breakers", BREAKER), ("dlq", DLQ), ("history", HISTORY),
                    ("mutes", MUTE))
# What a turn takes from what it read: all but this runner's own documents.
_ADOPTED_FAMILIES = ("health", "breakers", "dlq", "mutes", "history", "incidents")
_ADOPTED_SINGLES = ("round", "api", "retry_first", "feed", "credentials", "outbox", "alerts",
                    "conversation", "maintenance", "folders")


def live_lock(run_id: str) -> str:
    """The lock a run holds while it lives: its lease on the tasks it claims."""
    return f"live-{run_id}"


def prepare(location: RedisLocation, runner: str, lease: float) -> None:
    """Before a runner takes its own lock: the locks runners share, and its own, have the runners'
    lease (a killed runner's next run starts ``lease`` later, not after the run lock's 30 s)."""
    for name in (own_lock(runner), ROUND_LOCK, NOTIFY_LOCK):
        location.leases[name] = lease


class SharedState:
    """``Sharing`` on Redis for the run ``run_id`` of ``runner`` (see the module docstring)."""

    shared = True

    def __init__(self, session: StateSession, location: RedisLocation, runner: str, run_id: str,
                 lease: float) -> None:
        self.session = session
        self.location = location
        self.runner = runner
        self.run_id = run_id
        self.claims_refused = 0
        self._lease: RedisLock = location.lock(live_lock(run_id), lease=lease)
        self._lease.acquire(timeout=0)  # a run id is new: nobody else holds its lease
        session.state.events.suffix = runner

    def close(self) -> None:
        """The run is over: its lease goes now (a killed run's expires by itself)."""
        self._lease.release()

    # -- claims ----------------------------------------------------------------------------------

    def claim(self, task: Task, leased: Task) -> Claim:
        state, store = self.session.state, self.session.store
        rnd = state.round
        reads = [kind.key(task.target) for _, kind in _SHEET_DOCUMENTS]
        # The round's document starts with its id (RoundInfo's first field): the guard compares that.
        round_start = '{"id":' + json.dumps(rnd.id)
        swap = compare_and_set(store, TASK.key(task.id), TASK.encode(leased),
                               guard=(ROUND.key(), round_start), read=reads)
        if swap.status == GUARD_CHANGED:
            return Claim.ROUND_GONE
        for attribute, kind in _SHEET_DOCUMENTS:
            _hold(getattr(state, attribute), kind, task.target, swap.read.get(kind.key(task.target)))
        if swap.status == SET:
            self.session.repository.note_stored(TASK.key(task.id))
            return Claim.GRANTED
        self.claims_refused += 1
        stored = _decoded(TASK, swap.stored, TASK.key(task.id))
        if stored is not None:
            rnd.adopt(stored)
        return Claim.TAKEN

    # -- turns -----------------------------------------------------------------------------------

    def turn(self) -> AbstractContextManager[bool]:
        return self.holding(ROUND_LOCK, TURN_WAIT_SECONDS)

    def notifying(self, wait: float) -> AbstractContextManager[bool]:
        """Hold the notify lock (up to ``wait`` seconds) with the state re-read: the holder composes
        from every runner's events and the alert memory as saved, and sends, alone."""
        return self.holding(NOTIFY_LOCK, wait)

    @contextmanager
    def holding(self, name: str, wait: float) -> Iterator[bool]:
        """Hold the lock ``name`` with the state re-read (False: another kept it ``wait`` seconds)."""
        self.session.save()  # what this runner changed is in Redis before it reads the others'
        lock = self.location.lock(name)
        if not lock.acquire(timeout=wait):
            log_event("turn_missed", logging.WARNING, runner=self.runner, lock=lock.describe())
            yield False
            return
        try:
            self._reread()
            yield True
            self.session.save()  # before the lock goes: the next turn reads what this one did
        finally:
            lock.release()

    def _reread(self) -> None:
        store, state = self.session.store, self.session.state
        refresh(store)
        repository = StateRepository(store, self.runner)
        # A metric history is read when first used, after it is taken into this runner's state: one
        # found damaged then is this session's to set aside and tell (StateSession.save).
        fresh = repository.load(damage_to=state)
        self.session.repository.adopt_task_keys(repository)
        for attribute in _ADOPTED_FAMILIES:
            setattr(state, attribute, getattr(fresh, attribute))
        for attribute in _ADOPTED_SINGLES:
            setattr(state, attribute, getattr(fresh, attribute))
        fresh.events.suffix = self.runner
        state.events = fresh.events
        state.changed_singles.clear()  # as read: everything of this runner's was saved first
        if isinstance(state, State):
            state.runner_heartbeats, state.runner_runs = fresh.runner_heartbeats, fresh.runner_runs

    def dead(self, run_id: str | None) -> bool:
        if run_id is None or run_id == self.run_id:
            return run_id is None
        return not alive(self.location, [live_lock(run_id)])


def _hold(documents, kind, id: str, raw: str | None) -> None:
    """Put what Redis holds of one document in memory, as saved (None: there is none), unless this
    runner changed it since its last save: its own change is the newer (a time zone just learnt)."""
    key = kind.key(id)
    if documents.changed(id):
        return
    if raw is None:
        documents.load(id, None)
        return
    document = _decoded(kind, raw, key)
    if document is not None:
        documents.load(id, document)


def _decoded(kind, raw: str | None, key: str):
    if raw is None:
        return None
    try:
        return kind.decode(raw)
    except DocumentError as exc:
        # Another runner's save, or a release's that wrote it differently: the next writer that
        # opens the state sets it aside; this one goes on with what it holds.
        log_event("state_entry_unreadable", logging.WARNING, key=key, problem=str(exc))
        return None
