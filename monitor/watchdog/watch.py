"""One watchdog pass: read the runner's heartbeat, judge it, remember, tell people, ping.

I/O around the pure ``monitor.watchdog``. The contract that keeps it out of the runner's way:

- the runner's state is read without the run lock (``FileStore(read_only=True)``): the store
  guarantees such a reader a state that existed after some complete update, never a mix;
- the watchdog's own alert memory and outbox live in ``<state_dir>/watchdog.json``, a separate small
  file written atomically (temp file, fsync, rename; mode 0600) that only the watchdog writes. Two
  overlapping watchdog passes are kept apart by their own ``watchdog.lock``, never the run lock;
- messages are composed into the outbox and saved before any is sent, so a Telegram outage or a
  crash loses nothing; the next pass sends what is left, oldest first (``monitor.outbox.deliver``);
- nothing here imports gspread or google-auth: the watchdog must work when the Google stack is what
  broke.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from monitor.core.logs import log_event
from monitor.core.timefmt import format_utc
from monitor.notify.heartbeat_ping import ping_heartbeat
from monitor.notify.outbox import DeliveryResult, deliver, enqueue, is_outbox, new_outbox
from monitor.notify.telegram import Sender
from monitor.state.runner_state import HEARTBEAT, OUTBOX, RUNS
from monitor.storage import STATE_FILE_NAME, FileStore, FlockLock, StateError, StatePaths
from monitor.storage.files import atomic_write_bytes, ensure_private_dir
from monitor.watchdog import judge

WATCHDOG_FILE_NAME = "watchdog.json"
WATCHDOG_LOCK_NAME = "watchdog.lock"
FILE_VERSION = 1
# Sends per pass: an alert, a reminder or a recovery is one message; a backlog after a long
# Telegram outage drains over a few passes rather than holding cron for minutes.
SEND_BUDGET = 10


@dataclass(frozen=True)
class RunnerReading:
    """What the watchdog could learn from the runner's state file."""

    heartbeat: dict | None  # None: the file does not exist
    runs: list[dict]
    readable: bool
    error: str | None = None
    migrations: dict = field(default_factory=dict)  # chat migrations the runner's outbox learnt


def read_runner_state(state_dir: Path) -> RunnerReading:
    """Read ``heartbeat``, ``runs`` and the outbox's chat migrations without any lock."""
    main = Path(state_dir) / STATE_FILE_NAME
    if not StatePaths(main).exist():
        return RunnerReading(None, [], True)
    try:
        store = FileStore(main, read_only=True)
        try:
            heartbeat = _json_property(store, HEARTBEAT, {})
            runs = _json_property(store, RUNS, [])
            outbox = _json_property(store, OUTBOX, {})
        finally:
            store.close()
    except StateError as exc:
        return RunnerReading({}, [], False, str(exc))
    if not isinstance(heartbeat, dict) or not isinstance(runs, list):
        return RunnerReading({}, [], False, f"{main}: the heartbeat or runs property has the wrong shape")
    runs = [run for run in runs if isinstance(run, dict)]
    migrations = outbox.get("migrations") if isinstance(outbox, dict) else None
    return RunnerReading(heartbeat, runs, True, None, migrations if isinstance(migrations, dict) else {})


def _json_property(store: FileStore, key: str, default):
    """The property decoded, ``default`` if unset; text that is not JSON makes the state unreadable."""
    text = store.get_property(key)
    if text is None:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(f"state property {key!r} is not JSON ({exc.msg} at position {exc.pos})") from None


# ---- the watchdog's own file ---------------------------------------------------------------------


def new_document() -> dict:
    return {"version": FILE_VERSION, "alert": judge.new_memory(), "outbox": new_outbox()}


