"""Reading only what changed, end to end: no edit is ever lost, and nothing unread goes untold.

Against the sandbox over real HTTP (gspread, google-auth, Drive's change feed), two ways:
- ``sheet-monitor run`` as cron starts it (child processes, the real clock, rounds a second or
  three apart, and Drive's change-feed delay at the same scale: 5 minutes are a second), killed
  with SIGKILL at random moments while spreadsheets are edited through the control API: every edit
  is read, in the first round built after Drive shows it or the next;
- ``run_once`` in this process on a ManualClock shared with the sandbox, where hours must pass: an
  unedited spreadsheet goes stale and is told without a read, values changed without a Drive change
  are seen within ``max_age`` (every round with ``always_read``), a spreadsheet whose access is
  removed is dead-lettered, a failing Drive makes rounds read everything until it answers.
Whether a spreadsheet was read is the sandbox's count of the reads of values that named it (``reads_of``).
"""

from __future__ import annotations

import io
import itertools
import random
import subprocess
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from cli_fixtures import write_config
from process_helpers import RunLog, kill_now, try_kill
from sandbox_fixtures import ServedDataset, drive_caught_up, served_dataset

from monitor.app.run import RunResult, run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.engine.events import ChangeFeedFailing, ChangeFeedRecovered, DeadLettered, HealthChanged
from monitor.engine.health import ERROR, FAIL, OK, WARN
from monitor.engine.tasks import PROCESSING
from monitor.state import State, read_state
from monitor.storage import FileLocation
from sheet_sandbox.server import SandboxHandle, running_sandbox

BATCH_GET = "GET /v4/spreadsheets/{id}/values:batchGet"
GRID_GET = "GET /v4/spreadsheets/{id}"
DRIVE_ASKS = ("GET /drive/v3/changes", "GET /drive/v3/changes/startPageToken")
QUANTITY = 5  # the Stock tab's Quantity column in a generated spreadsheet (F)
# Generous quotas: killed runs never save their quota log, and pacing is tested elsewhere.
FAST_QUOTA = {"read_per_user": 6000, "read_per_project": 6000,
              "config_read_per_user": 1500, "config_read_per_project": 1500}
# Google's change-feed delay at the rounds' scale (5 minutes are a second here): an edit reaches
# Drive's feed at its spreadsheet's next moment, every 0.6 s per spreadsheet, at most 2 s late.
FEED_DELAY = 1 / 300


def reads_of(sandbox: SandboxHandle, spreadsheet_id: str) -> int:
    """The reads of values the sandbox answered for ``spreadsheet_id``, whatever the answer: batchGets,
    and the spreadsheets.get that reads the values with the time zone (or with Google's details)."""
    requests = sandbox.google.stats.of_spreadsheet(spreadsheet_id)
    return requests.get(BATCH_GET, 0) + requests.get(GRID_GET, 0)


# == child processes, the real clock ===============================================================


@dataclass
class Edit:
    at: datetime  # just before the edit was sent
    quantity: int  # the value the edit wrote into its first Quantity cell
    shown_by: datetime  # when Drive's change feed has it (its spreadsheet's moment)


def edited(payload: dict, quantity: int) -> dict:
    """A generated spreadsheet's control payload with its first Quantity cell set to ``quantity``
    (negative: the threshold check fails and names the value); no modifiedTime, so it is now."""
    header, first, *rest = payload["tabs"]["Stock"]
    first = [*first[:QUANTITY], quantity, *first[QUANTITY + 1:]]
    return {"title": payload["title"], "tabs": {**payload["tabs"], "Stock": [header, first, *rest]}}


