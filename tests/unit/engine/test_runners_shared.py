"""Runners sharing one Redis state: claims, turns, leases by run, and each runner's own documents.

Each "runner" here is what one process holds: its own RedisLocation (its own lock tokens), its session
opened under its own lock, and its ``SharedState``. They share the machine's Redis under this test's
prefix (tests/redis_fixtures.py). Nothing waits on real time but a lease of a fraction of a second.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from redis_fixtures import REDIS_URL

from monitor.engine.folder_listing import FolderListings
from monitor.engine.health import OK, SheetHealth
from monitor.engine.heartbeat import Heartbeat
from monitor.engine.mutes import Mute
from monitor.engine.sharing import Claim
from monitor.engine.tasks import DONE, PENDING, POISON_INTERRUPTIONS, PROCESSING, Round
from monitor.state import changing_state, own_lock, read_state
from monitor.state.schema import HEARTBEAT
from monitor.state.shared import SharedState, prepare
from monitor.storage.redis_store import RedisLocation

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SHEETS = ("sheet-a", "sheet-b", "sheet-c")
LEASE = 0.3  # seconds: a killed run's lease is gone in a moment


class Runner:
    """One runner process's view: its session and its sharing, under its own lock."""

    def __init__(self, prefix: str, name: str, run_id: str, stack: ExitStack) -> None:
        self.location = RedisLocation(REDIS_URL, prefix=prefix)
        prepare(self.location, name, LEASE)
        self.session = stack.enter_context(changing_state(self.location, actor=run_id, now=NOW, runner=name,
                                                          lock=own_lock(name)))
        assert self.session is not None
        self.sharing = SharedState(self.session, self.location, name, run_id, LEASE)
        stack.callback(self.sharing.close)

    @property
    def state(self):
        return self.session.state

    def leased(self, task_id: str):
        task = self.state.round.tasks[task_id]
        return task, replace(task, status=PROCESSING, run_id=self.sharing.run_id)

    def claim(self, task_id: str) -> Claim:
        task, leased = self.leased(task_id)
        claim = self.sharing.claim(task, leased)
        if claim is Claim.GRANTED:
            self.state.round.start(task, self.sharing.run_id)
        return claim


@pytest.fixture
def shared(redis_location) -> Iterator:
    """A state on Redis whose round holds SHEETS, and a way to start runners on it."""
    with changing_state(redis_location, actor="admin-test", now=NOW) as session:
        session.state.round = Round.build(SHEETS, NOW)

    @contextmanager
    def runners(*names: str) -> Iterator[list[Runner]]:
        with ExitStack() as stack:
            yield [Runner(redis_location.prefix, name, f"run-{name}-1", stack) for name in names]

    yield runners


def first_task(runner: Runner) -> str:
    return next(iter(runner.state.round.tasks))


def test_a_task_one_runner_claimed_is_refused_to_another_which_then_holds_the_stored_task(shared):
    with shared("host-a", "host-b") as (a, b):
        task_id = first_task(a)
        assert a.claim(task_id) is Claim.GRANTED

        assert b.claim(task_id) is Claim.TAKEN
        held = b.state.round.tasks[task_id]
        assert held.status is PROCESSING and held.run_id == "run-host-a-1"  # b moves on to the next one
        assert b.state.round.next_due(NOW).id != task_id


def test_a_claim_brings_back_what_another_runner_saved_of_the_spreadsheet(shared):
    with shared("host-a", "host-b") as (a, b):
        ids = list(a.state.round.tasks)
        a.state.health["sheet-b"] = SheetHealth(health=OK, last_checked_at=NOW)
        a.state.mutes["sheet-b"] = Mute(until=NOW + timedelta(hours=2), reason="stock count")
        a.session.save()
        assert "sheet-b" not in b.state.health  # b loaded before a saved

        assert b.claim(ids[1]) is Claim.GRANTED
        assert b.state.health["sheet-b"].health == OK
        assert b.state.is_muted("sheet-b", NOW)  # so b skips it, as a would
        assert not b.state.health.changed("sheet-b")  # as saved: nothing of b's to write back


def test_a_claim_on_a_round_another_runner_replaced_says_so(shared):
    with shared("host-a", "host-b") as (a, b):
        stale = first_task(b)
        with a.sharing.turn() as mine:
            assert mine
            a.state.round = Round.build(SHEETS, NOW + timedelta(minutes=5))

        assert b.claim(stale) is Claim.ROUND_GONE
        with b.sharing.turn():
            assert b.state.round.id == a.state.round.id  # the turn read the new round


