"""Every round ends, and blame falls where it is due: whatever the budget, wherever kills land.

Runs read through ``SimulatedReads`` on a ``KillingClock``: a kill -9 lands at any moment the test
chooses (while reads are out, a retry is awaited, a suspect waits its turn), and what the run's
checkpoints saved is all the next run finds. Nothing here waits on real time.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from run_fixtures import (
    SETTINGS,
    Bench,
    Killed,
    KillingClock,
    PoisonReader,
    ScriptedReader,
    SimulatedReads,
    kinds,
    plans,
)

from monitor.core.errors import POISON, ErrorClass
from monitor.engine.health import ERROR, UNKNOWN, SheetHealth
from monitor.engine.tasks import DONE, FAILED, PENDING, POISON_INTERRUPTIONS, PROCESSING, Task
from monitor.storage import MemoryLocation

LATENCY = 0.4
SLOW = 3.0
CRON = 300.0  # seconds between two runs: the next cron tick
HANGS = 10_000.0  # a read that never answers: it ends when its timeout does
# An hour's rounds: a test's runs, a cron tick apart, all work on the round the first one started;
# and the default request timeout, which a slow spreadsheet's read fits in.
ONE_ROUND = replace(SETTINGS, round_interval=timedelta(hours=1), request_timeout=30.0)


def bench(count: int, seconds=lambda sheet: LATENCY) -> Bench:
    """A bench of ``count`` spreadsheets read through SimulatedReads on a KillingClock, with five
    credentials: a few reads in flight at once."""
    reader = ScriptedReader()
    return Bench(reader, plans(count), MemoryLocation(), clock=KillingClock(),
                 credentials=("a", "b", "c", "d", "e"),
                 make_reads=lambda clock: SimulatedReads(reader, clock, seconds))


def run(the_bench: Bench, kill_after: float | None = None, settings_=ONE_ROUND, **overrides):
    """One cron run, killed ``kill_after`` seconds after it starts (None: not killed); the run, or
    None when it was killed."""
    the_bench.clock.kill_after(kill_after)
    try:
        with contextlib.suppress(Killed):
            return the_bench.run(settings_, **{"max_in_flight": 16, "checkpoint_every": 0.0, **overrides})
        return None
    finally:
        the_bench.clock.kill_after(None)


def task_of(the_bench: Bench, target: str) -> Task:
    return next(task for task in the_bench.stored().round.tasks.values() if task.target == target)


def answered_before(the_bench: Bench, seconds: dict[str, float]) -> None:
    """The spreadsheets' records as earlier reads left them: each answered in so many seconds."""
    with the_bench.session() as session:
        for sheet, took in seconds.items():
            session.state.health[sheet] = SheetHealth(read_seconds=(took,) * 8)


def held(the_bench: Bench) -> set[str]:
    """The spreadsheets whose reads the last run had in flight when it was killed."""
    return {task.target for task in the_bench.stored().round.tasks.values() if task.status is PROCESSING}


def kill_with_several_in_flight(the_bench: Bench, at: float = 0.2, **overrides) -> None:
    """A run killed ``at`` seconds in, with several reads out: none is blamed, each quarantined."""
    assert run(the_bench, kill_after=at, **overrides) is None
    assert len(held(the_bench)) > 1


# -- a round always completes ---------------------------------------------------------------------


@pytest.mark.parametrize("budget", [4.0, 5.0, 6.5, 8.5])
def test_under_a_short_budget_the_spreadsheets_a_kill_quarantined_are_read_and_the_round_completes(budget):
    the_bench = bench(10)
    short = {"budget": timedelta(seconds=budget)}
    kill_with_several_in_flight(the_bench, **short)
    quarantined = held(the_bench)
    for _ in range(10):  # each run finishes at least one task: ten spreadsheets, ten runs at most
        the_bench.clock.advance(CRON)
        run(the_bench, **short)
        stored = the_bench.stored()
        if stored.round.is_complete():
            break
    assert stored.round.is_complete(), stored.round.counts()
    assert all(stored.health[plan.id].health != UNKNOWN for plan in the_bench.plans)
    assert {task.target for task in stored.round.tasks.values() if task.status is DONE} >= quarantined
    assert all(task.interruptions == 0 for task in stored.round.tasks.values())  # killed among others