class Editor:
    """People editing spreadsheets through the sandbox's control API, as the sandbox's own callers
    would: ``edit`` once, or start ``thread`` to edit at random moments until ``stop``."""

    def __init__(self, served: ServedDataset, ids: list[str], rng: random.Random,
                 pause: tuple[float, float] = (0.04, 0.2)) -> None:
        self.served = served
        self.pause = pause  # the least and most seconds between two edits
        self.ids = ids
        self.rng = rng
        self.last: dict[str, Edit] = {}
        self.made: list[tuple[str, Edit]] = []  # every edit, in order
        self.count = 0
        self.errors: list[BaseException] = []
        self._stopping = threading.Event()
        self.thread = threading.Thread(target=self._keep_editing, name="editor", daemon=True)
        self._client = httpx.Client(base_url=served.sandbox.base_url, timeout=10)

    def edit(self, spreadsheet_id: str, quantity: int) -> Edit:
        payload = edited(self.served.dataset.payloads[spreadsheet_id], quantity)
        at = datetime.now(UTC)
        answer = self._client.put(f"/_sandbox/spreadsheets/{spreadsheet_id}", json=payload)
        answer.raise_for_status()
        self.count += 1
        held = self.served.sandbox.google.feed_delay.held(spreadsheet_id)
        shown_by = held.due if held is not None else datetime.now(UTC)  # None: shown already
        edit = self.last[spreadsheet_id] = Edit(at, quantity, shown_by)
        self.made.append((spreadsheet_id, edit))
        return edit

    def edit_twice_in_one_window(self, spreadsheet_id: str, earlier: int, later: int,
                                 room: float = 0.2) -> tuple[Edit, Edit]:
        """Two edits Drive shows as one change: made at least ``room`` seconds before the
        spreadsheet's next coalescing moment (waiting for that moment to pass when it is nearer),
        so the real clock cannot slip a moment between them."""
        now = datetime.now(UTC)
        moment = self.served.sandbox.google.feed_delay.surfaces_at(spreadsheet_id, now)
        if moment is not None and (moment - now).total_seconds() < room:
            time.sleep((moment - now).total_seconds() + 0.01)
        return self.edit(spreadsheet_id, earlier), self.edit(spreadsheet_id, later)

    def stop(self) -> None:
        self._stopping.set()
        self.thread.join(timeout=10)
        self._client.close()
        assert not self.errors, self.errors

    def _keep_editing(self, edits_each: int = 3) -> None:
        """Edit a random spreadsheet every ``pause`` seconds, each at most ``edits_each`` times: their last
        edits are spread over the whole time, so an edit lost at any moment is not hidden by a
        later one of the same spreadsheet."""
        left = dict.fromkeys(self.ids, edits_each)
        try:
            while left and not self._stopping.wait(self.rng.uniform(*self.pause)):
                spreadsheet_id = self.rng.choice(sorted(left))
                left[spreadsheet_id] -= 1
                if not left[spreadsheet_id]:
                    del left[spreadsheet_id]
                # Half the edits make the threshold check fail with a value of their own, half make
                # the sheet healthy again: the verdict tells which edit the monitor read last.
                n = self.count + 1
                self.edit(spreadsheet_id, -n if self.rng.random() < 0.5 else 100 + n)
        except BaseException as exc:  # noqa: BLE001 - reported by stop(), on the test's thread
            self.errors.append(exc)


def assert_saw_the_last_edit(state: State, spreadsheet_id: str, edit: Edit) -> None:
    """A read that worked after ``edit``, and a verdict that only ``edit``'s values give."""
    record = state.health[spreadsheet_id]
    assert record.read_at is not None and record.read_at > edit.at, (spreadsheet_id, edit, record)
    if edit.quantity < 0:
        messages = [finding.message for finding in record.findings if finding.kind == "threshold"]
        assert record.health is FAIL and messages == [f"min {edit.quantity} < 0"], (edit, record)
    else:
        assert record.health is OK, (spreadsheet_id, edit, record)


def loads_cleanly(served: ServedDataset) -> State:
    """The saved state; the main file itself must be good (no fallback to the last good copy), and no
    entry damaged."""
    with FileLocation(served.state_dir).open(read_only=True) as store:
        assert store.restore_report is None, store.restore_report
    state = served.state()
    assert state is not None and state.damaged == [], state and state.damaged
    return state


