"""`sheet-monitor run` as cron starts it: a child process, killed, doubled, hung, or fed bad files.

The sandbox runs in this process (real clock, real HTTP on 127.0.0.1); every run is
``python -m monitor.cli run --config ...`` in its own process, so the lock, the exit codes, the
JSON logs and the state file are exercised exactly as in production.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import select
import signal
import subprocess
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from process_helpers import kill_now
from sandbox_fixtures import ServedDataset, clean_env, served_dataset

from monitor.core.clock import SystemClock
from monitor.core.errors import POISON
from monitor.engine.health import ERROR, UNKNOWN
from monitor.engine.heartbeat import RunOutcome
from monitor.engine.mutes import Mute
from monitor.engine.tasks import DONE, FAILED, POISON_INTERRUPTIONS, PROCESSING
from monitor.notify.documents import Outbox, PendingMessage
from monitor.state import changing_state
from monitor.storage import FileLocation
from sheet_sandbox.http import HTTPServerThread, Response
from sheet_sandbox.telegram import FakeTelegram

KILLS = 20
# The generous per-user quota keeps the killed runs (which never save their quota log) from
# meeting 429s; pacing is tested elsewhere.
FAST_QUOTA = {"read_per_user": 6000, "read_per_project": 6000}


def log_lines(stderr: str) -> list[dict]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def wait_for_first_line(process, timeout: float = 10.0) -> float:
    """Block until the run's first log line (it holds the lock and has saved its first checkpoint)."""
    readable, _, _ = select.select([process.stderr], [], [], timeout)
    assert readable, f"the run logged nothing within {timeout} s"
    line = process.stderr.readline()
    assert line, f"the run ended before logging anything (exit {process.wait()})"
    return time.monotonic()


def loads_cleanly(served: ServedDataset):
    """The state as a reader sees it; the main file itself must be good (no fallback to the copy)."""
    store = FileLocation(served.state_dir).open(read_only=True)
    try:
        assert store.restore_report is None, store.restore_report
    finally:
        store.close()
    return served.state()


def waiting_in_the_outbox(served: ServedDataset, messages: dict[str, str]) -> None:
    """Messages (key -> text) left over from runs that could not reach Telegram."""
    created = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
    with changing_state(served.state_dir, actor="admin-test", now=created) as session:
        session.state.outbox = Outbox(pending=tuple(
            PendingMessage(key, text, created, attempts=1) for key, text in messages.items()
        ))


def assert_every_spreadsheet_accounted_for(served: ServedDataset, state) -> None:
    tasks = list(state.round.tasks.values())
    assert len(tasks) == len(served.ids)
    assert sorted(task.target for task in tasks) == sorted(served.ids)
    assert {task.status for task in tasks} <= {DONE, FAILED}
    for sheet_id in served.ids:
        record = state.health.get(sheet_id)
        assert (record is not None and record.health != UNKNOWN) or sheet_id in state.dlq, sheet_id


# -- kill -9 ---------------------------------------------------------------------------------------