def test_a_dead_runs_lone_read_is_blamed_and_a_live_runs_reads_are_left_alone(shared):
    with shared("host-a", "host-b", "host-c") as (a, b, c):
        ids = list(a.state.round.tasks)
        assert a.claim(ids[0]) is Claim.GRANTED  # a dies with this one read in flight
        assert b.claim(ids[1]) is Claim.GRANTED  # b lives on, two reads in flight
        assert b.claim(ids[2]) is Claim.GRANTED
        a.sharing._lease._stop.set()  # killed: its lease is renewed no more
        time.sleep(LEASE + 0.1)

        with c.sharing.turn() as mine:
            assert mine
            reclaimed, poisoned = c.state.round.reclaim_abandoned(NOW, c.sharing.dead)

        assert [task.id for task in reclaimed] == [ids[0]] and not poisoned
        tasks = c.state.round.tasks
        assert tasks[ids[0]].interruptions == 1 and tasks[ids[0]].status is PENDING
        assert tasks[ids[0]].quarantined
        assert {tasks[ids[1]].status, tasks[ids[2]].status} == {PROCESSING}  # b's, alive
        assert read_state(c.location).round.tasks[ids[0]].interruptions == 1  # saved by the turn


def test_a_dead_run_with_several_reads_in_flight_blames_none_of_them(shared):
    with shared("host-a", "host-b") as (a, b):
        ids = list(a.state.round.tasks)
        for task_id in ids[:2]:
            assert a.claim(task_id) is Claim.GRANTED
        a.sharing._lease._stop.set()
        time.sleep(LEASE + 0.1)

        with b.sharing.turn():
            reclaimed, _ = b.state.round.reclaim_abandoned(NOW, b.sharing.dead)

        assert sorted(task.id for task in reclaimed) == ids[:2]
        assert all(task.interruptions == 0 for task in reclaimed)


def test_poison_counts_across_runners_a_kill_each_time_it_was_read_alone(shared):
    """Three runs on different hosts, each killed while reading the same spreadsheet alone."""
    with shared("host-a") as (seed,):
        task_id = first_task(seed)
    for attempt in range(POISON_INTERRUPTIONS):
        with shared(f"host-{attempt}", "host-x") as (victim, survivor):
            with victim.sharing.turn():
                pass  # read the last reclaim
            assert victim.claim(task_id) is Claim.GRANTED
            victim.sharing._lease._stop.set()
            time.sleep(LEASE + 0.1)
            with survivor.sharing.turn():
                _, poisoned = survivor.state.round.reclaim_abandoned(NOW, survivor.sharing.dead)
    assert [task.id for task in poisoned] == [task_id]


def test_a_runners_own_documents_are_its_own_and_other_runners_see_them(shared, redis_location):
    with shared("host-a", "host-b") as (a, b):
        a.state.heartbeat = Heartbeat(run_id="run-host-a-1", started_at=NOW, budget_seconds=60)
        b.state.heartbeat = Heartbeat(run_id="run-host-b-1", started_at=NOW, budget_seconds=60)
        a.state.events.add(_event("run-host-a-1"))
        b.state.events.add(_event("run-host-b-1"))  # the same sequence number, another key
        a.session.save()
        b.session.save()

    keys = redis_location.open(read_only=True).get_keys()
    assert {"heartbeat/host-a", "heartbeat/host-b"} <= set(keys) and "heartbeat" not in keys
    assert sorted(key for key in keys if key.startswith("event/")) == [
        "event/000000000001.host-a", "event/000000000001.host-b"]
    seen = read_state(redis_location)
    assert set(seen.runner_heartbeats) == {"host-a", "host-b"}
    assert len(seen.events) == 2


def test_the_first_runner_takes_over_a_single_runners_heartbeat_and_runs(shared, redis_location):
    old = Heartbeat(run_id="run-old", started_at=NOW, budget_seconds=60)
    redis_location.open().update({"heartbeat": HEARTBEAT.encode(old)})  # as a release before wrote it
    with shared("host-a") as (a,):
        assert a.state.heartbeat.run_id == "run-old"

    keys = set(redis_location.open(read_only=True).get_keys())
    assert "heartbeat/host-a" in keys and "heartbeat" not in keys


def test_a_finished_task_another_runner_saved_is_not_claimed_again(shared):
    with shared("host-a", "host-b") as (a, b):
        task_id = first_task(a)
        assert a.claim(task_id) is Claim.GRANTED
        a.state.round.succeed(a.state.round.tasks[task_id], NOW)
        a.session.save()

        assert b.claim(task_id) is Claim.TAKEN
        assert b.state.round.tasks[task_id].status is DONE
        assert b.state.round.counts()[DONE] == 1


