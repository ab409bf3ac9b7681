"""When the state's Redis misbehaves: it dies or stops answering mid-run, or comes back without its data.

Each test has a Redis of its own (``private_redis``: killed, paused or restarted empty at will) and
the sandbox's Google on 127.0.0.1. The runs that must stop are ``sheet-monitor run`` child processes,
so exit codes, stderr and timing are what cron sees; a read of spreadsheet A hangs in the sandbox
until the test has done what it does to Redis, which makes "mid-run" a deterministic instant.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import A, B, write_config
from redis_server import PrivateRedis
from sandbox_fixtures import clean_env

from monitor.app.run import run_once
from monitor.cli.watchdog import run_watchdog
from monitor.config import load_config
from monitor.core.clock import ManualClock, SystemClock
from monitor.engine.health import FAIL, OK
from monitor.engine.heartbeat import GOOD_OUTCOMES, RunOutcome
from monitor.engine.tasks import DONE
from monitor.state import read_state
from monitor.storage import StateError, StateUnavailable
from monitor.storage.generations import FILE_NAME
from monitor.storage.redis_store import RedisLocation, RedisLock
from sheet_sandbox.http import HTTPServerThread
from sheet_sandbox.server import running_sandbox
from sheet_sandbox.telegram import FakeTelegram

BUDGET = 6  # seconds: the hanging read is cut to budget - reserve (3 s): a run that missed Redis ends by then
PREFIX = "sm"
TELEGRAM_TOKEN, TELEGRAM_CHAT = "123456:sandbox-token", -1001234567890


def state_section(url: str) -> str:
    return f'\n[state]\nbackend = "redis"\nurl = "{url}"\nprefix = "{PREFIX}"\n'


def sheet(quantity: int) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


def configured(tmp_path: Path, sandbox, redis_url: str) -> Path:
    sandbox.google.store.put_control(A, sheet(-3))  # fails its threshold
    sandbox.google.store.put_control(B, sheet(10))
    # Two credentials: A and B each go as their credential's first read, together, as two reads in flight
    return write_config(tmp_path, ids=(A, B), credentials=sandbox.write_credentials(tmp_path / "keys", 2),
                        endpoint=sandbox.base_url, extra=state_section(redis_url))


def start_run(config: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "monitor.cli", "run", "--config", str(config), "--budget", str(BUDGET),
         "--no-progress"], cwd=config.parent, env=clean_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def wait_for_read_of(sandbox, spreadsheet_id: str, process: subprocess.Popen) -> None:
    """Until the run's request for ``spreadsheet_id`` reached the sandbox (where it now hangs)."""
    deadline = time.monotonic() + 15
    while not sandbox.google.stats.of_spreadsheet(spreadsheet_id):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never read the spreadsheet"
        time.sleep(0.02)


def seconds_since_the_run_started(stderr: str) -> float:
    """From the run's start (its ``run_started`` line; its budget counts from then) to now: the time
    the interpreter takes to start on a loaded machine is not the run's."""
    [started] = logged(stderr, "run_started")
    return time.time() - datetime.fromisoformat(started["ts"]).timestamp()


def plain_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line and not line.startswith("{")]


def logged(stderr: str, event: str) -> list[dict]:
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == event]


def start_run_hanging_on_a_read(tmp_path: Path, sandbox, private_redis: PrivateRedis):
    """A run in a child process, once A's read is out and hangs and B's is out too: the instant to
    take Redis away. Before B's read is out, its admission by the shared quota log may be the command
    Redis dies under (a loaded machine sends A first and B a moment later), not the next save."""
    config = configured(tmp_path, sandbox, private_redis.url)
    sandbox.google.faults.add({"spreadsheet": A, "hang": True, "times": 1})
    process = start_run(config)
    wait_for_read_of(sandbox, A, process)
    wait_for_read_of(sandbox, B, process)
    return config, process