def requests_to(served: ServedDataset, endpoints: tuple[str, ...]) -> int:
    by_endpoint = served.sandbox.google.stats.snapshot()["by_endpoint"]
    return sum(by_endpoint.get(endpoint, 0) for endpoint in endpoints)


# Where each run is killed (see kill_at), in turn. Kills at a new round's start come first, in a row:
# each leaves the last saved round complete, so the next run starts a new round too. A run killed
# with several reads in flight leaves them quarantined, to be read only after a run's first 5 s
# (the poison guard): the first unkilled run at the end takes that long.
AIMS = ("drive", "unsaved", "drive", "unsaved", "reading", "start-up", "reading", "start-up")


def kill_at(aim: str, process: subprocess.Popen, served: ServedDataset, rng: random.Random) -> None:
    """Kill ``process`` at a random moment of the ``aim`` kind (Drive and every read take 120 ms):
    drive: within 100 ms of the sandbox getting its Drive request (Drive's answer is not back);
    unsaved: as soon as it logs a new round (Drive has answered, the round is not yet saved);
    reading: within 100 ms of the sandbox getting one of its reads (whose lease is saved);
    start-up: timed from the process start (config, lock, state, recovery, or anything after).
    A drive or reading run that never comes to its moment (it carries on a killed round, whose
    suspects wait 5 s) is killed 1.5 s after it logs its start; one done sooner, or an unsaved one
    that starts no round, is left to finish."""
    log = RunLog(process)
    if aim == "start-up":
        time.sleep(rng.uniform(0.1, 0.9))
    elif aim == "unsaved":
        log.wait_for("round_started")
    else:
        endpoints = DRIVE_ASKS if aim == "drive" else (BATCH_GET, GRID_GET)
        before = requests_to(served, endpoints)
        log.wait_for("run_started")  # it holds the lock and has saved its heartbeat
        until = time.monotonic() + 1.5
        while (requests_to(served, endpoints) == before and time.monotonic() < until
               and process.poll() is None):
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.1))
    if process.poll() is None:
        kill_now(process)
    else:  # it finished first (a round with little to read): one more unkilled run
        assert process.wait() == 0


def test_runs_killed_at_random_moments_while_spreadsheets_are_edited_lose_no_edit(tmp_path):
    rng = random.Random(20261130)
    with served_dataset(tmp_path, 24, seed=3, faults=False, run_section={"round_interval": "1s"},
                        feed_delay=FEED_DELAY, **FAST_QUOTA) as served:
        # Every request, Drive's included, takes 120 ms: kills land while Drive or reads are out.
        served.fault(spreadsheet="*", latency_ms=120)
        healthy = [entry.id for entry in served.dataset.sheets if entry.kind == "healthy"]
        assert served.run_cli().returncode == 0  # a first round and Drive's position, saved
        editor = Editor(served, healthy[:16], rng)  # the rest are never edited
        editor.thread.start()
        unsaved_asks = with_reads_out = 0
        # Every aim in turn, and on until the editor has made all its edits (16 sheets, 3 each).
        for turn in itertools.count():
            # A loaded machine can make a kill miss its window: more turns, not a weaker assertion.
            landed = unsaved_asks >= 3 and with_reads_out >= 1
            if turn >= len(AIMS) and not editor.thread.is_alive() and (landed or turn >= 3 * len(AIMS)):
                break
            aim = AIMS[turn % len(AIMS)]
            before = served.state()
            asks = requests_to(served, DRIVE_ASKS)
            process = served.start_run()
            kill_at(aim, process, served, rng)
            state = loads_cleanly(served)
            # Drive was asked, yet the round it answered for was never saved: the next round must
            # ask again from the old position.
            if requests_to(served, DRIVE_ASKS) > asks and state.feed == before.feed:
                unsaved_asks += 1
            held = state.round.tasks.values() if state.round else ()
            with_reads_out += any(task.status is PROCESSING for task in held)
        editor.stop()

        # Unkilled runs until a round that started after Drive showed the last edit is complete.
        last_edit = max(edit.shown_by for edit in editor.last.values())
        sleep_until(last_edit)
        for _ in range(6):
            time.sleep(1.1)  # the round interval
            result = served.run_cli("--budget", "20")
            assert result.returncode == 0, result.stderr
            state = loads_cleanly(served)
            if state.round.is_complete() and state.round.started_at > last_edit:
                break
        else:
            raise AssertionError("no complete round started after Drive showed the last edit")

        assert editor.count == 48 and len(editor.last) == 16, (editor.count, len(editor.last))
        for spreadsheet_id, edit in editor.last.items():
            assert_saw_the_last_edit(state, spreadsheet_id, edit)
        # The kills landed where they must: after Drive was asked and before the round was saved,
        # and with reads out.
        assert unsaved_asks >= 3 and with_reads_out >= 1, (unsaved_asks, with_reads_out)
        # Rounds read only what changed: the last one left the never-edited spreadsheets unread.
        untouched = set(healthy) - set(editor.last)
        assert state.round.info.unread >= len(untouched) > 0