# s1's answer is due within 6 s (twice its 3 s); 3 s of the budget are the reserve.
@pytest.mark.parametrize(("budget", "starts_at"), [(60.0, 5.0), (14.0, 5.0), (13.9, 0.0), (7.0, 0.0)])
def test_a_suspect_waits_out_a_runs_first_seconds_only_while_the_budget_leaves_it_its_answers_time(
        budget, starts_at):
    the_bench = bench(3, lambda sheet: SLOW if sheet == "s1" else LATENCY)
    answered_before(the_bench, {"s1": SLOW})
    assert run(the_bench, kill_after=0.5) is None  # s0 and s2 answered; s1 was out alone
    the_bench.clock.advance(CRON)
    with the_bench.opened(ONE_ROUND, budget=timedelta(seconds=budget), request_timeout=30.0,
                          max_in_flight=16) as late:
        late.execute()
    [(sheet, start)] = late.reads.started
    assert sheet == "s1" and start - late.state.heartbeat.started_at.timestamp() == starts_at
    assert task_of(the_bench, "s1").status is DONE and late.state.round.is_complete()


# -- a read that outlives the budget ------------------------------------------------------------


def test_a_spreadsheet_that_never_answers_within_a_short_budget_is_blamed_told_and_its_round_completes():
    # s0's server drips its answer: no timeout ends it. The budget (10 s) is shorter than the
    # request timeout (30 s) plus the reserve, so every read of it is still out when the budget ends.
    the_bench = bench(4, lambda sheet: None if sheet == "s0" else LATENCY)
    settings_ = {"settings_": SETTINGS, "budget": timedelta(seconds=10), "request_timeout": 30.0}
    first = run(the_bench, **settings_)
    assert first.report.duration_seconds <= 10 - first.settings.reserve_seconds
    task = task_of(the_bench, "s0")
    assert (task.status, task.attempts, task.last_error.error_class) == (PENDING, 1, ErrorClass.TRANSIENT)
    assert task.last_error.message == "no answer within 7.0 s"  # the whole usable budget
    told = []
    for _ in range(12):  # an hour of cron ticks
        the_bench.clock.advance(CRON)
        later = run(the_bench, **settings_)
        told += kinds(event for event in later.state.events if event.run_id == later.run_id)
    stored = the_bench.stored()
    assert "breaker_opened" in told and "health_changed" in told  # blamed, and told
    assert stored.health["s0"].health == ERROR  # failing: none of its reads worked for 30 minutes
    assert "s0" in stored.breakers and stored.round.is_complete()


def test_reads_still_out_when_the_budget_ends_count_as_timeouts_and_the_run_ends_in_time():
    the_bench = bench(3, lambda sheet: None)  # every server drips its answer
    with the_bench.opened(ONE_ROUND, budget=timedelta(seconds=6), request_timeout=30.0,
                          max_in_flight=16) as the_run:
        the_run.execute()
        took = the_bench.clock.monotonic() - the_run.started_monotonic
        assert took == 6 - the_run.settings.reserve_seconds
    stored = the_bench.stored().round.tasks.values()
    assert [task.history[-1].outcome for task in stored] == ["transient"] * 3
    assert all(task.status is PENDING and task.next_attempt_at for task in stored)  # as a timeout is


# -- the poison guard: a kill counts only against the read that can have caused it ---------------


def alone_in_flight_killed(the_bench: Bench, sheet: str, into_its_read: float, **overrides) -> Task:
    """A run killed ``into_its_read`` seconds after it started reading ``sheet``, a suspect read alone
    once the run's first seconds are over; the task as the next run finds it."""
    assert run(the_bench, kill_after=5.0 + into_its_read, **overrides) is None
    assert held(the_bench) == {sheet}
    return task_of(the_bench, sheet)


def test_a_slow_spreadsheet_that_answers_is_never_poison_wherever_kills_land_in_its_read():
    the_bench = bench(3, lambda sheet: SLOW if sheet == "s1" else LATENCY)
    answered_before(the_bench, {"s1": SLOW})
    assert run(the_bench, kill_after=0.5) is None  # s0 and s2 answered; s1 was out alone
    for into in (0.01, 0.5, 1.5, 2.5, 2.99, 0.1, 2.0, 2.9):  # kills land anywhere in its 3 s read
        the_bench.clock.advance(CRON)
        task = alone_in_flight_killed(the_bench, "s1", into)
        assert not task.overdue
    the_bench.clock.advance(CRON)
    finished = run(the_bench)
    task = task_of(the_bench, "s1")
    assert (task.status, task.interruptions) == (DONE, 0) and "s1" not in the_bench.stored().dlq
    assert finished.state.round.is_complete()