def test_a_run_whose_redis_dies_mid_run_ends_at_its_next_save_with_one_line_and_no_traceback(
        tmp_path, private_redis: PrivateRedis):
    with running_sandbox(telegram=False, latency="off") as sandbox:
        config, process = start_run_hanging_on_a_read(tmp_path, sandbox, private_redis)
        private_redis.kill()
        _, stderr = process.communicate(timeout=30)
        elapsed = seconds_since_the_run_started(stderr)

    assert process.returncode == 1, stderr
    assert elapsed < BUDGET + 5, f"the run took {elapsed:.1f} s"
    assert "Traceback" not in stderr
    [line] = plain_lines(stderr)
    where = f"Redis 127.0.0.1:{private_redis.port} db 0 (prefix '{PREFIX}')"
    assert f"lost the state on {where} while saving" in line
    assert "ConnectionError" in line and "Start Redis or fix [state] url" in line
    assert len(logged(stderr, "state_unusable")) == 1


def test_a_run_whose_redis_stops_answering_ends_within_budget_and_the_next_run_takes_its_lease_over(
        tmp_path, private_redis: PrivateRedis):
    with running_sandbox(telegram=False, latency="off") as sandbox:
        config, process = start_run_hanging_on_a_read(tmp_path, sandbox, private_redis)
        private_redis.pause()
        try:
            _, stderr = process.communicate(timeout=30)
            elapsed = seconds_since_the_run_started(stderr)
        finally:
            private_redis.resume()

        assert process.returncode == 1, stderr
        # One command's timeout (5 s) past the save that met the silent Redis; nothing waits after it.
        assert elapsed < BUDGET + 5, f"the run took {elapsed:.1f} s"
        assert "Traceback" not in stderr and len(plain_lines(stderr)) == 1
        assert "TimeoutError" in plain_lines(stderr)[0]
        saved = read_state(RedisLocation(private_redis.url, prefix=PREFIX))
        leased = [task for task in saved.round.tasks.values() if task.target == A]
        assert leased[0].status == "processing"  # its lease, saved before the read went out
        # The dead run's leases (its runner's lock, its run's lease on the read it had out) run out
        # after [state] lease; not waited for here.
        client = private_redis.client()
        client.delete(*client.keys(f"{PREFIX}:lock:*"))

        result = run_once(load_config(config, {}), clock=ManualClock(datetime.now(UTC)),
                          messages_to=io.StringIO())

    assert result.report.outcome is RunOutcome.OK
    state = read_state(RedisLocation(private_redis.url, prefix=PREFIX))
    assert {task.status for task in state.round.tasks.values()} == {DONE}
    assert state.health[A].health == FAIL and state.health[B].health == OK


def run_told(config: Path, clock: ManualClock) -> str:
    told = io.StringIO()  # no [telegram]: the messages are printed
    result = run_once(load_config(config, {}), clock=clock, messages_to=told)
    assert result.report is not None and result.report.outcome in GOOD_OUTCOMES
    return told.getvalue()


def test_redis_restarted_empty_is_told_once_and_known_problems_come_as_one_list_not_as_new(
        tmp_path, private_redis: PrivateRedis):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        config = configured(tmp_path, sandbox, private_redis.url)
        first = run_told(config, clock)
        generation = private_redis.client().get(f"{PREFIX}:generation")
        remembered = json.loads((tmp_path / "state" / FILE_NAME).read_text())
        assert list(remembered.values()) == [generation]

        private_redis.restart_empty()
        clock.advance(600)
        watchdog_told = io.StringIO()
        run_watchdog(config, watchdog_told, clock=clock)  # between the restart and the next run
        after_loss = run_told(config, clock)
        clock.advance(600)
        later = run_told(config, clock)

    assert "failing" in first and "Store 1" in first
    assert after_loss.count("Redis lost the monitor's state") == 1
    assert f"generation {generation} is missing" in after_loss
    # Store 1 fails as it did: listed once, under the list's head, not alerted as a new failure.
    assert "the first round since the state was lost" in after_loss
    assert after_loss.count("Store 1") == 1 and "is failing" not in after_loss  # no "new failure" line
    assert "Failing (1):\n🔴 Store 1" in after_loss
    assert "lost" not in later  # told once
    assert f"is gone (generation {generation} is missing): Redis lost its data" in watchdog_told.getvalue()
    new_generation = private_redis.client().get(f"{PREFIX}:generation")
    assert new_generation and new_generation != generation
    assert list(json.loads((tmp_path / "state" / FILE_NAME).read_text()).values()) == [new_generation]


