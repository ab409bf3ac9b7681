"""Shared by the watchdog's tests: what the runs leave behind (typed heartbeats and run summaries), the
runner's state written as a run writes it (holding the run lock, through ``monitor.state``), the
watchdog's own store opened as the watchdog opens it, and passes that send to the fake Telegram over
real HTTP.

Plain helpers, not fixtures: each test module declares the fixtures it needs over them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from config_fixtures import pem_key
from telegram_fixtures import PRIVATE, TOKEN

from monitor.config import WatchdogConfig
from monitor.engine.heartbeat import Heartbeat, RunHistory, RunOutcome, RunStats, RunSummary
from monitor.notify.documents import Outbox
from monitor.notify.outbox import chat_id_for
from monitor.notify.telegram import TelegramSender
from monitor.state import changing_state
from monitor.state.schema import OUTBOX
from monitor.storage import FileLocation
from monitor.watchdog import store as watchdog_store
from monitor.watchdog.judge import WatchdogSettings
from monitor.watchdog.outages import WatchdogMemory
from monitor.watchdog.watch import PassReport, watchdog_pass
from sheet_sandbox.http import HTTPServerThread, Request, Response
from sheet_sandbox.telegram import FakeTelegram

CHAT = PRIVATE  # a chat the shared fake Telegram knows
T0 = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)  # the night Europe's clocks go forward: UTC does not care
# The config's defaults: max_silence 15m, reminder_every 4h, stuck_grace 2m, failed_runs 3.
SETTINGS = WatchdogSettings.from_config(WatchdogConfig(), label="vps-1")


def settings(**changes) -> WatchdogSettings:
    return replace(SETTINGS, **changes)


def heartbeat(finished_at: datetime | None, started_at: datetime | None = None,
              outcome: RunOutcome = RunOutcome.OK,
              budget: float = 360.0, run_id: str = "run-1") -> Heartbeat:
    """A finished run's heartbeat, or (``finished_at`` None) the heartbeat of a run still going."""
    started_at = started_at or (finished_at - timedelta(minutes=1) if finished_at else T0)
    return Heartbeat(run_id=run_id, started_at=started_at, budget_seconds=budget, finished_at=finished_at,
                     outcome=outcome if finished_at else RunOutcome.RUNNING, stats=RunStats())


def runs_every_5_minutes(first_finish: datetime, count: int,
                         outcome: RunOutcome = RunOutcome.OK) -> list[RunSummary]:
    return [
        RunSummary(run_id=f"run-{i}", started_at=first_finish + timedelta(minutes=5 * i - 1),
                   finished_at=first_finish + timedelta(minutes=5 * i), outcome=outcome)
        for i in range(count)
    ]


def google_table(folder: Path) -> str:
    """A ``[google]`` table naming a service-account key written in ``folder``: the runs refuse a config
    naming none, and the watchdog says so; it looks at the key as a run does first, never loads it."""
    key = {"type": "service_account", "client_email": "watch@watch-proj.iam.gserviceaccount.com",
           "private_key": pem_key(), "token_uri": "https://oauth2.googleapis.com/token"}
    (folder / "sa.json").write_text(json.dumps(key))
    return '\n[google]\ncredentials = ["sa.json"]\n'


def write_runner_state(state_dir: Path, hb: Heartbeat, runs: Iterable[RunSummary] = ()) -> None:
    """What the runs left behind, saved as a run saves it."""
    with changing_state(state_dir, actor=hb.run_id, now=hb.started_at) as session:
        session.state.heartbeat = hb
        session.state.runs = RunHistory(tuple(runs))


def write_watchdog_store(state_dir: Path, values: Mapping[str, str]) -> None:
    """Write raw documents into the watchdog's own store, holding its lock as a pass does."""
    location = FileLocation(state_dir)
    with location.lock(watchdog_store.LOCK_NAME), location.open(watchdog_store.STORE_NAME) as store:
        store.update(values)


def watchdog_documents(state_dir: Path) -> dict[str, str]:
    """The watchdog's store as its next pass would find it."""
    with FileLocation(state_dir).open(watchdog_store.STORE_NAME, read_only=True) as store:
        return store.get_properties()


def stored_outbox(state_dir: Path) -> Outbox:
    return OUTBOX.decode(watchdog_documents(state_dir)["outbox"])


def stored_memory(state_dir: Path) -> WatchdogMemory:
    """The watchdog's alert memory as its next pass reads it (a stored document leaves its defaults out)."""
    return watchdog_store.MEMORY.decode(watchdog_documents(state_dir)["memory"])


def texts(fake: FakeTelegram) -> list[str]:
    return [message.text for message in fake.messages(CHAT)]


class PingCounter:
    """A heartbeat service (healthchecks.io and the like) that counts its pings."""

    def __init__(self, status: int = 200) -> None:
        self.paths: list[str] = []
        self.status = status
        self.url = ""

    def __call__(self, request: Request) -> Response:
        self.paths.append(request.raw_path)
        return Response(self.status, b"OK", "text/plain")


@contextmanager
def serving_pings() -> Iterator[PingCounter]:
    """A PingCounter on 127.0.0.1; its ``url`` is a heartbeat_url."""
    counter = PingCounter()
    with HTTPServerThread(counter) as server:
        counter.url = f"{server.base_url}/ping/3f1c"
        yield counter


class Watchdog:
    """Runs passes against one state folder, sending to a Telegram API (the fake) through real HTTP."""

    def __init__(self, state_dir: Path, clock, api_base: str, http, ping_url: str | None = None) -> None:
        self.state_dir, self.clock, self.api_base, self.http = state_dir, clock, api_base, http
        self.ping_url = ping_url

    def sender(self, outbox) -> TelegramSender:
        return TelegramSender(TOKEN, chat_id_for(outbox, CHAT), self.api_base, client=self.http,
                              clock=self.clock)

    def run(self, **kwargs) -> PassReport:
        return watchdog_pass(self.state_dir, SETTINGS, self.sender, self.clock.now(),
                             heartbeat_url=self.ping_url, **kwargs)