def test_a_spreadsheet_edited_during_a_round_is_read_in_that_round_or_the_next(tmp_path):
    # Rounds 3 s apart: the slow read below (2 s) ends the round within its interval, so the run
    # ends with it rather than starting the next round itself.
    interval = timedelta(seconds=3)
    with served_dataset(tmp_path, 12, seed=4, faults=False, run_section={"round_interval": "3s"},
                        feed_delay=FEED_DELAY, **FAST_QUOTA) as served:
        first, slow, outside = [entry.id for entry in served.dataset.sheets if entry.kind == "healthy"][:3]
        editor = Editor(served, [], random.Random(1))
        assert served.run_cli().returncode == 0  # the first round reads everything
        wait_for_the_next_round(served, interval)
        # ``first`` and ``slow`` change, and Drive shows it, before the next round, so it reads them;
        # ``slow`` answers after 2 s. ``outside`` is not part of that round.
        before = [editor.edit(first, 50), editor.edit(slow, 51)]
        sleep_until(max(edit.shown_by for edit in before))
        served.fault(spreadsheet=slow, latency_ms=2000)
        process = served.start_run()
        log = RunLog(process)
        read = log.wait_for("task_done", spreadsheet_id=first)
        assert read is not None and read["status"] == OK
        while reads_of(served.sandbox, slow) < 2:  # its read is out (the sandbox has its request)
            assert process.poll() is None, "the run ended before reading the slow spreadsheet"
            time.sleep(0.01)
        # Edited during the round: ``first`` after its read, ``slow`` while its read is out (the
        # answer holds the values from before the edit), ``outside`` with no read in this round.
        edits = {sid: editor.edit(sid, -n) for n, sid in enumerate((first, slow, outside), start=7)}
        assert process.wait(timeout=30) == 0
        during = loads_cleanly(served)
        assert log.wait_for("round_started", round_id=during.round.id) is not None  # one round only
        # A read that ended after the edit, yet holds the values from before it.
        assert during.health[slow].read_at > edits[slow].at and during.health[slow].health is OK

        wait_for_the_next_round(served, interval)
        sleep_until(max(edit.shown_by for edit in edits.values()))
        result = served.run_cli()
        assert result.returncode == 0, result.stderr
        state = loads_cleanly(served)
        assert state.round.id != during.round.id and state.round.is_complete()
        for spreadsheet_id, edit in edits.items():
            assert_saw_the_last_edit(state, spreadsheet_id, edit)


def wait_for_the_next_round(served: ServedDataset, interval: timedelta) -> None:
    """Sleep until the saved round is ``interval`` old: the next run starts a new one."""
    sleep_until(served.state().round.started_at + interval)


def sleep_until(moment: datetime) -> None:
    time.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()) + 0.05)