def test_a_spreadsheet_that_answered_and_now_hangs_is_poison_after_three_kills_past_its_answers_time():
    hangs = {"s1": False}
    the_bench = bench(4, lambda sheet: HANGS if hangs.get(sheet) else LATENCY)
    run(the_bench)  # every spreadsheet answers once: 0.4 s, so s1's answer is due within 1 s
    the_bench.clock.advance(ONE_ROUND.round_interval.total_seconds())  # the next round
    hangs["s1"] = True
    kill_with_several_in_flight(the_bench, request_timeout=60.0)
    the_bench.clock.advance(CRON)
    early = alone_in_flight_killed(the_bench, "s1", 0.9, request_timeout=60.0)  # its answer not due yet
    assert not early.overdue
    for interruptions in range(1, POISON_INTERRUPTIONS + 1):
        the_bench.clock.advance(CRON)
        with the_bench.opened(ONE_ROUND, request_timeout=60.0, max_in_flight=16,
                              checkpoint_every=0.0) as watched:
            # Past its answer's time (1 s) even behind the other suspects, read alone first (0.4 s each).
            the_bench.clock.kill_after(5.0 + 2.5)
            with pytest.raises(Killed):
                watched.execute()
            the_bench.clock.kill_after(None)
        held = task_of(the_bench, "s1")
        assert held.overdue and held.interruptions == interruptions - 1  # saved before the kill
    the_bench.clock.advance(CRON)
    run(the_bench, request_timeout=60.0)
    stored = the_bench.stored()
    assert task_of(the_bench, "s1").status is FAILED
    assert stored.dlq["s1"].last_error.error_class == POISON


def test_a_spreadsheet_that_never_answered_is_counted_for_each_kill_with_it_alone_one_that_answers_not():
    # Nothing says when a never-answered one's answer is due: counting every kill with it alone is
    # what catches one whose very first answer kills the process.
    for answered, interruptions in ((False, POISON_INTERRUPTIONS), (True, 0)):
        the_bench = bench(3, lambda sheet: SLOW if sheet == "s1" else LATENCY)
        if answered:
            answered_before(the_bench, {"s1": SLOW})
        assert run(the_bench, kill_after=0.5) is None  # s0 and s2 answered; s1, out alone, killed
        for _ in range(POISON_INTERRUPTIONS - 1):
            the_bench.clock.advance(CRON)
            alone_in_flight_killed(the_bench, "s1", 0.5)
        the_bench.clock.advance(CRON)
        run(the_bench)
        task = task_of(the_bench, "s1")
        assert task.interruptions == interruptions
        assert (task.status is FAILED) == (not answered) == ("s1" in the_bench.stored().dlq)


# -- a crash loop of any timing --------------------------------------------------------------------


class KillInRead(SimulatedReads):
    """SimulatedReads that stand for a kill ``into`` seconds after ``sheet``'s read starts (when a
    read of it starts in the run): a crash loop timed to hurt that spreadsheet most."""

    aim: tuple[str, float] | None = None  # (sheet, seconds into its read)

    def start(self, job, timeout):
        super().start(job, timeout)
        if self.aim is not None and job.plan.id == self.aim[0] and self.clock.kill_at is None:
            self.clock.kill_after(self.aim[1])


FLEET = {"s0": LATENCY, "s1": LATENCY, "s2": LATENCY, "s3": SLOW, "s4": HANGS, "s5": LATENCY}
EVERY_TICK = replace(SETTINGS, request_timeout=30.0)  # a new round at each cron tick


def alone_and_overdue(state, sheet: str) -> bool:
    """Did the last run die with ``sheet``'s read alone in flight and overdue (a kill to its blame)?"""
    held = [task for task in state.round.tasks.values() if task.status is PROCESSING] if state.round else []
    return [(task.target, task.overdue) for task in held] == [(sheet, True)]


