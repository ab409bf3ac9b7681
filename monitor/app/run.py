"""Builds a run's real parts from a validated Config: lock, store, reader, pacer, plans.

The CLI's ``run``, the ``demo`` and the benchmarks all start runs through ``run_once``, so there is
one place where the pieces are wired together.
"""

from __future__ import annotations

import logging
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import IO

import httpx

from monitor.config import Config
from monitor.core.clock import SystemClock
from monitor.core.logs import log_event
from monitor.engine.quota import QuotaPacer
from monitor.engine.run import Run, RunReport, RunSettings, SheetPlan, SheetReader
from monitor.google.reader import GspreadReader
from monitor.notify import outbox
from monitor.notify.alerts import AlertSettings
from monitor.notify.heartbeat_ping import ping_heartbeat
from monitor.notify.telegram import RetryableDeliveryError
from monitor.state.events import DELIVERY_HALTED, Event
from monitor.state.runner_state import RunnerState, dump_state, load_state
from monitor.storage import FileStore, FlockLock
from monitor.watchdog.judge import GOOD_OUTCOMES

RUN_PING_TIMEOUT_SECONDS = 2.0


@dataclass(frozen=True)
class RunResult:
    report: RunReport | None  # None when another run held the lock
    lock_held_elsewhere: bool = False
    new_events: tuple[dict, ...] = ()


def new_run_id(now: datetime) -> str:
    return f"run-{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def plans_of(config: Config) -> list[SheetPlan]:
    # Serial dates are in the spreadsheet's own time zone; the config's [alerts] timezone stands
    # for all of them (reading each file's zone would cost a second request per spreadsheet).
    zone = config.alerts.tzinfo
    return [
        SheetPlan(
            id=sheet.id,
            name=sheet.name,
            checks=sheet.checks,
            ranges=sheet.ranges,
            timezone=zone,
            needs_modified_time=sheet.needs_modified_time,
        )
        for sheet in config.sheets
    ]


def settings_of(config: Config, budget: timedelta | None = None) -> RunSettings:
    return RunSettings(
        budget=budget or config.run.budget,
        round_interval=config.run.round_interval,
        request_timeout=config.google.request_timeout.total_seconds(),
        failure_threshold=config.breaker.failure_threshold,
        cooldown=config.breaker.cooldown,
        max_cooldown=config.breaker.max_cooldown,
    )


def pacer_of(config: Config) -> QuotaPacer:
    return QuotaPacer(
        [str(path) for path in config.google.credentials],
        per_credential=config.google.read_requests_per_minute,
        per_project=config.google.project_read_requests_per_minute,
    )


def run_once(
    config: Config,
    *,
    budget: timedelta | None = None,
    clock=None,
    run_id: str | None = None,
    reader_factory: Callable[[Config, float], SheetReader] | None = None,
    checkpoint_every: float | None = None,
    messages_to: IO[str] | None = None,
) -> RunResult:
    """One `sheet-monitor run`: lock, load, work until the budget is spent, save, unlock.

    Raises the store's StateUnreadable (the CLI turns it into exit 1), and whatever stops the state
    from being saved (an OSError such as a full disk): a run that cannot save must not go on. What a
    spreadsheet, Google or Telegram does wrong is recorded in the state and logged, not raised.
    """
    clock = clock or SystemClock()
    state_dir = config.run.state_dir
    lock = FlockLock.in_dir(state_dir)
    if not lock.try_acquire():
        log_event("run_skipped", reason="another run holds the lock", state_dir=str(state_dir))
        return RunResult(report=None, lock_held_elsewhere=True)
    try:
        store = FileStore.in_dir(state_dir, clock=clock)
        state = load_state(store.get_properties())
        settings = settings_of(config, budget)
        if checkpoint_every is not None:
            settings = replace(settings, checkpoint_every=checkpoint_every)
        pacer = pacer_of(config)
        pacer.restore(state.quota)
        timeout = settings.request_timeout
        reader = (reader_factory or _gspread_reader)(config, timeout)

        def save(current: RunnerState) -> None:
            store.set_properties(dump_state(current))

        if store.restored_from_backup:
            log_event("state_restored", logging.ERROR, reason=store.restore_report.reason)
        run = Run(
            run_id=run_id or new_run_id(clock.now()),
            settings=settings,
            plans=plans_of(config),
            state=state,
            reader=reader,
            pacer=pacer,
            clock=clock,
            save=save,
            state_restored=store.restored_from_backup,
        )
        report = run.execute()
        new_events = tuple(event for event in state.events if event["run_id"] == run.run_id)
        _notify(config, state, run, clock, messages_to or sys.stdout, lambda: save(state))
        store.close()
        if config.watchdog.heartbeat_url and report.outcome in GOOD_OUTCOMES:
            # The external dead-man's switch hears from good runs only; bounded so the run still
            # ends within budget + 5 s (ping services answer in milliseconds).
            ping_heartbeat(config.watchdog.heartbeat_url, timeout=RUN_PING_TIMEOUT_SECONDS)
        return RunResult(report=report, new_events=new_events)
    finally:
        lock.release()