# == in this process, on a ManualClock =============================================================


ROUND = timedelta(minutes=5)  # write_config's round_interval
MAX_AGE = timedelta(minutes=20)  # the "hourly" profile's, shorter than an hour: google-auth's JWTs
# carry the real time, so the sandbox's clock may run at most an hour (and its skew) ahead of it.
STALE_AFTER = timedelta(hours=2)  # the "dated" profile's warning


def sheet_id(name: str) -> str:
    return f"1{name}".ljust(44, "x")


STEADY, EDITED, DATED, QUIET, LIVE = map(sheet_id, ("steady", "edited", "dated", "quiet", "live"))
EVERY = (STEADY, EDITED, DATED, QUIET, LIVE)
THRESHOLD = '{ kind = "threshold", range = "Stock!C2:C20", aggregate = "min", warn = "< 5", fail = "< 0" }'
PROFILES = f"""
[profiles.dated]
checks = [{{ kind = "freshness", range = "Stock!D2:D20", warn = "> 2h", fail = "> 1d" }}]

[profiles.hourly]
max_age = "20m"
checks = [{THRESHOLD}]

[profiles.live]
always_read = true
checks = [{THRESHOLD}]
"""


def sheets(*entries: tuple[str, str, str]) -> str:
    return "".join(f'\n[[sheets]]\nid = "{sid}"\nname = "{name}"\nprofile = "{profile}"\n'
                   for sid, name, profile in entries)


def stock(quantity: int = 10, updated: datetime | None = None) -> dict:
    row = ["A-1", "Tea", quantity]
    if updated is not None:
        row.append({"datetime": updated.strftime("%Y-%m-%dT%H:%M:%SZ")})
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity", "Updated"], row]}}


@dataclass
class Site:
    config: object
    clock: ManualClock
    sandbox: SandboxHandle
    started: datetime
    events: list = field(default_factory=list)

    def run(self) -> RunResult:
        result = run_once(self.config, clock=self.clock, messages_to=io.StringIO())
        self.events += result.new_events
        return result

    def next_round(self, after: timedelta = ROUND) -> RunResult:
        self.clock.advance(after.total_seconds())
        return self.run()

    def reads(self, *ids: str) -> list[int]:
        return [reads_of(self.sandbox, sid) for sid in ids]

    def state(self) -> State:
        return read_state(self.config.run.state_dir)

    def put(self, spreadsheet_id: str, payload: dict, touch: bool = True) -> None:
        """Through the control API, as any caller of the sandbox changes a spreadsheet."""
        answer = httpx.put(f"{self.sandbox.base_url}/_sandbox/spreadsheets/{spreadsheet_id}",
                           params={"touch": str(touch).lower()}, json=payload, timeout=5)
        answer.raise_for_status()


@pytest.fixture
def site(tmp_path):
    """Five spreadsheets, one first round done (everything read, Drive's position taken):

    STEADY, EDITED  the stock profile (formula errors, a threshold);
    DATED           a freshness check only, its newest date 1 h 52 min old: it turns stale (> 2h)
                    8 minutes after the start;
    QUIET           the threshold, read at least every 20 minutes (``max_age``);
    LIVE            the threshold, read every round (``always_read``).
    """
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time
    # (in whole seconds: stored times keep milliseconds).
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    started = clock.now()
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        for sid in (STEADY, EDITED, QUIET, LIVE):
            sandbox.google.store.put_control(sid, stock())
        newest = started - STALE_AFTER + timedelta(minutes=8)
        sandbox.google.store.put_control(DATED, stock(updated=newest))
        extra = PROFILES + sheets((DATED, "Dated", "dated"), (QUIET, "Quiet", "hourly"),
                                  (LIVE, "Live", "live"))
        path = write_config(tmp_path / "site", ids=(STEADY, EDITED), endpoint=sandbox.base_url, extra=extra,
                            credentials=sandbox.write_credentials(tmp_path / "keys", 1))
        site = Site(load_config(path, {}), clock, sandbox, started)
        site.run()
        assert site.reads(*EVERY) == [1] * len(EVERY)
        assert site.state().feed.position is not None
        yield site


