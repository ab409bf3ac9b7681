"""A Drive folder of generated spreadsheets watched by ``sheet-monitor run`` as cron starts it
(child processes, real gspread against the sandbox over HTTP, its fake Telegram): the folder's
spreadsheets are monitored, one added to the folder is picked up and told once, one moved out is
dropped and told once, and runs killed with SIGKILL at random moments neither lose nor repeat a
"now monitoring"."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from datetime import UTC, datetime

import httpx
import pytest
from process_helpers import try_kill
from sandbox_fixtures import clean_env

from monitor.core.clock import SystemClock
from monitor.state import read_state
from sheet_sandbox import dataset as datasets
from sheet_sandbox.server import running_sandbox

TOKEN = "123456:SECRET-folders-process-0123456789"
CHAT = -1001000000079
LIST = "GET /drive/v3/files"
RESENT = "Sent again"


def new_store(title: str, folder: str) -> dict:
    return {"title": title, "parents": [folder], "tabs": {datasets.STOCK_TAB: [list(datasets.STOCK_HEADER)]}}


@pytest.fixture
def site(tmp_path):
    with running_sandbox(clock=SystemClock(), latency="off", feed_delay="off") as sandbox:
        data, [folder] = datasets.filed(datasets.generate(12, seed=5, now=datetime.now(UTC)))
        data.faults = []
        datasets.apply(data, sandbox.google)
        sandbox.telegram.add_token(TOKEN)
        sandbox.telegram.add_chat(CHAT, title="Ops")
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        config = datasets.write_config(data, tmp_path / "monitor.toml", credentials=credentials,
                                       endpoint=sandbox.base_url, telegram_api_base=sandbox.telegram_url,
                                       telegram_chat_id=str(CHAT), telegram_listen=False,
                                       request_timeout="5s", folders=[folder],
                                       run={"change_poll": "off", "round_interval": "1s"})
        yield sandbox, data, folder, config


def start(config) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "monitor.cli", "run", "--config", str(config)],
                            cwd=config.parent, env={**clean_env(), "TELEGRAM_BOT_TOKEN": TOKEN},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(config) -> None:
    process = start(config)
    _, err = process.communicate(timeout=90)
    assert process.returncode == 0, err[-2000:]
    time.sleep(1.1)  # past round_interval: the next run starts a new round


def told(sandbox, phrase: str) -> list[str]:
    """The messages saying ``phrase``, a repeat Telegram may have taken twice (marked) left out."""
    return [m.plain_text for m in sandbox.telegram.messages(CHAT) if phrase in m.plain_text
            and not m.plain_text.startswith(RESENT)]


def listings(sandbox) -> int:
    return sandbox.google.stats.snapshot()["by_endpoint"].get(LIST, 0)


def test_a_folder_is_watched_a_new_sheet_told_once_a_removed_one_dropped_once(site):
    sandbox, data, folder, config = site
    stores = [entry for entry in data.sheets if entry.profile != datasets.CATALOGUE_PROFILE]
    run(config)
    [first] = told(sandbox, "now monitoring")
    assert f"Folder Stores: now monitoring {sorted(e.title for e in stores)[0]}" in first
    state = read_state(config.parent / "state")
    assert {entry.id for entry in stores} <= state.health.keys()
    listed = listings(sandbox)

    control = httpx.Client(base_url=sandbox.base_url, timeout=10)
    new_id = "1folderProcessNew".ljust(44, "n")
    control.put(f"/_sandbox/spreadsheets/{new_id}", json=new_store("Store New", folder)).raise_for_status()
    rng = random.Random(20261202)
    kills, window = 0, 2.5
    for _ in range(20):  # runs killed anywhere: before, during or after the folder's save and send
        process = start(config)
        time.sleep(rng.uniform(0.05, window))
        if not try_kill(process):  # it ended first (a fast machine): kill the next ones sooner
            window = max(0.2, window * 0.6)
            continue
        kills += 1
        if kills == 4:
            break
    assert kills == 4, f"only {kills} of 4 runs were killed before they ended"
    run(config)
    assert len(told(sandbox, "now monitoring Store New")) == 1
    assert len(told(sandbox, "now monitoring")) == 2  # the first run's, and this one
    assert listings(sandbox) == listed  # Drive's feed named it: the folder was not listed again
    assert new_id in read_state(config.parent / "state").health

    gone = stores[0]
    payload = {**data.payloads[gone.id], "parents": ["root"]}  # moved out of the folder
    control.put(f"/_sandbox/spreadsheets/{gone.id}", json=payload).raise_for_status()
    run(config)
    [left] = told(sandbox, "no longer in the folder")
    assert gone.title in left
    assert not told(sandbox, "removed from the config")
    assert gone.id not in read_state(config.parent / "state").health

    run(config)
    assert len(told(sandbox, "now monitoring")) == 2 and len(told(sandbox, "no longer in the folder")) == 1