def _event(run_id: str):
    from monitor.engine.events import CrashRecovered

    return CrashRecovered(at=NOW, run_id=run_id, previous_run_id=None, reclaimed=1, poisoned=0)


def test_runners_watching_the_feed_share_one_look_and_read_what_it_queued(redis_location):
    """Two runners watching Drive's feed: one asks, and the other reads what that look queued."""
    from run_fixtures import SETTINGS, InlineReads, ScriptedDrive, ScriptedReader, plans

    from monitor.core.clock import ManualClock
    from monitor.engine.pacer import QuotaPacer
    from monitor.engine.run import Run

    clock, reader, drive = ManualClock(NOW), ScriptedReader(), ScriptedDrive()
    drive.clock = clock
    watching = replace(SETTINGS, change_poll=timedelta(seconds=20))
    sheets = plans(4)

    def runner_run(name: str, stack: ExitStack) -> Run:
        runner = Runner(redis_location.prefix, name, f"run-{name}-{clock.monotonic():.0f}", stack)
        return Run(run_id=runner.sharing.run_id, settings=watching, plans=sheets, state=runner.state,
                   reads=InlineReads(reader, clock), pacer=QuotaPacer(["sa-1.json"], 60, 300), clock=clock,
                   save=runner.session.save, changes=drive, sharing=runner.sharing)

    with ExitStack() as stack:  # a first round, read by one runner: the feed's position is taken
        first = runner_run("host-a", stack)
        first.begin()
        while first.step() and not first.watching:
            pass
        first.end()
    assert drive.asked == [None] and sorted(reader.reads) == ["s0", "s1", "s2", "s3"]
    clock.advance(30)
    drive.changed = {"s1", "s2"}
    with ExitStack() as stack:
        a, b = runner_run("host-a", stack), runner_run("host-b", stack)
        a.begin()
        b.begin()
        a.step()  # asks the feed (its last look was 30 s ago), queues s1 and s2, and reads s1
        b.step()  # finds the look in its turn: asks nothing, and takes s2 from the round it re-read
        a.step()
        b.step()
        assert drive.asked == [None, "1"]  # one look for both
        assert reader.reads[4:] == ["s1", "s2"]
        assert a.report.counts.tasks_done == 1 and b.report.counts.tasks_done == 1


def test_a_history_found_damaged_after_a_turn_is_set_aside_and_told_by_the_runner_that_used_it(
        shared, redis_location):
    # Histories are read when first used (monitor.state.repository): one a turn re-read and the
    # runner then used is the runner's to tell, not lost with the re-read's own state.
    from monitor.engine.events import StateEntryDamaged
    from monitor.state.schema import DAMAGED_PREFIX, HISTORY

    key = HISTORY.key("sheet-b")
    with redis_location.lock(), redis_location.open() as store:
        store.update({key: '{"read_at": "2026-11-30T11:00:00Z", "colour": "red"}'})
    with shared("host-a") as [a]:
        with a.sharing.turn() as mine:
            assert mine
        assert a.state.history.get("sheet-b") is None
        a.session.save()
        [told] = [event for event in a.state.events if isinstance(event, StateEntryDamaged)]
        assert told.key == key and told.run_id == "run-host-a-1"
    with redis_location.open(read_only=True) as store:
        stored = store.get_properties()
    assert key not in stored and DAMAGED_PREFIX + key in stored


def test_runners_started_at_once_on_a_fresh_store_keep_what_each_other_saved(redis_location):
    # The first cron tick of a new deployment: every runner opens the empty store before any saves.
    # A first save that wrote the whole state would remove what the others saved meanwhile.
    with ExitStack() as stack:
        a, b = (Runner(redis_location.prefix, name, f"run-{name}-1", stack) for name in ("host-a", "host-b"))
        with a.sharing.turn() as mine:
            assert mine
            a.state.round = Round.build(SHEETS, NOW)
            a.state.folders = FolderListings(position="feed-42")  # a single document, shared
        a.state.health["sheet-a"] = SheetHealth(health=OK, last_checked_at=NOW)
        a.session.save()
        b.state.health["sheet-b"] = SheetHealth(health=OK, last_checked_at=NOW)
        b.session.save()  # its first save, from the empty store it loaded
    stored = read_state(redis_location)
    assert stored.round is not None and set(stored.round.tasks) == set(a.state.round.tasks)
    assert {"sheet-a", "sheet-b"} <= stored.health.keys()
    assert stored.folders.position == "feed-42"  # not b's empty listing over it