def of_kind(events, kind, spreadsheet_id: str | None = None) -> list:
    return [event for event in events
            if isinstance(event, kind) and getattr(event, "spreadsheet_id", None) == spreadsheet_id]


def test_an_unedited_spreadsheet_that_goes_stale_is_told_within_a_round_without_a_read(site):
    crossed = site.state().health[DATED].moments[0].at + STALE_AFTER  # when its newest date turns stale
    assert crossed == site.started + timedelta(minutes=8)
    while site.clock.now() <= crossed:
        result = site.next_round()
        told = of_kind(result.new_events, HealthChanged, DATED)
        if site.clock.now() <= crossed:
            assert not told
    [warned] = told  # by the first run after the crossing
    assert (warned.previous, warned.current) == (OK, WARN)
    assert [finding.kind for finding in warned.findings] == ["freshness"]
    assert timedelta(0) < warned.at - crossed <= ROUND
    state = site.state()
    assert site.reads(DATED) == [1]  # judged from the date its only read found
    assert state.health[DATED].health is WARN and state.health[DATED].read_at == site.started
    assert state.round.info.unread >= 3  # and not only it: STEADY, EDITED and QUIET too


def test_values_changed_without_a_drive_change_are_read_within_max_age_or_every_round(site):
    site.clock.advance(60)
    changed = site.clock.now()
    for sid in (QUIET, LIVE):
        site.put(sid, stock(quantity=-3), touch=False)  # recomputed at Google: Drive says nothing
    seen: dict[str, datetime] = {}
    rounds = 0
    while site.clock.now() < site.started + MAX_AGE:
        site.next_round(ROUND - timedelta(minutes=1) if rounds == 0 else ROUND)
        rounds += 1
        state = site.state()
        for sid in (QUIET, LIVE):
            if state.health[sid].health is FAIL:
                seen.setdefault(sid, site.clock.now())
        assert site.reads(LIVE) == [1 + rounds]  # always_read: every round
        assert site.reads(QUIET) == [1 if QUIET not in seen else 2]  # once max_age made it due
    assert seen[LIVE] == site.started + ROUND  # the first round after the change
    assert changed < seen[QUIET] <= site.started + MAX_AGE  # its last read was as old as max_age
    assert site.reads(STEADY) == [1]


def test_a_spreadsheet_whose_access_is_removed_is_dead_lettered_in_the_next_round(site):
    # Drive's change feed reports the file removed from the account's view.
    site.sandbox.google.faults.add({"spreadsheet": EDITED, "statuses": [403], "repeat": True})
    result = site.next_round()
    [dead] = of_kind(result.new_events, DeadLettered, EDITED)
    assert dead.error.http_status == 403
    state = site.state()
    assert state.dlq.get(EDITED).last_error.http_status == 403 and state.health[EDITED].health is ERROR
    assert site.reads(EDITED, STEADY) == [2, 1]  # read for the removal alone


FEED_FAILURES = {503: "kept", 429: "kept", 500: "kept", 400: "reset"}


