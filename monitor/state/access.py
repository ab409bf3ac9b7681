"""How every process opens the runner's state: a run, an admin command, the watchdog, `status`.

- :func:`read_state` (and :func:`read_state_with_repairs`, which also says what could not be used):
  read-only and without the lock (the store only ever changes atomically, so a reader sees the
  state after some complete save), for ``status``, ``sheets``, the watchdog.
- :func:`changing_state`: holding the run lock (waiting up to ``wait`` seconds for it), for the run
  and the commands that change something. Opening reports what it had to repair, as events the
  notifier will tell people and as log lines: a state restored from its last good copy, and each
  damaged entry, which is set aside (kept under ``damaged/<key>``) while the rest loads; and a state
  its Redis lost (``StateMemoryLost``, with the alert memory set to relearn: monitor.notify.relearning).
  A state in an older layout is rewritten in the current one. All of that is saved before the caller's block
  runs, so it is told even if the block then fails; the block's own changes are saved when it ends
  normally, and not at all when it raises.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from monitor.core.logs import log_event
from monitor.engine.events import StateEntryDamaged, StateMemoryLost, StateRestored
from monitor.notify.relearning import start_relearning
from monitor.state.repository import StateRepository
from monitor.state.whole import State
from monitor.storage import RUN_LOCK, PropertyStore, RestoreReport, StateLocation, location_of

Place = StateLocation | str | Path  # a location, or the path of a state folder
# Runners sharing one state (monitor.state.shared): one of them at a time starts a round (or reclaims
# dead runs' tasks), and admin commands hold the same lock to change the state beside them; one at a
# time composes and sends the alerts.
ROUND_LOCK = "round"
NOTIFY_LOCK = "notify"


def own_lock(runner: str) -> str:
    """A runner's own run lock when runners share the state: it never overlaps itself."""
    return f"run-{runner}"


def shares_state(location: StateLocation) -> bool:
    """Do runners share this state (several at once), rather than take turns under the run lock?
    The Redis backend's do; the state folder has one runner."""
    return location.shared_writers


def admin_lock(location: StateLocation) -> str:
    """The lock an admin command holds to change the state: the run lock, or, beside runners that
    share it, the round lock (their claims then see its change: monitor.engine.sharing)."""
    return ROUND_LOCK if shares_state(location) else RUN_LOCK
# Tests turn this on: after a block that changed state, the saved state must equal the state in
# memory, or a change escaped the tracking that makes saves cheap (StateRepository.unsaved).
VERIFY_SAVES = False


def read_state(place: Place, only: Iterable[str] | None = None, runner: str | None = None) -> State | None:
    """The state as the last save left it; None when no run has written one yet. ``only`` names the
    kinds of document to load (e.g. ``("heartbeat", "runs")``), the rest is left empty; ``runner``,
    beside runners sharing the state, whose own heartbeat, run history and totals to show as the
    state's. Raises the store's StateError when neither the state nor its last good copy can be read."""
    return read_state_with_repairs(place, only, runner)[0]


def read_state_with_repairs(
    place: Place, only: Iterable[str] | None = None, runner: str | None = None
) -> tuple[State | None, RestoreReport | None]:
    """``read_state``, and what of the saved state could not be used (None when all of it could):
    a reader that shows the state (`status`) must say when it shows the last good copy."""
    location = location_of(place)
    if not location.exists():
        return None, None
    store = location.open(read_only=True)
    try:
        return StateRepository(store, runner).load(only=only), store.restore_report
    finally:
        store.close()


def run_lock_held(place: Place, name: str = RUN_LOCK) -> bool:
    """Does a process hold the run lock now (a run, or an admin command changing the state)?

    Asked by trying the lock without waiting and letting it go at once: a run that tries it in that
    instant finds it held and exits as if another run worked, and the next cron tick runs; a run
    killed by the system leaves the lock free (the kernel drops it with the process).
    """
    lock = location_of(place).lock(name)
    if not lock.acquire(timeout=0):
        return True
    lock.release()
    return False