def test_runs_killed_at_random_moments_with_several_reads_in_flight_lose_nothing(tmp_path):
    rng = random.Random(20261129)
    # A minute's timeout: the hanging sheet is never let go by a timeout, only by a kill.
    # Suspects wait 1 s into a run, not 5: each run that reads them alone after the kills (the
    # round's leftovers first) would otherwise idle that long before its first.
    with served_dataset(tmp_path, 200, seed=5, faults=False, request_timeout="60s", **FAST_QUOTA,
                        config_read_per_user=1500, config_read_per_project=1500,
                        run_section={"suspects_after": "1s"}) as served:
        # 150 ms per read paced at 25 reads/s keeps several reads in flight (Little's law: 25 reads/s
        # x 0.15 s, and a spare) and the round going for 8 s: most kills land while it reads.
        served.fault(spreadsheet="*", latency_ms=150)
        # One spreadsheet hangs: killed runs hold it among others, which blames none of them.
        wedged = next(entry.id for entry in served.dataset.sheets[40:] if entry.kind == "healthy")
        served.fault(spreadsheet=wedged, hang=True)
        # Two merely slow ones (1.5 and 3 s): often in flight when a run is killed, never poison.
        slow = [entry.id for entry in served.dataset.sheets[60:] if entry.kind == "healthy"][:2]
        for sheet_id, seconds in zip(slow, (1.5, 3.0), strict=True):
            served.fault(spreadsheet=sheet_id, latency_ms=seconds * 1000)
        alone = set()  # (task id, interruptions) of every task a kill left alone in processing
        together = 0  # kills that left several tasks processing
        for kill in range(KILLS):
            process = served.start_run()
            # Most kills are timed from the run's first log line, some from the process start (they
            # land in start-up: config, lock, state load, recovery).
            since = time.monotonic() if kill % 4 == 3 else wait_for_first_line(process)
            time.sleep(max(0.0, since + rng.uniform(0.05, 0.8) - time.monotonic()))
            kill_now(process)
            if served.state_file.exists():  # else killed before its first save: nothing to check yet
                held = processing(loads_cleanly(served))
                alone.update((task.id, task.interruptions) for task in held if len(held) == 1)
                together += len(held) > 1
        assert together >= KILLS // 4, "too few kills landed with several reads in flight"

        # From here the round's leftovers and then its suspects, one at a time and alone (dozens, each
        # kill above left its reads in flight quarantined): the latency that kept several reads out
        # for those kills would only make each wait. The hanging and the slow ones keep theirs.
        served.sandbox.google.faults.clear("*")
        kill_while_read_alone(served, wedged, alone)
        served.sandbox.google.faults.clear(wedged)  # had it escaped the guard, it must not stall the end
        for _ in range(3):  # let the round finish
            result = served.run_cli("--budget", "30")
            assert result.returncode == 0, result.stderr
            state = loads_cleanly(served)
            if state.round.is_complete():
                break

        assert_every_spreadsheet_accounted_for(served, state)
        tasks = state.round.tasks.values()
        # Only a kill that left one task in flight counted against it, once, in the next run.
        assert sum(task.interruptions for task in tasks) == len(alone)
        poisoned = {t.target for t in tasks if t.last_error and t.last_error.error_class == POISON}
        assert poisoned == {wedged}  # never one that was merely in flight with it
        assert state.dlq.get(wedged).last_error.error_class == POISON
        assert state.health[wedged].health == ERROR
        expected = served.expected_health()
        for sheet_id in set(served.ids) - poisoned:
            assert state.health[sheet_id].health == expected[sheet_id], sheet_id
            assert (sheet_id in state.dlq) == (expected[sheet_id] == "error"), sheet_id
        # Nothing told twice: a result a kill lost before its save was never published either.
        told = Counter((e.spreadsheet_id, e.KIND) for e in state.events if hasattr(e, "spreadsheet_id"))
        assert max(told.values(), default=1) == 1, told.most_common(3)


def kill_while_read_alone(served, wedged: str, alone: set) -> None:
    """The poison guard still works: a run killed while the hanging sheet is read alone (after the
    round's other work) counts against it, and three such kills dead-letter it. Adds each such kill's
    (task id, interruptions) to ``alone``."""
    for _ in range(POISON_INTERRUPTIONS * 3):
        process = served.start_run()
        wait_for_first_line(process)  # it has recovered what the last kill left, and saved
        drained(process)  # a round of 200 logs more than a pipe holds: unread, the run would block
        state = loads_cleanly(served)
        if state.round.tasks[task_of(state, wedged)].status is FAILED:
            process.communicate()  # dead-lettered by this run's recovery: let it finish the round
            return
        # Pending work first (up to 200 reads at 25/s, a first read two requests), then the suspect.
        # On a loaded machine a run may spend its budget before it gets there: the next run goes on.
        held = wait_until(lambda: processing(loads_cleanly(served)),
                          lambda held, run=process: run.poll() is not None
                          or (len(held) == 1 and held[0].target == wedged), timeout=60.0)
        if process.poll() is not None:
            continue
        alone.add((held[0].id, held[0].interruptions))
        kill_now(process)


def drained(process: subprocess.Popen) -> None:
    """Read and drop what ``process`` writes to stderr from now on, on a thread of its own."""
    threading.Thread(target=process.stderr.read, daemon=True).start()


def processing(state) -> list:
    return [task for task in state.round.tasks.values() if task.status == PROCESSING] if state.round else []


def task_of(state, spreadsheet_id: str) -> str:
    return next(task.id for task in state.round.tasks.values() if task.target == spreadsheet_id)