@pytest.mark.parametrize("status", FEED_FAILURES)
def test_a_failing_drive_makes_rounds_read_everything_and_is_told_once_then_recovered(site, status):
    # A Drive request names no spreadsheet, so only "*" faults reach it; each spreadsheet's own fault
    # (a millisecond's delay) takes precedence over "*", so its reads pass.
    for sid in EVERY:
        site.sandbox.google.faults.add({"spreadsheet": sid, "latency_ms": 1})
    site.sandbox.google.faults.add({"spreadsheet": "*", "statuses": [status], "repeat": True})
    before = site.state().feed
    for failing_round in (1, 2):
        site.next_round()
        assert site.reads(*EVERY) == [1 + failing_round] * len(EVERY)  # every spreadsheet read
        feed = site.state().feed
        assert feed.failing_since == before.asked_at + ROUND and feed.last_error
        assert feed.position == (before.position if FEED_FAILURES[status] == "kept" else None)
    [failing] = of_kind(site.events, ChangeFeedFailing)
    assert failing.at == before.asked_at + ROUND
    site.put(EDITED, stock(quantity=-1))  # after the outage's last read: only the feed can tell it
    drive_caught_up(site.sandbox.google)  # Drive's feed has it by the next round

    site.sandbox.google.faults.clear("*")
    result = site.next_round()
    [recovered] = of_kind(result.new_events, ChangeFeedRecovered)
    assert recovered.failing_since == failing.at
    feed = site.state().feed
    assert feed.failing_since is None and feed.asked_at == site.clock.now() and feed.position
    # From the kept position Drive tells the edit: EDITED is read (and LIVE, always); from a fresh
    # position nothing is known yet, so everything is read once more.
    steady = 3 + (FEED_FAILURES[status] == "reset")
    assert site.reads(STEADY, EDITED, LIVE) == [steady, 4, 4]
    assert site.state().health[EDITED].health is FAIL


# == runs watching the feed, child processes =======================================================


# A run that watches Drive's feed for all its budget: rounds an hour apart, so every run after the
# first carries on a complete round and spends its budget looking at the feed once a second.
WATCHING = {"round_interval": "1h", "change_poll": "1s"}
WATCH_BUDGET = "8"  # seconds: 5 usable, with the 3 s reserve
FEED_FAILING = "change feed cannot be read"  # what the chat is told (monitor.notify.render)
FEED_RECOVERED = "change feed answers again"


def judged_edits(state: State) -> int:
    """How many edits the saved runs judged (each run's record keeps the lag of each)."""
    return sum(len(run.edit_lags) for hour in state.runlog.values() for run in hour.runs)


def test_runs_killed_at_random_moments_while_watching_the_feed_lose_no_edit_and_judge_none_twice(tmp_path):
    rng = random.Random(20261202)
    with served_dataset(tmp_path, 12, seed=5, faults=False, run_section=WATCHING,
                        feed_delay=FEED_DELAY, **FAST_QUOTA) as served:
        served.fault(spreadsheet="*", latency_ms=120)  # kills land while Drive or a read is out
        healthy = [entry.id for entry in served.dataset.sheets if entry.kind == "healthy"]
        assert served.run_cli("--budget", WATCH_BUDGET).returncode == 0  # the first round, a position
        editor = Editor(served, healthy[:8], rng, pause=(0.3, 0.8))  # 24 edits over about 13 s
        editor.thread.start()
        looked = turns = 0
        while editor.thread.is_alive() or turns < 6:
            turns += 1
            process = served.start_run("--budget", WATCH_BUDGET)
            log = RunLog(process)
            log.wait_for("run_started")
            # Killed while it watches: right after a look that queued an edit (its read just out or
            # about to go), or at any moment of its watching.
            if rng.random() < 0.5:
                watched = log.wait_for("feed_watched", timeout=6)
                looked += watched is not None and watched["queued"] > 0
                time.sleep(rng.uniform(0.0, 0.15))
            else:
                time.sleep(rng.uniform(0.2, 4.0))
            try_kill(process)  # or it had ended by itself: either way the state must load
            loads_cleanly(served)
        editor.stop()

        sleep_until(max(edit.shown_by for edit in editor.last.values()))
        result = served.run_cli("--budget", WATCH_BUDGET)  # one unkilled run sees what is left
        assert result.returncode == 0, result.stderr
        state = loads_cleanly(served)
        for spreadsheet_id, edit in editor.last.items():
            assert_saw_the_last_edit(state, spreadsheet_id, edit)
            assert not state.health[spreadsheet_id].change_unread
        # Every edit the saved runs judged was a change Drive showed (edits of a spreadsheet within
        # one window are one), and none was judged twice. (A killed run's record, and the lags in it,
        # die with it: the edits it judged are kept, their count is not.)
        surfaced = {(spreadsheet_id, edit.shown_by) for spreadsheet_id, edit in editor.made}
        assert judged_edits(state) <= len(surfaced), (judged_edits(state), len(surfaced))
        assert looked >= 2  # kills landed just after a look that queued an edit


