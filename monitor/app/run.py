"""One `sheet-monitor run`, wired from a validated Config: the state, the reader, the pacer, the notifier.

The CLI's ``run``, the ``demo`` and the benchmarks all start runs through :func:`run_once`, so there
is one place where the pieces are put together.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import IO, TYPE_CHECKING

from monitor.app.folders import folders_brought_up_to_date
from monitor.app.pacing import quota_pacer
from monitor.app.start_up import collector_paused
from monitor.config import Config
from monitor.core.clock import SystemClock
from monitor.core.logs import log_event
from monitor.engine.change_detection import ChangeFeed
from monitor.engine.events import Event
from monitor.engine.heartbeat import GOOD_OUTCOMES
from monitor.engine.inflight import ThreadedReads
from monitor.engine.inspect import SheetReader, plans_of
from monitor.engine.run import Run
from monitor.engine.settings import RunSettings
from monitor.engine.task_results import RunReport
from monitor.google.client import CredentialCache
from monitor.google.reader import GspreadReader
from monitor.state import changing_state, own_lock, shares_state
from monitor.state.access import ROUND_LOCK
from monitor.storage import RUN_LOCK
from monitor.storage.configured import describe_location, state_location

if TYPE_CHECKING:  # the notifier loads only once the reads are done (see run_once)
    from monitor.app.notify_step import Delivered
    from monitor.notify.notifier import NotifyReport

RUN_PING_TIMEOUT_SECONDS = 2.0


@dataclass(frozen=True)
class RunResult:
    report: RunReport | None  # None when another run held the lock
    lock_held_elsewhere: bool = False
    new_events: tuple[Event, ...] = ()  # what this run told the notifier (before it was handed over)
    delivery: Delivered | None = None  # what reached Telegram, as the outbox was left


def new_run_id(now: datetime | None = None) -> str:
    """A run's id: when it started (now, by the system's clock, unless given) and a random part."""
    now = now or SystemClock().now()
    return f"run-{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def run_once(
    config: Config,
    *,
    budget: timedelta | None = None,
    clock=None,
    run_id: str | None = None,
    reader_factory: Callable[[Config, float], SheetReader] | None = None,  # called once per worker
    checkpoint_every: float | None = None,
    messages_to: IO[str] | None = None,
    stay: bool = True,
) -> RunResult:
    """One run: lock, load, work until the budget is spent, notify, save, unlock.

    A run that reads the chat stays after its work, answering it while a button may be pressed, until
    its budget is spent; ``stay=False`` ends it with its work (the demo's round, whose runs would
    each wait out a budget meant for cron).

    Raises the store's StateError (the CLI turns it into exit 1), and whatever stops the state from
    being saved (an OSError such as a full disk): a run that cannot save must not go on. What a
    spreadsheet, Google or Telegram does wrong is recorded in the state and logged, not raised.
    """
    clock = clock or SystemClock()
    run_id = run_id or new_run_id(clock.now())
    location = state_location(config)
    runner = config.state.runner if shares_state(location) else None
    if runner:  # the Redis client is loaded only by a config that chose it
        from monitor.state.shared import SharedState, prepare

        prepare(location, runner, config.state.lease.total_seconds())
    with ExitStack() as listening_until_the_end:
        start_up = listening_until_the_end.enter_context(collector_paused())
        with changing_state(location, actor=run_id, now=clock.now(), runner=runner,
                            lock=own_lock(runner) if runner else RUN_LOCK) as session:
            if session is None:
                log_event("run_skipped", reason="another run holds the lock",
                          state_dir=describe_location(location), **({"runner": runner} if runner else {}))
                return RunResult(report=None, lock_held_elsewhere=True)
            sharing = SharedState(session, location, runner, run_id,
                                  config.state.lease.total_seconds()) if runner else None
            credentials = CredentialCache()
            config, settings = _settled(config, budget, checkpoint_every, session, clock, run_id,
                                        credentials, sharing, listing=reader_factory is None)
            chat = listening_until_the_end.enter_context(
                _listening(config, location, session, clock, settings))
            teller = _Teller(config, session, sharing, run_id, clock, messages_to or sys.stdout)
            run, reads = _wired_run(config, settings, session, location, run_id, clock, reader_factory,
                                    sharing, credentials, chat, teller.tell)
            teller.run = run
            start_up.done()
            try:
                report = run.execute()
            finally:
                reads.close()
            try:
                teller.tell(wait=run.deadline - clock.monotonic())
            finally:
                if sharing is not None:
                    sharing.close()  # its run's lease ends here, once nothing of it is in flight
            delivery = teller.delivered()
        _publish_report(config, session.state, clock)
        _publish_metrics(config, session.state, clock, run.deadline)
        # Alerts nobody receives are no good run: the external switch must not hear "all is well".
        if report.outcome in GOOD_OUTCOMES and not delivery.halts:
            _ping_heartbeat(config)
        if chat is not None and stay:  # its lock released, the run answers the chat until its budget ends
            from monitor.app.listen import linger

            linger(chat.conversation, session.state, location, ROUND_LOCK if runner else RUN_LOCK, clock)
    return RunResult(report=report, new_events=teller.new_events(), delivery=delivery)


def _settled(config: Config, budget: timedelta | None, checkpoint_every: float | None, session, clock,
             run_id: str, credentials: CredentialCache, sharing, listing: bool) -> tuple[Config, RunSettings]:
    """The config with its folders' spreadsheets brought up to date (``listing``: the reader is
    Google's, so Drive lists them), and the run's settings from it: a maintenance window over a
    folder's tag covers them, and the folders' time is the run's, which still ends within its budget."""
    spent = timedelta(0)
    if listing:
        started = clock.monotonic()
        timeout = config.google.request_timeout.total_seconds()
        config = folders_brought_up_to_date(config, session, clock, run_id, timeout, credentials, sharing)
        spent = timedelta(seconds=max(0.0, clock.monotonic() - started))
    settings = RunSettings.from_config(config, budget)
    settings = replace(settings, budget=max(settings.budget - spent, timedelta(0)))
    if checkpoint_every is not None:
        settings = replace(settings, checkpoint_every=checkpoint_every)
    return config, settings