def wait_until(read, good, timeout: float = 20.0):
    """Poll ``read()`` every 20 ms until ``good`` holds for what it returns; that value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = read()
        if good(value):
            return value
        time.sleep(0.02)
    raise AssertionError(f"not within {timeout} s; last seen: {value!r}"[:500])


# -- a crash loop over the whole budget ------------------------------------------------------------

# Short, under request_timeout (30 s) plus the reserve: 7 s to read, enough for the slow
# spreadsheet's 3 s on a loaded machine, too little for it to wait out a run's first CRASH_SUSPECTS_AFTER
# as a suspect (what is left would be shorter than the 6 s its answer is due in), so it goes at once.
CRASH_BUDGET = 10.0
# How long a run keeps its suspects waiting. The killer's read is one (each kill of it makes it one
# again) and, its answer time unknown, waits it out: at the default 5 s each of its kills alone
# cost a run of idle waiting. 1 s keeps both ways a suspect goes (at once, and after the wait).
CRASH_SUSPECTS_AFTER = "1s"
CRASH_KILLS = 12


class KillingRead:
    """Stands for a spreadsheet whose read kills the process (its answer would exhaust memory): the
    run in progress is killed the moment the sandbox receives a read of ``sheet``."""

    def __init__(self, served: ServedDataset, sheet: str) -> None:
        self.served, self.sheet = served, sheet
        self.process: subprocess.Popen | None = None  # the run in progress
        self.kills = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> KillingRead:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def kill(self, process: subprocess.Popen) -> None:
        """kill -9 ``process`` unless it has ended (or been killed) already."""
        with self._lock:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait()

    def _reads(self) -> int:
        return sum(self.served.sandbox.google.stats.of_spreadsheet(self.sheet).values())

    def _watch(self) -> None:
        seen = self._reads()
        while not self._stop.wait(0.02):
            reads, process = self._reads(), self.process
            if reads > seen and process is not None and process.poll() is None:
                self.kill(process)
                self.kills += 1
            seen = reads


def test_a_crash_loop_at_random_moments_over_the_whole_budget_poisons_only_what_hangs_or_kills(tmp_path):
    """A short budget, runs killed at any moment of it: a slow spreadsheet (3 s) is never counted
    for a kill, one that answered once and then hangs is blamed, one whose read kills the process is
    poison after its bounded number of kills, and every spreadsheet gets its verdict."""
    rng = random.Random(20261201)
    with served_dataset(tmp_path, 12, seed=8, faults=False, **FAST_QUOTA,
                        run_section={"round_interval": "1s", "change_detection": False,
                                     "suspects_after": CRASH_SUSPECTS_AFTER}) as served:
        with served.config_path.open("a", encoding="utf-8") as config:
            config.write('\n[breaker]\nunreadable_after = "10s"\n')  # a verdict within the test
        served.fault(spreadsheet="*", latency_ms=150)
        healthy = [entry.id for entry in served.dataset.sheets if entry.kind == "healthy"]
        slow, hanging, killer = healthy[:3]
        served.fault(spreadsheet=slow, latency_ms=3000)
        served.fault(spreadsheet=killer, latency_ms=5000)  # killed long before it could answer
        # The killer is muted while the crash loop goes on, or its kills would crowd out the random
        # ones: never read, it never answered, and nothing says when an answer of it is due.
        mute(served, killer, minutes=60)
        alone = Counter()  # spreadsheet -> kills that found it alone in flight
        killed_by_reads = Counter()  # round id -> runs the killer's read killed in it

        def one_run(killing_read: KillingRead, kill_at: tuple[bool, float] | None = None):
            """A run, killed at ``kill_at`` (timed from the process start?, seconds) unless it ends
            first; the state it leaves."""
            process = served.start_run("--budget", str(CRASH_BUDGET))
            killing_read.process, before = process, killing_read.kills
            if kill_at is not None:
                from_start, seconds = kill_at
                since = time.monotonic() if from_start else first_line_or_end(process)
                time.sleep(max(0.0, since + seconds - time.monotonic()))
                killing_read.kill(process)
            process.communicate(timeout=60)
            killing_read.process = None
            state = loads_cleanly(served)
            killed_by_reads[state.round.id] += killing_read.kills - before
            held = processing(state)
            alone.update(task.target for task in held if len(held) == 1)
            task = next(task for task in state.round.tasks.values() if task.target == slow)
            assert task.interruptions == 0 and slow not in state.dlq, task
            return state

        with KillingRead(served, killer) as killing_read:
            for _ in range(5):  # until the slow one has answered once
                if getattr(one_run(killing_read).health.get(slow), "read_seconds", ()):
                    break
            assert loads_cleanly(served).health[slow].read_seconds, "the slow one never answered"
            served.fault(spreadsheet=hanging, hang=True)  # it answered once; from now on it hangs
            # On until two kills found the slow one alone in flight: a loaded machine shifts where
            # kills land, and these are the kills that test it.
            for kill in itertools.count():
                if kill >= CRASH_KILLS and alone[slow] >= 2 or kill >= 3 * CRASH_KILLS:
                    break
                one_run(killing_read, (kill % 4 == 3, rng.uniform(0.0, CRASH_BUDGET)))
            assert alone[slow] >= 2, "too few kills landed while the slow one was read alone"
            mute(served, killer, minutes=0)
            for _ in range(12):  # no more random kills; the killer's read still kills
                state = one_run(killing_read)
                if judged(state, served.ids) and killer in state.dlq and hanging in state.breakers:
                    break

        assert judged(state, served.ids), {sheet: state.health[sheet].health for sheet in served.ids}
        assert slow not in state.dlq and state.health[slow].health == "ok"
        assert state.dlq[killer].last_error.error_class == POISON
        # Once killed among others, then three times alone: never more runs in a round.
        assert 0 < max(killed_by_reads.values()) <= 1 + POISON_INTERRUPTIONS, killed_by_reads
        # Never answering within a budget shorter than its timeout, it is blamed all the same.
        assert state.health[hanging].health == ERROR and hanging in state.breakers
        expected = served.expected_health()
        for sheet_id in set(served.ids) - {slow, hanging, killer}:
            assert state.health[sheet_id].health == expected[sheet_id], sheet_id


def judged(state, sheet_ids) -> bool:
    """Has every one of ``sheet_ids`` a verdict (or a dead letter)?"""
    return all(sheet_id in state.dlq or getattr(state.health.get(sheet_id), "health", UNKNOWN) != UNKNOWN
               for sheet_id in sheet_ids)


def mute(served: ServedDataset, sheet_id: str, minutes: int) -> None:
    """Mute ``sheet_id`` for ``minutes`` (0: unmute), as `sheet-monitor mute` does."""
    now = datetime.now(UTC)
    with changing_state(served.state_dir, actor="admin-test", now=now) as session:
        if minutes:
            session.state.mutes[sheet_id] = Mute(until=now + timedelta(minutes=minutes), reason="later")
        else:
            del session.state.mutes[sheet_id]


def first_line_or_end(process) -> float:
    """When the run logged its first line (it holds the lock, its budget counts), or ended first."""
    readable, _, _ = select.select([process.stderr], [], [], 10.0)
    assert readable, "the run logged nothing within 10 s"
    process.stderr.readline()
    return time.monotonic()


# -- two runs at once -------------------------------------------------------------------------------


def test_of_two_runs_started_together_one_works_and_the_other_exits_at_once(tmp_path):
    with served_dataset(tmp_path, 60, faults=False, **FAST_QUOTA) as served:
        # The winner needs ~3 s for its round: 60 reads of 0.8 s, 16 at a time (the config's ceiling).
        served.fault(spreadsheet="*", latency_ms=800)
        started = time.monotonic()
        processes = [served.start_run(), served.start_run()]
        exits = {}
        while len(exits) < 2:
            for index, process in enumerate(processes):
                if index not in exits and process.poll() is not None:
                    exits[index] = time.monotonic() - started
            time.sleep(0.01)
        outputs = [process.communicate() for process in processes]
        loser = min(exits, key=exits.get)
        winner = 1 - loser

        assert [process.returncode for process in processes] == [0, 0]
        lines = log_lines(outputs[loser][1])
        assert outputs[loser][1].count("\n") == 1 and [line["event"] for line in lines] == ["run_skipped"]
        assert outputs[loser][0] == ""
        # It gave way at once instead of waiting for the lock: it was gone long before the winner's
        # round was done. Its own start-up (interpreter, imports, config) takes
        # ~0.5 s on an idle machine but over 1 s on two busy cores, so a fixed bound would measure
        # the machine rather than the lock.
        assert exits[loser] < exits[winner] - 1.5, f"the second run took {exits[loser]:.2f} s to give way"
        finished = [line for line in log_lines(outputs[winner][1]) if line["event"] == "run_finished"]
        # A store showing #N/A or #REF! is read twice: then with Google's details (engine.inspect).
        reads = 60 + len(served.dataset.of_kind("formula_errors"))
        assert finished[0]["stop_reason"] == "round_done" and finished[0]["tasks"] == reads


# -- every request hanging ----------------------------------------------------------------------------


@pytest.mark.parametrize("hanging", ["sheets", "token"])
def test_a_run_whose_every_request_hangs_ends_within_budget_and_saves(tmp_path, hanging):
    budget = 6  # 3 s of it usable after the reserve: enough for requests to start and hang
    with (
        HTTPServerThread(lambda request: Response(hang=True)) as black_hole,
        served_dataset(tmp_path, 20, faults=False) as served,
    ):
        if hanging == "sheets":
            served.fault(spreadsheet="*", hang=True)  # the config keeps its default 30 s timeout
        else:  # google-auth's token request never gets an answer
            for path in (served.folder / "secrets").glob("*.json"):
                credential = json.loads(path.read_text(encoding="utf-8"))
                credential["token_uri"] = f"{black_hole.base_url}/token"
                path.write_text(json.dumps(credential), encoding="utf-8")
        started = time.monotonic()
        result = served.run_cli("--budget", str(budget))
        elapsed = time.monotonic() - started

        assert result.returncode == 0, result.stderr
        assert elapsed <= budget + 5, f"a {budget} s run took {elapsed:.1f} s"
        heartbeat = loads_cleanly(served).heartbeat
        assert heartbeat.finished_at and heartbeat.outcome == RunOutcome.DEGRADED  # nothing could be read
        assert heartbeat.stats.stop_reason == "budget" and heartbeat.stats.counts.tasks_done == 0


TELEGRAM_TOKEN, TELEGRAM_CHAT = "123456:sandbox-token", -1001234567890


def slow(response):  # every answer after 2.5 s: slow, yet within the timeout the notifier sets
    response.delay_seconds = 2.5
    return response


@pytest.mark.parametrize("trouble", ["slow", "rate_limited"])
def test_a_troubled_telegram_with_a_backlog_does_not_hold_the_run_past_its_budget(tmp_path, trouble):
    budget = 4
    telegram = FakeTelegram(SystemClock())
    telegram.add_token(TELEGRAM_TOKEN)
    telegram.add_chat(TELEGRAM_CHAT)
    if trouble == "rate_limited":
        telegram.force_rate_limit(count=2, retry_after=20)  # the sender would sleep 20 s, twice
    answer = slow if trouble == "slow" else (lambda response: response)

    with (
        HTTPServerThread(lambda request: answer(telegram(request))) as server,
        served_dataset(tmp_path, 5, faults=False) as served,
    ):
        with served.config_path.open("a", encoding="utf-8") as config:
            config.write(f'\n[telegram]\nchat_id = "{TELEGRAM_CHAT}"\napi_base = "{server.base_url}"\n'
                         'listen = false\n')
        waiting_in_the_outbox(served, {f"backlog:{n}": f"backlog {n}" for n in range(8)})
        env = {**clean_env(), "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN}
        started = time.monotonic()
        result = subprocess.run(served.run_argv("--budget", str(budget)), cwd=served.folder, env=env,
                                capture_output=True, text=True, timeout=90)
        elapsed = time.monotonic() - started

        assert result.returncode == 0, result.stderr
        assert elapsed <= budget + 5, f"a {budget} s run took {elapsed:.1f} s"
        sent = {message.text for message in telegram.messages(TELEGRAM_CHAT)}
        kept = {entry.key for entry in served.state().outbox.pending}
        assert kept  # what did not fit in the budget waits for the next run
        assert all(f"backlog {n}" in sent or f"backlog:{n}" in kept for n in range(8))  # none lost


# -- a broken state file ------------------------------------------------------------------------------


def finished_state(tmp_path):
    """A dataset whose round is done and saved (main file and last good copy both exist)."""
    return served_dataset(tmp_path, 12, faults=False)


def test_a_corrupted_state_file_is_restored_from_the_last_good_copy_with_an_event(tmp_path):
    with finished_state(tmp_path) as served:
        assert served.run_cli().returncode == 0
        good = loads_cleanly(served)
        torn = b'{"meta": {"1": {"schema_version": 2, "generation": 1}}, "properties": {"1": {"round": "{'
        served.state_file.write_bytes(torn)

        result = served.run_cli()

        assert result.returncode == 0, result.stderr
        assert "state_restored" in [line["event"] for line in log_lines(result.stderr)]
        assert "the last good copy was used" in result.stdout  # the event, as the notifier sent it
        state = loads_cleanly(served)
        assert state.round.id == good.round.id and state.health.keys() == good.health.keys()
        aside = list(served.state_dir.glob("properties.json.corrupt-*"))
        assert len(aside) == 1 and aside[0].read_bytes() == torn


def test_when_both_state_files_are_unreadable_the_run_exits_1_and_leaves_them(tmp_path):
    with finished_state(tmp_path) as served:
        assert served.run_cli().returncode == 0
        backup = served.state_file.with_name("properties.json.bak")
        served.state_file.write_bytes(b"\x00\x00 torn")
        backup.write_bytes(b"")
        before = snapshot(served.state_dir)

        result = served.run_cli()

        assert result.returncode == 1
        message = result.stderr.splitlines()[-1]
        assert str(served.state_file) in message and str(backup) in message
        assert "copy a good version" in message and "move both files aside" in message
        assert snapshot(served.state_dir) == before


# -- a bad config ---------------------------------------------------------------------------------------


def test_a_bad_config_exits_2_naming_file_and_line_and_leaves_the_state_alone(tmp_path):
    with finished_state(tmp_path) as served:
        assert served.run_cli().returncode == 0
        before = snapshot(served.state_dir)
        lines = served.config_path.read_text(encoding="utf-8").splitlines()
        at = lines.index("[run]") + 1
        lines.insert(at, 'budgett = "4m"')
        served.config_path.write_text("\n".join(lines), encoding="utf-8")

        result = served.run_cli()

        assert result.returncode == 2
        assert f"{served.config_path.name}:{at + 1}" in result.stderr
        assert "budgett" in result.stderr
        assert snapshot(served.state_dir) == before


def test_a_bad_config_creates_no_state_folder(tmp_path):
    with served_dataset(tmp_path, 3, faults=False) as served:
        served.config_path.write_text(
            re.sub(r'(?m)^budget = .*$', 'budget = "soon"', served.config_path.read_text(encoding="utf-8")),
            encoding="utf-8",
        )
        result = served.run_cli()
        assert result.returncode == 2
        assert f"{served.config_path.name}:" in result.stderr and "budget" in result.stderr
        assert not served.state_dir.exists()


def snapshot(folder) -> dict[str, tuple[bytes, int]]:
    """Every state file in ``folder`` (main, copy, set-aside) with its bytes and modification time."""
    return {
        path.name: (path.read_bytes(), os.stat(path).st_mtime_ns)
        for path in sorted(folder.glob("properties.json*"))
    }


def test_a_blocked_bot_fails_the_run_in_one_line_and_its_held_news_arrives_as_one_late_message(tmp_path):
    telegram = FakeTelegram(SystemClock())
    telegram.add_token(TELEGRAM_TOKEN)
    telegram.add_chat(TELEGRAM_CHAT)
    telegram.block_chat(TELEGRAM_CHAT)
    with HTTPServerThread(telegram) as server, served_dataset(tmp_path, 3, faults=False) as served:
        with served.config_path.open("a", encoding="utf-8") as config:
            config.write(f'\n[telegram]\nchat_id = "{TELEGRAM_CHAT}"\napi_base = "{server.base_url}"\n'
                         'listen = false\n')
        waiting_in_the_outbox(served, {"held": "held message"})
        env = {**clean_env(), "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN}
        refused = subprocess.run(served.run_argv("--budget", "6"), cwd=served.folder, env=env,
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1
        assert "Telegram refuses the chat (403 Forbidden: bot was kicked" in refused.stderr
        assert TELEGRAM_TOKEN not in refused.stderr + refused.stdout
        state = served.state()
        assert state.outbox.halted.status == 403
        assert not telegram.messages(TELEGRAM_CHAT)

        telegram.reset(full=False)
        telegram.add_token(TELEGRAM_TOKEN)
        telegram.add_chat(TELEGRAM_CHAT)
        subprocess.run(served.run_argv("--budget", "6"), cwd=served.folder, env=env, check=True,
                       capture_output=True, timeout=60)
        texts = [message.plain_text for message in telegram.messages(TELEGRAM_CHAT)]
        assert texts[0].startswith("📵 Held back since")
        assert "held message" in texts[0]
        assert sum("held message" in text for text in texts) == 1