def test_a_spreadsheet_edited_twice_within_one_delay_window_is_judged_once_on_its_latest_values(tmp_path):
    with served_dataset(tmp_path, 6, seed=6, faults=False, run_section=WATCHING,
                        feed_delay=FEED_DELAY, **FAST_QUOTA) as served:
        first, second = [entry.id for entry in served.dataset.sheets if entry.kind == "healthy"][:2]
        assert served.run_cli("--budget", WATCH_BUDGET).returncode == 0
        editor = Editor(served, [], random.Random(2))
        process = served.start_run("--budget", WATCH_BUDGET)
        log = RunLog(process)
        log.wait_for("feed_watched")  # watching
        # Two edits of each inside one of its delay windows: Drive shows them as one change.
        edits = {first: editor.edit_twice_in_one_window(first, -5, 150),
                 second: editor.edit_twice_in_one_window(second, 160, -6)}
        for earlier, later in edits.values():
            assert earlier.shown_by == later.shown_by, "both edits must fall in one window"
        log.to_the_end()
        assert process.wait(timeout=30) == 0
        # One change a spreadsheet reached the feed (in one look or two: their moments differ).
        looks = [line for line in log.events if line.get("event") == "feed_watched"]
        assert sum(line.get("queued", 0) for line in looks) == 2, looks
        state = loads_cleanly(served)
        for spreadsheet_id, (_, latest) in edits.items():
            assert_saw_the_last_edit(state, spreadsheet_id, latest)
        assert judged_edits(state) == 2  # one change a spreadsheet, judged once
        assert [reads_of(served.sandbox, sid) for sid in edits] == [2, 2]  # the first round's and one


def test_a_feed_failing_mid_run_falls_back_to_reading_everything_and_says_so_once(tmp_path):
    # Rounds 2 s apart: the run goes through several while Drive fails.
    with served_dataset(tmp_path, 6, seed=7, faults=False,
                        run_section={"round_interval": "2s", "change_poll": "1s"},
                        feed_delay=FEED_DELAY, **FAST_QUOTA) as served:
        ids = [entry.id for entry in served.dataset.sheets if entry.kind != "missing"]
        for sid in ids:  # each spreadsheet's own (harmless) fault: "*" below then reaches Drive alone
            served.fault(spreadsheet=sid, latency_ms=1)
        assert served.run_cli("--budget", WATCH_BUDGET).returncode == 0
        process = served.start_run("--budget", "12")
        log = RunLog(process)
        log.wait_for("feed_watched")
        served.fault(spreadsheet="*", statuses=[503], repeat=True)  # Drive's feed fails from here
        reads_before = {sid: reads_of(served.sandbox, sid) for sid in ids}
        edit = Editor(served, [], random.Random(3)).edit(ids[0], -9)  # Drive cannot tell of it
        log.to_the_end()
        told, _ = process.communicate(timeout=40)  # no Telegram configured: the messages go to stdout
        assert process.returncode == 0
        state = loads_cleanly(served)
        # The rounds after the failure read every spreadsheet, the edited one's edit included.
        assert all(reads_of(served.sandbox, sid) > reads_before[sid] for sid in ids)
        assert_saw_the_last_edit(state, ids[0], edit)
        rounds = [line for line in log.events if line.get("event") == "round_started"]
        assert len(rounds) >= 2 and told.count(FEED_FAILING) == 1, told  # said once, for every round

        served.sandbox.google.faults.clear("*")
        result = served.run_cli("--budget", WATCH_BUDGET)
        assert result.returncode == 0 and result.stdout.count(FEED_RECOVERED) == 1, result.stdout