def test_a_renewal_that_cannot_reach_redis_waits_a_third_of_the_lease_and_release_sends_nothing(
        private_redis: PrivateRedis):
    location = RedisLocation(private_redis.url, prefix=PREFIX)
    lock = RedisLock(location, "run", lease=0.3)
    assert lock.acquire(timeout=0)
    calls = []
    renew = location.renew_script
    location.renew_script = lambda **kwargs: calls.append(time.monotonic()) or renew(**kwargs)
    private_redis.kill()
    time.sleep(0.45)  # four renewal periods of 0.1 s
    assert 2 <= len(calls) <= 5, calls  # one try per period, never a loop
    with pytest.raises(StateUnavailable):  # what the holder's next command meets
        location.ping()
    started = time.monotonic()
    lock.release()
    assert time.monotonic() - started < 0.1
    lock._renewer.join(timeout=1)
    assert not lock._renewer.is_alive()


def test_a_renewal_that_finds_the_lock_gone_stops_and_the_next_save_says_redis_lost_its_data(
        private_redis: PrivateRedis, tmp_path):
    location = RedisLocation(private_redis.url, prefix=PREFIX, memory_dir=tmp_path)
    lock = RedisLock(location, "run", lease=0.3)
    assert lock.acquire(timeout=0)
    store = location.open()
    store.set_property("a", "1")
    private_redis.client().flushall()  # this test's own Redis: what a restart without data leaves
    lock._renewer.join(timeout=1)  # the next renewal finds the lock gone and ends the thread
    assert not lock._renewer.is_alive() and lock.lost
    with pytest.raises(StateError, match="lost its data while this process worked"):
        store.set_property("b", "2")
    lock.release()


def test_a_second_host_learns_the_new_generation_without_telling_the_loss_again(
        tmp_path, private_redis: PrivateRedis):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        host_one = configured(tmp_path / "one", sandbox, private_redis.url)
        host_two = configured(tmp_path / "two", sandbox, private_redis.url)
        run_told(host_one, clock)
        clock.advance(600)
        run_told(host_two, clock)  # the same state, from another machine's cron
        private_redis.restart_empty()
        clock.advance(600)
        first_to_notice = run_told(host_one, clock)
        clock.advance(600)
        other = run_told(host_two, clock)

    assert first_to_notice.count("Redis lost the monitor's state") == 1
    assert "lost" not in other
    generation = private_redis.client().get(f"{PREFIX}:generation")
    for host in ("one", "two"):
        assert list(json.loads((tmp_path / host / "state" / FILE_NAME).read_text()).values()) == [generation]


def test_a_run_whose_redis_dies_while_it_sends_ends_at_the_notifiers_save_with_one_line(
        tmp_path, private_redis: PrivateRedis):
    telegram = FakeTelegram(SystemClock())
    telegram.add_token(TELEGRAM_TOKEN)
    telegram.add_chat(TELEGRAM_CHAT)

    def redis_dies_during_the_send(request):
        if request.path.endswith("/sendMessage"):
            private_redis.kill()  # Telegram takes the message; the save after it finds no Redis
        return telegram(request)

    with (
        HTTPServerThread(redis_dies_during_the_send) as server,
        running_sandbox(telegram=False, latency="off") as sandbox,
    ):
        config = configured(tmp_path, sandbox, private_redis.url)
        with config.open("a", encoding="utf-8") as text:
            text.write(f'\n[telegram]\nchat_id = "{TELEGRAM_CHAT}"\napi_base = "{server.base_url}"\n'
                       'listen = false\n')
        process = subprocess.Popen(
            [sys.executable, "-m", "monitor.cli", "run", "--config", str(config), "--budget", str(BUDGET),
             "--no-progress"], cwd=config.parent, env={**clean_env(), "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, stderr = process.communicate(timeout=30)

    assert process.returncode == 1, stderr
    assert seconds_since_the_run_started(stderr) < BUDGET + 5
    assert "Traceback" not in stderr and TELEGRAM_TOKEN not in stderr
    [line] = plain_lines(stderr)
    assert "while saving: ConnectionError" in line
    assert len(telegram.messages(TELEGRAM_CHAT)) == 1  # the alert went; only its save was lost