class _Teller:
    """What the run found, handed to the notifier: while it watches Drive's feed (not waiting for
    another runner's sending), and once more at its end; each new event kept once, told or not."""

    def __init__(self, config: Config, session, sharing, run_id: str, clock, stream: IO[str]) -> None:
        self._config, self._session, self._sharing = config, session, sharing
        self._run_id, self._clock, self._stream = run_id, clock, stream
        self.run: Run | None = None  # set once wired: the notifier's deadline is the run's
        self._told: list[NotifyReport | None] = []
        self._new_events: dict[str, Event] = {}  # by their key in the state

    def tell(self, wait: float = 0.0) -> None:
        self._new_events.update((key, event) for key, event in self._session.state.events.pending()
                                if event.run_id == self._run_id)
        self._told.append(_notify(self._config, self._session, self._sharing, self.run, self._clock,
                                  self._stream, wait))

    def new_events(self) -> tuple[Event, ...]:
        return tuple(self._new_events.values())

    def delivered(self) -> Delivered:
        from monitor.app.notify_step import Delivered

        return Delivered.of(self._told, self._session.state.outbox)


def _ping_heartbeat(config: Config) -> None:
    """The external dead-man's switch hears from good runs only (whose alerts can reach people);
    bounded so the run still ends within budget + 5 s (ping services answer in milliseconds)."""
    if config.watchdog.heartbeat_url:
        from monitor.notify.heartbeat_ping import ping_heartbeat

        ping_heartbeat(config.watchdog.heartbeat_url, timeout=RUN_PING_TIMEOUT_SECONDS)


@contextmanager
def _listening(config: Config, location, session, clock, settings: RunSettings):
    """The chat's listener for the run (``monitor.app.listen``), or None: the config does not
    listen, or another process reads the chat. Its module (and httpx) loads only when it does."""
    if not (config.telegram.listen and config.telegram.enabled):
        yield None
        return
    from monitor.app.listen import RunListener, listening

    deadline = clock.monotonic() + settings.budget.total_seconds()
    with listening(config, location, session.state, clock, deadline) as conversation:
        yield None if conversation is None else RunListener(conversation, session, clock)