class CrashLoop(RuleBasedStateMachine):
    """Runs of any budget killed at any moment (from the run's start, or timed from a spreadsheet's
    read), or not at all, cron ticks between them. s3 is slow (3 s) and has answered before; s4
    answered before and now hangs; s5 kills the process whenever it is read. s3 is never counted or
    poisoned; s5 and s4 are blamed within a bounded number of kills; and runs left alone end round
    after round with a verdict for every spreadsheet."""

    @initialize()
    def fleet(self):
        self.reader = PoisonReader("s5")
        self.aim: tuple[str, float] | None = None

        def reads(clock):
            made = KillInRead(self.reader, clock, FLEET.__getitem__)
            made.aim = self.aim
            return made

        self.bench = Bench(self.reader, plans(6), MemoryLocation(), clock=KillingClock(),
                           credentials=("a", "b", "c", "d", "e"), make_reads=reads)
        answered_before(self.bench, {"s3": SLOW, "s4": LATENCY})
        self.killer_reads: dict[str, int] = {}  # round id -> reads of s5 (each one killed its run)

    @rule(budget=st.sampled_from([4.0, 5.0, 7.0, 12.0, 60.0]),
          kill=st.one_of(st.none(), st.floats(0.0, 70.0, allow_nan=False)))
    def run(self, budget, kill):
        self._run(budget, kill)

    @rule(budget=st.sampled_from([4.0, 7.0, 60.0]), sheet=st.sampled_from(["s3", "s4"]),
          into=st.floats(0.0, 40.0, allow_nan=False))
    def run_killed_in_a_read(self, budget, sheet, into):
        self.aim = (sheet, into)
        try:
            self._run(budget, None)
        finally:
            self.aim = None

    def _run(self, budget: float, kill: float | None) -> None:
        before = self.bench.stored()
        blamed = alone_and_overdue(before, "s4")
        was = task_of(self.bench, "s4").interruptions if before.round else 0
        reads = len(self.reader.reads)
        run(self.bench, kill_after=kill, settings_=EVERY_TICK, budget=timedelta(seconds=budget))
        stored = self.bench.stored()
        if stored.round is None:  # killed before its first round was saved
            return
        killed_by_s5 = self.reader.reads[reads:].count("s5")
        self.killer_reads[stored.round.id] = self.killer_reads.get(stored.round.id, 0) + killed_by_s5
        if blamed and stored.round.id == before.round.id:  # this run's recovery counted that kill
            task = task_of(self.bench, "s4")
            assert task.interruptions == was + 1
            if task.interruptions == POISON_INTERRUPTIONS:
                assert task.status is FAILED and stored.dlq["s4"].last_error.error_class == POISON

    @rule()
    def cron_tick(self):
        self.bench.clock.advance(CRON)

    @invariant()
    def the_slow_one_is_never_blamed_for_a_kill(self):
        stored = self.bench.stored()
        if stored.round is not None:
            assert task_of(self.bench, "s3").interruptions == 0
        assert "s3" not in stored.dlq

    @invariant()
    def the_killer_kills_a_bounded_number_of_runs_per_round(self):
        # Once among others (not blamed), then alone until poisoned.
        assert all(reads <= 1 + POISON_INTERRUPTIONS for reads in self.killer_reads.values())

    def teardown(self):
        if not hasattr(self, "bench"):
            return
        # Left alone (but for s5's kills), runs end round after round, and every spreadsheet gets a
        # verdict: s4's once none of its reads worked for half an hour, s5's as poison. A round
        # started means the one before it was complete: here each costs s5's four kills.
        rounds = set()
        for _ in range(16):
            self.bench.clock.advance(CRON)
            run(self.bench, settings_=EVERY_TICK, budget=timedelta(seconds=60))
            stored = self.bench.stored()
            rounds.add(stored.round.id)
        assert len(rounds) >= 3, rounds
        assert all(stored.health[sheet].health != UNKNOWN or sheet in stored.dlq for sheet in FLEET), {
            sheet: stored.health[sheet].health for sheet in FLEET}
        assert "s3" not in stored.dlq and stored.health["s3"].health != UNKNOWN


TestCrashLoop = CrashLoop.TestCase
TestCrashLoop.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