def load_document(path: Path) -> dict:
    """The watchdog's memory; a missing or damaged file starts afresh (logged), and so does a damaged
    outbox in it. Losing it costs at most one repeated alert, which is better than a watchdog that
    stops watching (a malformed pending message would otherwise fail every pass)."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return new_document()
    except (OSError, ValueError) as exc:
        log_event("watchdog_memory_reset", logging.WARNING, path=str(path), error=type(exc).__name__)
        return new_document()
    if not isinstance(data, dict) or not isinstance(data.get("alert"), dict):
        log_event("watchdog_memory_reset", logging.WARNING, path=str(path), error="unexpected shape")
        return new_document()
    document = new_document()
    document["alert"].update(data["alert"])
    if is_outbox(data.get("outbox")):
        document["outbox"].update(data["outbox"])
    elif "outbox" in data:
        log_event("watchdog_outbox_reset", logging.WARNING, path=str(path), error="unexpected shape")
    return document


def save_document(path: Path, document: dict) -> None:
    payload = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    atomic_write_bytes(path, payload)


# ---- one pass ------------------------------------------------------------------------------------


@dataclass
class PassReport:
    skipped: bool = False  # another watchdog pass held the watchdog lock
    verdict: judge.Verdict | None = None
    said: str | None = None  # alert | reminder | recovered | None
    results: list[DeliveryResult] = field(default_factory=list)
    undelivered: int = 0  # messages still waiting in the watchdog's outbox
    pinged: bool | None = None  # None: no heartbeat_url, or the verdict was not healthy

    @property
    def delivery_failed(self) -> bool:
        """A message this watchdog owes people was refused or could not reach Telegram in this pass:
        its job is not done. Messages left only because the pass's send budget ran out are not a
        failure; the next pass sends them."""
        return any(result.outcome != "sent" for result in self.results)


def watchdog_pass(
    state_dir: Path,
    settings: judge.WatchdogSettings,
    make_sender: Callable[[dict], Sender],
    now: datetime,
    *,
    heartbeat_url: str | None = None,
    ping: Callable[[str], bool] = ping_heartbeat,
    send_budget: int = SEND_BUDGET,
) -> PassReport:
    """Judge the runner once, record the alert memory, deliver what is owed, ping when healthy.

    ``make_sender(outbox)`` builds the sender from the watchdog's outbox document (which carries the
    remembered chat migrations). Raises ``StateError`` only if the watchdog's own file cannot be
    written; everything else is reported in the returned ``PassReport``.
    """
    state_dir = Path(state_dir)
    ensure_private_dir(state_dir)
    lock = FlockLock(state_dir / WATCHDOG_LOCK_NAME)
    if not lock.try_acquire():
        log_event("watchdog_skipped", reason="another watchdog pass holds the watchdog lock")
        return PassReport(skipped=True)
    try:
        return _pass(state_dir, settings, make_sender, now, heartbeat_url, ping, send_budget)
    finally:
        lock.release()


def _pass(state_dir, settings, make_sender, now, heartbeat_url, ping, send_budget) -> PassReport:
    reading = read_runner_state(state_dir)
    verdict = judge.evaluate(reading.heartbeat, reading.runs, reading.readable, now, settings,
                                error=reading.error)
    log_event(
        "watchdog_verdict",
        logging.INFO if verdict.healthy else logging.WARNING,
        status=verdict.status,
        reason=verdict.reason,
        last_finished_at=format_utc(verdict.last_finished_at) if verdict.last_finished_at else None,
    )
    path = state_dir / WATCHDOG_FILE_NAME
    document = load_document(path)
    decision = judge.advance(document["alert"], verdict, now, settings)
    outbox = document["outbox"]
    for message in decision.messages:
        enqueue(outbox, message, now)
    document["alert"] = decision.memory
    if decision.kind:
        log_event("watchdog_" + decision.kind, logging.WARNING if decision.kind != "recovered" else
                  logging.INFO, status=verdict.status, since=decision.memory.get("since"))

    def checkpoint() -> None:
        try:
            save_document(path, document)
        except OSError as exc:
            raise StateError(f"cannot write the watchdog's file {path}: {exc.strerror or exc}") from exc

    checkpoint()  # the alert memory and composed messages are durable before anything is sent
    report = PassReport(verdict=verdict, said=decision.kind)
    if outbox["pending"]:
        # The runner may have learnt that the group became a supergroup; follow it too.
        outbox["migrations"] = {**reading.migrations, **outbox.get("migrations", {})}
        sender = make_sender(outbox)
        try:
            report.results = deliver(outbox, sender, now, send_budget, checkpoint)
        finally:
            close = getattr(sender, "close", None)
            if close:
                close()
        checkpoint()
    report.undelivered = len(outbox["pending"])
    if heartbeat_url and verdict.healthy:
        report.pinged = ping(heartbeat_url)
    return report
