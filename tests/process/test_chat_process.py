"""The team answers from the chat, against `sheet-monitor run` as cron starts it: child processes
reading the sandbox's fake Telegram over real HTTP (real clock), people pressing buttons there, runs
killed with SIGKILL at random moments, and two runners sharing one Redis state.
"""

from __future__ import annotations

import io
import random
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from cli_fixtures import STOCK_PROFILE, sandbox_config_head, sheet_id, stock_sheets
from process_helpers import RunLog, try_kill
from redis_fixtures import REDIS_URL, delete_prefix, new_prefix, redis_or_skip
from sandbox_fixtures import clean_env

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.state import read_state
from sheet_sandbox.server import running_sandbox

TOKEN = "123456:SECRET-chat-process-token-0123456"
CHAT = -1001000000555
IVAN = {"id": 501, "first_name": "Ivan", "username": "ivan"}
STORES = [sheet_id(n) for n in range(31, 51)]  # 20 spreadsheets
FAILING = STORES[:2]


def stock(quantity: int) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


def config_text(sandbox, folder: Path) -> str:
    """A config on ``sandbox`` whose runs listen to the chat, a round every 15 s."""
    head = sandbox_config_head(sandbox, folder, CHAT).replace("listen = false", "listen = true")
    head = head.replace('budget = "4m"', 'budget = "4m"\nround_interval = "15s"')
    names = {sid: f"Store {n:03d}" for n, sid in enumerate(STORES, start=1)}
    return head + '\n[alerts]\ndigest_at = "off"\n' + STOCK_PROFILE + stock_sheets(names)


@pytest.fixture
def site(tmp_path):
    with running_sandbox(latency="off") as sandbox:
        for sid in STORES:
            sandbox.google.store.put_control(sid, stock(-1 if sid in FAILING else 10))
        sandbox.telegram.add_token(TOKEN, username="stock_monitor_bot")
        sandbox.telegram.add_chat(CHAT, title="Ops")
        path = tmp_path / "monitor.toml"
        path.write_text(config_text(sandbox, tmp_path))
        yield sandbox, path


def start_run(path: Path, budget: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "monitor.cli", "run", "--config", str(path), "--budget", str(budget),
         "--no-progress"],
        cwd=path.parent, env={**clean_env(), "TELEGRAM_BOT_TOKEN": TOKEN},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def first_alert(sandbox, path: Path) -> int:
    """A first run in this process: the alert about the failing stores, with their buttons."""
    run_once(load_config(path, {"TELEGRAM_BOT_TOKEN": TOKEN}), messages_to=io.StringIO(),
             budget=timedelta(seconds=8))
    [alert] = [m for m in sandbox.telegram.messages(CHAT) if m.reply_markup]
    return alert.message_id


def row_of(sandbox, message: int, name: str) -> int:
    """The row of buttons for ``name`` under ``message`` (its lines, and so its rows, come in the
    order the reads ended)."""
    [alert] = [m for m in sandbox.telegram.messages(CHAT) if m.message_id == message]
    rows = alert.reply_markup["inline_keyboard"]
    return next(n for n, row in enumerate(rows) if row[0]["text"] == f"✔ {name}")


def test_a_press_during_a_run_mutes_that_spreadsheet_only_within_10_seconds_and_says_so(site):
    sandbox, path = site
    message = first_alert(sandbox, path)
    process = start_run(path, 14)  # listens 10 s after it begins to: a press is applied in them or never
    log = RunLog(process)
    assert log.wait_for("chat_listening", timeout=15) is not None
    pressed_at = time.monotonic()
    sandbox.telegram.press(CHAT, message, position=(row_of(sandbox, message, "Store 001"), 2),
                           user=IVAN)  # Store 001's "🔕 1d"
    while True:
        state = read_state(path.parent / "state")
        if state is not None and FAILING[0] in state.mutes:
            break
        if time.monotonic() - pressed_at > 10:
            pytest.fail(f"the press was not applied within 10 s: {log.to_the_end()}")
        time.sleep(0.1)
    took = time.monotonic() - pressed_at
    process.wait(timeout=40)
    state = read_state(path.parent / "state")
    assert set(state.mutes) == {FAILING[0]} and state.mutes[FAILING[0]].by == "@ivan"
    said = [m.plain_text for m in sandbox.telegram.messages(CHAT)]
    assert any("Muted for 1 day by @ivan: Store 001" in text for text in said)
    assert sandbox.telegram.callback_answers()[-1]["text"].startswith("🔕 Muted for 1 day")
    assert took < 10


def test_kills_at_random_moments_around_polling_apply_every_press_exactly_once(site):
    sandbox, path = site
    rng = random.Random(24)
    message = first_alert(sandbox, path)
    rows = sandbox.telegram.messages(CHAT)[-1].reply_markup["inline_keyboard"]
    acknowledge = next(row[0]["callback_data"] for row in rows if row[0]["text"] == "✔ Store 001")
    presses, kills = 12, 0
    made = rounds = 0
    while made < presses:
        rounds += 1
        process = start_run(path, 8)
        log = RunLog(process)
        if log.wait_for("chat_listening", timeout=15) is None:
            continue
        for _ in range(rng.randint(1, 3)):
            if made < presses:
                sandbox.telegram.forge_callback(CHAT, message, acknowledge, user=IVAN)  # a press of it again
                made += 1
            time.sleep(rng.uniform(0.0, 0.6))
        if rounds % 3:  # two runs in three are killed, the third ends by itself
            time.sleep(rng.uniform(0.0, 1.5))
            if try_kill(process):
                kills += 1
                continue
        process.wait(timeout=30)
    final = start_run(path, 8)  # no kill: what is left is read and applied
    final.wait(timeout=30)
    incident = read_state(path.parent / "state").incidents[FAILING[0]]
    acknowledged = [action for action in incident.actions if action.what == "acknowledged"]
    assert len(acknowledged) == presses, f"{len(acknowledged)} of {presses} presses applied ({kills} kills)"
    assert kills >= 3


def test_two_runners_on_one_redis_never_both_read_the_chat(tmp_path):
    redis_or_skip()
    prefix = new_prefix()
    try:
        with running_sandbox(latency="off") as sandbox:
            for sid in STORES:
                sandbox.google.store.put_control(sid, stock(-1 if sid in FAILING else 10))
            sandbox.telegram.add_token(TOKEN, username="stock_monitor_bot")
            sandbox.telegram.add_chat(CHAT, title="Ops")
            base = config_text(sandbox, tmp_path)
            runners = []
            for name in ("host-a", "host-b"):
                path = tmp_path / f"{name}.toml"
                path.write_text(base + f'\n[state]\nbackend = "redis"\nurl = "{REDIS_URL}"\n'
                                f'prefix = "{prefix}"\nrunner = "{name}"\nlease = "3s"\n')
                runners.append(path)
            processes = [start_run(path, 10) for path in runners]
            most_waiting = 0
            while any(process.poll() is None for process in processes):
                most_waiting = max(most_waiting, sandbox.telegram.waiting_polls())
                sandbox.telegram.write(CHAT, "/status", user=IVAN)
                time.sleep(0.5)
            for process in processes:
                assert process.returncode in (0, 1), process.stderr.read()
            polls = sandbox.telegram.stats()["requests"].get("getUpdates", {})
            assert polls.get("200") and not polls.get("409"), polls
            assert most_waiting <= 1
    finally:
        delete_prefix(prefix)
