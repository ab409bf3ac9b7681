"""One watchdog pass: read the runner's heartbeat, judge it, remember, tell people, ping.

I/O around the pure ``judge`` and ``memory``. The contract that keeps it out of the runner's way:

- the runner's state is read without the run lock (``monitor.state.read_state``): the runner's store
  only ever changes atomically, so a reader sees the state after some complete save, never a mix;
- the watchdog's own memory and outbox live in their own store (``monitor.watchdog.store``), written
  only by the holder of the ``watchdog`` lock (two overlapping passes skip, never the run lock);
- messages are composed into the outbox and saved before any is sent, so a Telegram outage or a
  crash loses nothing; the next pass sends what is left, oldest first;
- nothing here imports gspread or google-auth: the watchdog must work when the Google stack is what
  broke;
- a state folder this user cannot read (another owner's, of mode 0700) or write (another owner, a
  read-only filesystem, a full disk) is judged from a look at the folder, since the runs, which stop
  at their lock or their first save, cannot say it; the watchdog's own memory then lives in a private
  folder elsewhere (``store.fallback_dir``) until the state folder works again, so the outage is
  still told once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from monitor.core.logs import log_event
from monitor.core.timefmt import format_utc
from monitor.notify.destinations import all_halts
from monitor.notify.documents import Outbox
from monitor.notify.heartbeat_ping import failure_url, ping_heartbeat
from monitor.notify.outbox import DeliveryResult, deliver, enqueue
from monitor.notify.telegram import Sender
from monitor.state import read_state
from monitor.storage import RUN_LOCK, FileLocation, StateError, StateLocation, StateWriteError, location_of
from monitor.storage.writability import MIN_FREE_BYTES, folder_problem, read_problem
from monitor.watchdog import store as watchdog_store
from monitor.watchdog.judge import (
    ConfigTrouble,
    RunnerReading,
    Verdict,
    WatchdogSettings,
    judge_runner,
)
from monitor.watchdog.outages import OUTAGE_KEYS, advance

# Sends per pass: an alert, a reminder or a recovery is one message; a backlog after a long
# Telegram outage drains over a few passes rather than holding cron for minutes.
SEND_BUDGET = 10


@dataclass
class PassReport:
    skipped: bool = False  # another watchdog pass held the watchdog lock
    verdict: Verdict | None = None
    said: str | None = None  # alert | reminder | recovered | None
    results: list[DeliveryResult] = field(default_factory=list)
    undelivered: int = 0  # messages still waiting in the watchdog's outbox
    pinged: bool | None = None  # None: no heartbeat_url, or the verdict was not healthy
    failure_pinged: bool | None = None  # the failure endpoint, on an unhealthy verdict; None: not pinged
    messages: tuple[str, ...] = ()  # what this pass decided to tell people (HTML), for printing
    kept_in: Path | None = None  # the folder of the watchdog's memory and outbox in this pass

    @property
    def delivery_failed(self) -> bool:
        """A message this watchdog owes people was refused or could not reach Telegram in this pass:
        its job is not done. Messages left only because the pass's send budget ran out are not a
        failure; the next pass sends them."""
        return any(result.outcome != "sent" for result in self.results)


def read_runner(state_dir: Path, runner: StateLocation | None = None) -> RunnerReading:
    """What the runner's state says of the runs, read without any lock, and whether a run could save.

    ``runner``: where the runner's state lives when it is not the folder ``state_dir`` (a Redis); a
    Redis that does not answer makes the state unreadable, which is what the runs see too.
    """
    on_disk = runner is None or isinstance(runner, FileLocation)
    if on_disk:
        # The runs, as this same user, stop at the same place: nothing else can be known behind it.
        shut_out = read_problem(Path(state_dir), FileLocation(state_dir).paths().files)
        if shut_out is not None:
            return RunnerReading(exists=True, readable=False, error=shut_out, inaccessible=shut_out)
    unwritable = runner_folder_problem(Path(state_dir)) if on_disk else None
    try:
        state = read_state(runner or state_dir,
                           only=("heartbeat", "runs", "outbox", "runner_heartbeat", "runner_runs"))
    except StateError as exc:
        return RunnerReading(exists=True, readable=False, error=str(exc), unwritable=unwritable)
    if state is None:
        return RunnerReading(exists=False, unwritable=unwritable, missing=_missing_on_redis(runner))
    runners = {}
    for name in state.runner_heartbeats.keys() | state.runner_runs.keys():
        history = state.runner_runs.get(name)
        runners[name] = (state.runner_heartbeats.get(name), history.runs if history else ())
    return RunnerReading(True, True, state.heartbeat, state.runs.runs, None, dict(state.outbox.migrations),
                         unwritable, all_halts(state.outbox), runners=runners)


def _missing_on_redis(runner: StateLocation | None) -> str | None:
    """Why a Redis holds no state: lost, when this host remembers one there (None for a folder)."""
    generations = getattr(runner, "generations", None)  # a RedisLocation's (monitor.storage.generations)
    if generations is None:
        return None
    lost = generations.remembered()
    if lost is None:
        return f"no state on {runner.describe()}: no run has saved there yet"
    return (f"the state on {runner.describe()} is gone (generation {lost} is missing): Redis lost its data,"
            " restarted without persistence or flushed. The next run starts afresh and says what fails in"
            " one list; turn on appendonly in Redis")


def runner_folder_problem(state_dir: Path) -> str | None:
    """What would stop a run (as this user) from saving in ``state_dir``, or None (``state_dir``
    readable: ``read_problem`` says None)."""
    paths = FileLocation(state_dir).paths()
    snapshot = paths.snapshot.stat().st_size if paths.snapshot.exists() else 0
    return folder_problem(state_dir, (*paths.files, paths.lock(RUN_LOCK)),
                          needed_bytes=snapshot + MIN_FREE_BYTES)


def watchdog_pass(
    state_dir: Path,
    settings: WatchdogSettings,
    make_sender: Callable[[Outbox], Sender],
    now: datetime,
    *,
    heartbeat_url: str | None = None,
    ping: Callable[[str], bool] = ping_heartbeat,
    send_budget: int = SEND_BUDGET,
    config: ConfigTrouble | None = None,
    runner: StateLocation | None = None,
) -> PassReport:
    """Judge the runner once, record the alert memory, deliver what is owed, ping when healthy.

    ``make_sender(outbox)`` builds the sender, following the chat migrations the watchdog's outbox
    (with the runner's added) remembers. ``config``: the monitor's config problems, when it does not
    load (the verdict is then ``config_broken``, and ``heartbeat_url`` gets a failure ping).
    ``runner``: the runner's state when not in ``state_dir`` (``[state] backend = "redis"``); the
    watchdog's own memory stays in ``state_dir`` all the same, so it can tell of a Redis down. Raises
    ``StateError`` only if the watchdog's own store cannot be written; everything else is reported in
    the returned ``PassReport``.
    """
    args = (Path(state_dir), settings, make_sender, now, heartbeat_url, ping, send_budget, config, runner)
    try:
        report = _locked_pass(location_of(state_dir), *args)
        kept_in = Path(state_dir)
    except StateWriteError as exc:
        # Its own memory cannot be written beside the runner's state either: keep it elsewhere, so
        # the outage is told (once) all the same. Messages are only sent after a save, so none went.
        kept_in = watchdog_store.fallback_dir(Path(state_dir))
        log_event("watchdog_memory_elsewhere", logging.WARNING, folder=str(kept_in), error=str(exc))
        report = _locked_pass(location_of(kept_in), *args, carry_over=False)
    return replace(report, kept_in=kept_in)


def _locked_pass(location, state_dir: Path, *args, carry_over: bool = True) -> PassReport:
    lock = location.lock(watchdog_store.LOCK_NAME)
    if not lock.try_acquire():
        log_event("watchdog_skipped", reason="another watchdog pass holds the watchdog lock")
        return PassReport(skipped=True)
    try:
        store = location.open(watchdog_store.STORE_NAME)
        try:
            return _pass(store, state_dir, *args, carry_over=carry_over)
        finally:
            store.close()
    finally:
        lock.release()


def _pass(store, state_dir, settings, make_sender, now, heartbeat_url, ping, send_budget, config, runner,
          *, carry_over: bool) -> PassReport:
    reading = read_runner(state_dir, runner)
    verdict = judge_runner(reading, now, settings, config)
    log_event(
        "watchdog_verdict", logging.INFO if verdict.healthy else logging.WARNING, status=verdict.status,
        reason=verdict.reason,
        last_finished_at=format_utc(verdict.last_finished_at) if verdict.last_finished_at else None,
    )
    state = watchdog_store.load_watchdog_state(store, state_dir, now)
    if carry_over:
        state = watchdog_store.take_back(state, state_dir)
    unsent = [entry for entry in state.outbox.pending if entry.key.startswith(OUTAGE_KEYS)]
    decision = advance(state.memory, verdict, now, settings, len(unsent))
    if decision.kind == "recovered" and unsent:
        # The outage's alert and reminders never reached the chat: the recovery says it happened,
        # how long, and that they could not be heard; sent now they would be stale news.
        kept = tuple(entry for entry in state.outbox.pending if entry not in unsent)
        state.outbox = replace(state.outbox, pending=kept)
        log_event("watchdog_unsent_dropped", logging.WARNING, count=len(unsent))
    state.memory = decision.memory
    state.outbox = enqueue(state.outbox, decision.messages, now).outbox
    if decision.kind:
        level = logging.INFO if decision.kind == "recovered" else logging.WARNING
        log_event("watchdog_" + decision.kind, level, status=verdict.status, since=state.memory.since)

    def checkpoint(outbox) -> None:
        state.outbox = outbox
        watchdog_store.save(store, state)

    checkpoint(state.outbox)  # the alert memory and composed messages are durable before anything is sent
    report = PassReport(verdict=verdict, said=decision.kind,
                        messages=tuple(message.text for message in decision.messages))
    if state.outbox.pending:
        # The runner may have learnt that the group became a supergroup; follow it too.
        state.outbox = replace(state.outbox, migrations={**reading.migrations, **state.outbox.migrations})
        sender = make_sender(state.outbox)
        try:
            delivery = deliver(state.outbox, sender, now, send_budget, checkpoint)
            state.outbox, report.results = delivery.outbox, list(delivery.results)
        finally:
            close = getattr(sender, "close", None)
            if close:
                close()
        checkpoint(state.outbox)
    report.undelivered = len(state.outbox.pending)
    if heartbeat_url and verdict.healthy:
        report.pinged = ping(heartbeat_url)
    elif heartbeat_url:
        # The service outside this machine alerts through its own channels: when Telegram is the
        # broken part, that is how people hear it.
        report.failure_pinged = ping(failure_url(heartbeat_url))
    return report