class StateSession:
    """The state of one process that holds the run lock, and how to save it."""

    def __init__(self, store: PropertyStore, repository: StateRepository, state: State, actor: str,
                 opened_at: datetime) -> None:
        self.store = store
        self.repository = repository
        self.state = state
        self.actor = actor
        self.opened_at = opened_at

    @property
    def restored(self) -> RestoreReport | None:
        return self.store.restore_report

    def save(self) -> None:
        """Write what changed since the last save (a checkpoint). A document read since then and
        found damaged (some are read when first used: ``StateRepository.load``) is set aside and told
        in the same write, as one found at the opening is, dated to the opening."""
        if self.state.damaged:
            _set_aside(self.repository, self.state, self.actor, self.opened_at)
        self.repository.save(self.state)


@contextmanager
def changing_state(
    place: Place, *, actor: str, now: datetime, wait: float = 0.0, lock: str = RUN_LOCK,
    runner: str | None = None,
) -> Iterator[StateSession | None]:
    """Hold the lock ``lock`` (the run lock unless said otherwise) and yield the state to change; None
    when another process kept the lock for ``wait`` seconds (nothing was opened). ``actor`` is the run
    id, or "admin-<command>", that events about repairs name. ``runner``: a runner sharing the state
    with others (monitor.state.shared), whose own documents are kept under its name; its writes are
    fenced by ``lock``, its own. Raises the store's StateError if the state cannot be opened at all."""
    location = location_of(place)
    held = location.lock(lock)
    if not held.acquire(timeout=wait):
        yield None
        return
    # The lock whose token this process's writes must still hold (a Redis location checks it).
    location.fence = lock
    try:
        # Opened only once the lock is held: opening to write already writes (clean-up, compaction).
        store = location.open()
        try:
            # Beside runners sharing the state, a process that is none of them (an admin command)
            # leaves their own documents alone.
            repository = StateRepository(store, "" if runner is None and location.shared_writers else runner)
            state = repository.load()
            _repair(repository, state, store, actor, now)
            session = StateSession(store, repository, state, actor, now)
            yield session
            session.save()
            if VERIFY_SAVES:
                unsaved = repository.unsaved(state)
                assert not unsaved, f"changes that escaped the tracking (never saved): {unsaved[:10]}"
        finally:
            store.close()
    finally:
        held.release()


def _repair(repository: StateRepository, state: State, store: PropertyStore, actor: str,
            now: datetime) -> None:
    """Record and save what opening had to repair, before anything else happens."""
    restored = store.restore_report
    lost = store.memory_lost is not None
    if lost:
        # Everything is empty: told once, and the alert memory relearns what fails as one list
        # (monitor.notify.relearning) rather than telling each known problem as new.
        log_event("state_memory_lost", logging.ERROR, generation=store.memory_lost)
        state.events.add(StateMemoryLost(at=now, run_id=actor, generation=store.memory_lost))
        state.alerts = start_relearning(state.alerts, now)
    if restored is not None:
        log_event("state_restored", logging.ERROR, reason=restored.reason)
        state.events.add(StateRestored(at=now, run_id=actor, reason=restored.reason))
    _set_aside(repository, state, actor, now)
    if restored is None and not lost and repository.found_empty:
        # A fresh store: nothing to tell, so nothing is written before the block ends normally. A
        # command refused on a fresh install leaves no state behind (`status` still says "No run
        # yet", the watchdog "state missing").
        return
    repository.save(state)


def _set_aside(repository: StateRepository, state: State, actor: str, now: datetime) -> None:
    """Each damaged entry found so far set aside by the next save, told as an event and a log line."""
    for damage, target in repository.set_aside(state.damaged, now):
        log_event("state_entry_damaged", logging.ERROR, key=damage.key, problem=damage.problem,
                  kept_as=target)
        state.events.add(StateEntryDamaged(at=now, run_id=actor, key=damage.key, problem=damage.problem,
                                           set_aside_as=target))
    state.damaged = []
