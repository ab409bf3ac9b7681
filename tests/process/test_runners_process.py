"""Three `sheet-monitor run` processes sharing one Redis state, killed at random instants.

As cron would start them on three hosts: each is ``python -m monitor.cli run`` with its own
``[state] runner``, against the sandbox (real HTTP on 127.0.0.1) and a fake Telegram, the state under
a key prefix of this test's own on the machine's Redis. Over several short rounds, 20 `kill -9`s land
at random instants; then the runners go on until the last round is done. What must hold:

- exactly one runner started each round, and every spreadsheet was judged in every round;
- no spreadsheet was read twice in a round except after a lost lease (a reclaimed task of a dead run,
  which the runs log) or a retry, counted from the sandbox's own request log;
- no read was refused for quota (the runners pace together, through the log they share);
- each spreadsheet's failure was told once, whichever runner saw it.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from redis_fixtures import REDIS_URL
from sandbox_fixtures import clean_env, served_dataset

from monitor.core.clock import SystemClock
from monitor.engine.tasks import FINISHED
from monitor.state import read_state
from monitor.storage.redis_store import RedisLocation
from sheet_sandbox.http import HTTPServerThread
from sheet_sandbox.telegram import FakeTelegram

RUNNERS = ("host-a", "host-b", "host-c")
KILLS = 20
ROUNDS = 4
SHEETS = 24
BATCH_GET = "values.batchGet"
TELEGRAM_TOKEN, TELEGRAM_CHAT = "123456:sandbox-token", -1001234567890
# The sandbox grants 600 reads a minute to the one service account, and the config says so: the
# runners pace together, through the quota log they share on Redis, where a killed run's sends stay
# counted (a share of it per runner would leave the rounds after the kills too slow to finish).
GOOGLE_QUOTA = 600


def test_three_runners_killed_at_random_share_the_rounds_and_lose_nothing(tmp_path, redis_location):
    rng = random.Random(20261130)
    telegram = FakeTelegram(SystemClock())
    telegram.add_token(TELEGRAM_TOKEN)
    telegram.add_chat(TELEGRAM_CHAT)
    # Each kill leaves suspects, read alone once their lease is gone, and its round open until then:
    # at the default 5 s a run kept them waiting, with nothing in flight to kill, half of a round's
    # interval. 1 s is still past a run's start-up and its first burst of reads.
    run = {"round_interval": "6s", "budget": "10s", "change_detection": False, "suspects_after": "1s"}
    with (
        HTTPServerThread(telegram) as telegram_server,
        served_dataset(tmp_path, SHEETS, seed=11, faults=False, read_per_user=GOOGLE_QUOTA,
                       read_per_project=GOOGLE_QUOTA, config_read_per_user=GOOGLE_QUOTA,
                       config_read_per_project=GOOGLE_QUOTA, run_section=run) as served,
    ):
        served.fault(spreadsheet="*", latency_ms=120)  # several reads in flight per runner
        configs = runner_configs(served.config_path, redis_location.prefix, telegram_server.base_url)
        env = {**clean_env(), "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN}
        crons = [Cron(runner, path, env, served.folder, redis_location) for runner, path in configs.items()]
        kills = cron_with_kills(crons, rng)
        finish_the_rounds(crons, redis_location)

        logs = [line for cron in crons for line in cron.lines]
        state = read_state(redis_location)
        stats = served.sandbox.google.stats.snapshot()
        rounds = [line for line in logs if line["event"] == "round_started"]
        by_round = Counter(line["round_id"] for line in rounds)
        assert len(by_round) >= ROUNDS, f"only {len(by_round)} rounds in the test's time"
        assert max(by_round.values()) == 1, by_round  # exactly one runner started each round
        judged = defaultdict(set)
        for line in logs:
            if line["event"] in ("task_done", "task_failed", "task_skipped"):
                judged[line["task_id"].rpartition("-")[0]].add(line["spreadsheet_id"])
        for round_id in by_round:
            assert judged[round_id] == set(served.ids), f"round {round_id} left some unjudged"

        reclaimed = Counter(line["spreadsheet_id"] for line in logs if line["event"] == "task_reclaimed")
        retried = Counter(line["spreadsheet_id"] for line in logs if line["event"] == "task_retry")
        for sheet_id in served.ids:
            reads = stats["by_spreadsheet"].get(sheet_id, {}).get(BATCH_GET, 0)
            allowed = len(by_round) + reclaimed[sheet_id] + retried[sheet_id]
            assert reads <= allowed, f"{sheet_id} read {reads} times, at most {allowed} explained"
        assert stats["quota_exceeded"] == 0
        assert kills == KILLS
        assert sum(reclaimed.values()) >= KILLS // 2, "too few kills landed with reads in flight"

        told = told_per_spreadsheet(telegram, served)
        failing = {sid for sid, health in served.expected_health().items() if health != "ok"}
        assert failing, "the dataset has failures to tell"
        texts = [message.plain_text[:300] for message in telegram.messages(TELEGRAM_CHAT)]
        for sheet_id in failing:
            assert told[sheet_id] == 1, f"{sheet_id} told {told[sheet_id]} times: {texts}"
        assert {task.status for task in state.round.tasks.values()} <= FINISHED
        assert set(state.runner_heartbeats) == set(RUNNERS)
        argv = [sys.executable, "-m", "monitor.cli", "status", "--json", "--config", str(configs[RUNNERS[0]])]
        status = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
        assert set(json.loads(status.stdout)["runners"]) == set(RUNNERS)  # status shows each runner


def runner_configs(config_path: Path, prefix: str, telegram_url: str) -> dict[str, Path]:
    """One config per runner: the same, with its own name and the shared Redis and Telegram."""
    base = config_path.read_text(encoding="utf-8")
    configs = {}
    for runner in RUNNERS:
        path = config_path.with_name(f"{runner}.toml")
        path.write_text(base + f'\n[telegram]\nchat_id = "{TELEGRAM_CHAT}"\napi_base = "{telegram_url}"\n'
                        'listen = false\n'
                        f'\n[state]\nbackend = "redis"\nurl = "{REDIS_URL}"\nprefix = "{prefix}"\n'
                        f'runner = "{runner}"\nlease = "3s"\n', encoding="utf-8")
        configs[runner] = path
    return configs


class Cron:
    """One runner's cron line: a run at a time, restarted when it ends; its log lines kept."""

    def __init__(self, runner: str, config: Path, env: dict, folder: Path, location: RedisLocation) -> None:
        self.runner, self.config, self.env, self.folder, self.location = runner, config, env, folder, location
        self.process: subprocess.Popen | None = None
        self.output = ""  # what the current run wrote to stderr so far
        self.lines: list[dict] = []  # every finished run's log lines

    def start(self) -> None:
        argv = [sys.executable, "-m", "monitor.cli", "run", "--config", str(self.config), "--no-progress"]
        self.process = subprocess.Popen(argv, cwd=self.folder, env=self.env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=False)
        self.output = ""

    def pump(self) -> None:
        """Read what the run wrote so far, without waiting."""
        if self.process is None:
            return
        stream = self.process.stderr
        while select.select([stream], [], [], 0)[0]:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            self.output += chunk.decode()

    @property
    def working(self) -> bool:
        """Started work (it holds its lock and logged its start), not finished yet."""
        return self.process is not None and self.process.poll() is None and '"run_started"' in self.output

    def reads_in_flight(self) -> int:
        """How many tasks the working run holds leased now, as the state on Redis says."""
        lines = self.output.splitlines()
        started = next((json.loads(line) for line in lines if '"run_started"' in line), None)
        if started is None:
            return 0
        needle = f'"run_id":"{started["run_id"]}"'
        tasks = self.location.client.hvals(self.location.key("store", "properties"))
        return sum('"status":"processing"' in task and needle in task for task in tasks)

    @property
    def ended(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def kill(self) -> bool:
        """kill -9 the run; False if it had ended just before."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        killed = self.process.returncode == -signal.SIGKILL
        self.collect()
        return killed

    def collect(self) -> None:
        """Wait for the run to end and keep its log lines."""
        if self.process is None:
            return
        _, rest = self.process.communicate(timeout=30)
        text = self.output + (rest or b"").decode()
        self.lines.extend(json.loads(line) for line in text.splitlines() if line.startswith("{"))
        self.process = None

    def own_lock_free(self) -> bool:
        return not self.location.client.exists(self.location.key("lock", f"run-{self.runner}"))


def cron_with_kills(crons: list[Cron], rng: random.Random) -> int:
    """Keep each runner going, as cron would, and kill a working run now and then, at a random
    instant; returns how many kills landed. A killed runner's next run starts once its own lock has
    expired (cron's next tick would; one started earlier only finds the lock held and exits)."""
    for cron in crons:
        cron.start()
    kills, next_kill = 0, time.monotonic() + rng.uniform(0.2, 0.9)
    while kills < KILLS:
        for cron in crons:
            cron.pump()
            if cron.ended:
                cron.collect()
            if cron.process is None and cron.own_lock_free():
                cron.start()
        # Killed with reads in flight (as the state says), the kills the leases must recover from.
        working = [cron for cron in crons if cron.working and cron.reads_in_flight() >= 2]
        if working and time.monotonic() >= next_kill:
            kills += rng.choice(working).kill()
            next_kill = time.monotonic() + rng.uniform(0.2, 0.9)
        time.sleep(0.02)
    for cron in crons:
        cron.collect()
    return kills


def finish_the_rounds(crons: list[Cron], location: RedisLocation) -> None:
    """Runs without kills until ROUNDS rounds have started and the last is done (a killed run's tasks
    wait for its lease to expire, then for a run to read them alone)."""
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        while not all(cron.own_lock_free() for cron in crons):
            time.sleep(0.1)
        for cron in crons:
            cron.start()
        for cron in crons:
            cron.collect()
        state = read_state(location)
        started = sum(line["event"] == "round_started" for cron in crons for line in cron.lines)
        done = state.round.is_complete() and not state.outbox.pending and not len(state.events)
        if started >= ROUNDS and done:
            return
    counts = state.round.counts() if state.round else None
    errors = [task for task in state.round.tasks.values() if task.status not in FINISHED]
    raise AssertionError(f"the rounds were not finished by runs without kills within 40 s: round {counts},"
                         f" {len(state.outbox.pending)} messages, {len(state.events)} events; {errors}")


# A run's message joins its alert and, after it, the round summary and the digest when due, which
# list what still fails by design: only the part before them is counted.
SUMMARIES = re.compile(r"sheet-monitor: round done|sheet-monitor daily digest")


def told_per_spreadsheet(telegram: FakeTelegram, served) -> Counter:
    """How many alerts named each spreadsheet (by its name). Not counted: round summaries and
    digests, and a message sent again after a kill between its request and its save, which says it
    may repeat the one above (docs/architecture.md)."""
    names = {entry.id: entry.title for entry in served.dataset.sheets}
    told = Counter()
    for message in telegram.messages(TELEGRAM_CHAT):
        if "Sent again" in message.plain_text:
            continue
        alert = SUMMARIES.split(message.plain_text, maxsplit=1)[0]
        for sheet_id, name in names.items():
            if name in alert:
                told[sheet_id] += 1
    return told