def _notify(config: Config, state: RunnerState, run: Run, clock, stream: IO[str], checkpoint) -> None:
    """Hand the run's events to people. A notifier failure is logged, never the run's failure:
    the events stay in the state's outbox or event list for the next run."""
    # Telegram allows about one message a second per chat: send no more than the reserve left
    # in the budget can pace, and leave the rest in the outbox for the next run.
    seconds_left = run.deadline - clock.monotonic()
    send_budget = max(1, min(outbox.DEFAULT_SEND_BUDGET, int(seconds_left) + 2))
    # A hanging Telegram must not hold the run past its budget: its requests get what is left.
    client = httpx.Client(timeout=max(1.0, min(10.0, seconds_left)))
    try:
        sender = outbox.sender_for(
            config.telegram,
            outbox.outbox_of(state),
            stream,
            clock=_DeadlineClock(clock, run.deadline),
            client=client,
        )
        sender = _WithinDeadline(sender, client, clock, run.deadline)
        report = outbox.notify(
            state,
            AlertSettings.from_config(config.alerts),
            sender,
            clock.now(),
            names={sheet.id: sheet.name for sheet in config.sheets},
            checkpoint=checkpoint,
            budget=send_budget,
        )
        if report.newly_halted:
            # Kept as an event so that the first message after the chat works again says why the
            # others came late; `status` shows the halt meanwhile.
            halted = report.halted
            details = {
                "since": halted.get("at"),
                "status": halted.get("status"),
                "description": halted.get("description"),
            }
            state.add_event(Event.make(DELIVERY_HALTED, clock.now(), run.run_id, details=details).to_dict())
            checkpoint()
    except Exception:  # noqa: BLE001 - see the docstring
        log_event("notify_failed", logging.ERROR, exc_info=True)
    finally:
        client.close()


class _WithinDeadline:
    """The sender, held to the run's deadline: a slow Telegram answering each message just within
    the timeout would otherwise stretch a run by the send budget times the timeout (a 4 s run took
    17 s). Each request gets only the time left; once it is spent, messages stay in the outbox."""

    def __init__(self, sender, client: httpx.Client, clock, deadline: float) -> None:
        self._sender, self._client, self._clock, self._deadline = sender, client, clock, deadline

    @property
    def chat_id(self):  # the outbox compares it before and after a send to notice migrations
        return getattr(self._sender, "chat_id", None)

    def send(self, text: str):
        left = self._deadline - self._clock.monotonic()
        if left <= 0:
            raise RetryableDeliveryError("the run's budget is spent; the next run sends it")
        self._client.timeout = httpx.Timeout(max(1.0, min(10.0, left)))
        return self._sender.send(text)


class _DeadlineClock:
    """The run's clock as the Telegram sender sees it: a wait (pacing, a 429's retry_after) that
    would end past the run's deadline is refused as a retryable delivery error, so the message stays
    in the outbox; otherwise two 429s with retry_after 20 held a 4 s run for 40 s."""

    def __init__(self, clock, deadline: float) -> None:
        self._clock, self._deadline = clock, deadline

    def now(self):
        return self._clock.now()

    def time(self) -> float:
        return self._clock.time()

    def monotonic(self) -> float:
        return self._clock.monotonic()

    def sleep(self, seconds: float) -> None:
        if self._clock.monotonic() + seconds > self._deadline:
            raise RetryableDeliveryError(
                f"a wait of {seconds:.0f} s would pass the run's deadline; the next run sends it",
                retry_after=seconds,
            )
        self._clock.sleep(seconds)


def _gspread_reader(config: Config, timeout: float) -> SheetReader:
    endpoint = str(config.google.api_endpoint).rstrip("/") if config.google.api_endpoint else None
    return GspreadReader.from_credentials(config.google.credentials, endpoint=endpoint, timeout=timeout)