def _wired_run(config: Config, settings: RunSettings, session, location, run_id: str, clock,
               reader_factory: Callable[[Config, float], SheetReader] | None,
               sharing, credentials: CredentialCache, listener=None,
               tell: Callable[[], None] | None = None) -> tuple[Run, ThreadedReads]:
    """The run and its read workers: the pacer (shared through Redis beside other runners), one
    reader per worker sharing the credentials, and Drive's change feed when the config asks for it."""
    pacer = quota_pacer(config, location)
    pacer.restore(session.state.quota)
    reads = ThreadedReads(_reader_maker(config, settings.request_timeout, reader_factory, credentials),
                          workers=settings.max_in_flight, monotonic=clock.monotonic)
    changes = None
    if config.run.change_detection and reader_factory is None:
        changes = _change_feed(config, settings.request_timeout, credentials)
    run = Run(run_id=run_id, settings=settings, plans=plans_of(config), state=session.state,
              reads=reads, pacer=pacer, clock=clock, save=session.save, changes=changes, sharing=sharing,
              listener=listener, tell=tell)
    return run, reads


def _notify(config: Config, session, sharing, run: Run, clock, stream: IO[str], wait: float
            ) -> NotifyReport | None:
    """The notifier's pass over the run's events (None when it failed, or another runner sends).
    Beside other runners: one sender at a time, composing from every runner's events as saved; a
    runner that cannot have the notify lock within ``wait`` seconds leaves its events to the holder
    or a later pass. The notifier (httpx and its TLS stack) loads only once there is something to
    tell: a tenth of a second of start-up, before the first read, that a run need not wait for."""
    from monitor.app.notify_step import notify_after_run

    if sharing is None:
        return notify_after_run(config, session, run.run_id, run.deadline, clock, stream)
    told = None
    with sharing.notifying(wait=max(0.0, wait)) as mine:
        if mine:
            told = notify_after_run(config, session, run.run_id, run.deadline, clock, stream)
    log_event("run_shared", runner=sharing.runner, claims_refused=sharing.claims_refused, notified=mine)
    return told


def _publish_report(config: Config, state, clock) -> None:
    """The status page of ``[report] html``, after the lock is released (from the state as saved, in
    memory: 0.05 s at 750 spreadsheets); its module loads only when it is set. Never fails the run."""
    if config.report.html is None:
        return
    from monitor.app.report_step import publish_page

    publish_page(config, state, clock.now())


def _publish_metrics(config: Config, state, clock, deadline: float) -> None:
    """The metrics file and push of ``[metrics]``, after the lock is released (they only read the
    state as saved), held to the run's deadline; prometheus_client loads only when they are set."""
    if config.metrics.textfile is None and config.metrics.pushgateway is None:
        return
    from monitor.app.metrics_step import publish_metrics

    publish_metrics(config, state, clock.now(), deadline - clock.monotonic())


def _reader_maker(config: Config, timeout: float,
                  reader_factory: Callable[[Config, float], SheetReader] | None,
                  credentials: CredentialCache) -> Callable[[], SheetReader]:
    """What each read worker calls once to get its own reader; gspread readers share one credential
    cache, so a service account is loaded and tokened once, not once per worker."""
    if reader_factory is not None:
        return lambda: reader_factory(config, timeout)
    return lambda: GspreadReader.for_config(config, timeout, credentials, defer=True)


def _change_feed(config: Config, timeout: float, credentials: CredentialCache) -> ChangeFeed:
    """Drive's change feed as the first credential sees it: every credential reads every spreadsheet,
    so any one's view holds all their changes. Asked on the run's own thread, with its own client."""
    from monitor.google.drive_feed import DriveChangeFeed

    reader = GspreadReader.for_config(config, timeout, credentials)
    return DriveChangeFeed(reader, str(config.google.credentials[0]))
