"""Rounds that read only what changed: which spreadsheets a round reads, what it judges without a read,
and how Drive's position is kept (``monitor.engine.change_detection``, ``monitor.engine.rejudge``).

The run is the engine's, over a stored state, with a scripted reader and a scripted Drive: a feed
that answers what a test says changed, and counts how it was asked. The same behaviour against the
sandbox's Drive, in child processes killed at random, is tests/process/test_change_detection_process.py.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule
from run_fixtures import (
    RANGE,
    SETTINGS,
    Bench,
    Killed,
    ScriptedDrive,
    ScriptedReader,
    SimulatedReads,
    kinds,
    of_run,
    plans,
)

from monitor.checks import FreshnessCheck
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.engine.change_detection import ChangedFiles, FeedState
from monitor.engine.events import ChangeFeedFailing, ChangeFeedRecovered, DeadLettered, HealthChanged
from monitor.engine.health import ERROR, FAIL, OK, WARN
from monitor.engine.heartbeat import RunOutcome
from monitor.engine.inspect import SheetPlan
from monitor.engine.mutes import Mute
from monitor.storage import MemoryLocation

ROUND = SETTINGS.round_interval.total_seconds()
DRIVE_DOWN = SheetReadError(ErrorClass.TRANSIENT, 503, None, "Drive is unavailable")
UNKNOWN_POSITION = SheetReadError(ErrorClass.PERMANENT, 400, "invalid", "Invalid Value")


def bench(count: int = 5, reader: ScriptedReader | None = None, the_plans: list[SheetPlan] | None = None,
          ) -> tuple[Bench, ScriptedDrive]:
    drive = ScriptedDrive()
    the_bench = Bench(reader or ScriptedReader(), the_plans or plans(count), MemoryLocation(), changes=drive)
    return the_bench, drive


def next_round(the_bench: Bench) -> None:
    the_bench.clock.advance(ROUND)


def read_in(the_bench: Bench, run) -> list[str]:
    """The spreadsheets ``run`` read, in order."""
    return the_bench.reader.reads[-run.report.counts.tasks:] if run.report.counts.tasks else []


def test_the_first_round_takes_a_position_and_reads_everything_the_next_only_what_changed():
    the_bench, drive = bench(5)
    first = the_bench.run()
    assert sorted(read_in(the_bench, first)) == [f"s{n}" for n in range(5)]
    assert drive.asked == [None]  # a position first: nothing before it is known, so all is read
    assert the_bench.stored().feed.position == "1"

    next_round(the_bench)
    drive.changed = {"s3", "not-configured"}
    second = the_bench.run()

    assert read_in(the_bench, second) == ["s3"]
    assert drive.asked == [None, "1"]
    stored = the_bench.stored()
    assert stored.round.info.unread == 4 and stored.round.info.targets == ("s3",)
    assert stored.feed == FeedState("3", "sa-1.json", stored.round.started_at)
    assert stored.health["s3"].read_at == stored.round.started_at and not stored.health["s3"].change_unread


def test_a_round_where_nothing_changed_reads_nothing_and_is_not_a_degraded_run():
    the_bench, drive = bench(3)
    the_bench.run()
    next_round(the_bench)

    quiet = the_bench.run()

    assert quiet.report.counts.tasks == 0 and quiet.report.outcome is RunOutcome.NOTHING_TO_DO
    assert the_bench.stored().round.info.unread == 3 and drive.asked[-1] == "1"


def test_a_kill_before_the_round_is_saved_leaves_the_position_where_it_was():
    the_bench, drive = bench(4)
    the_bench.run()
    next_round(the_bench)
    drive.changed = {"s1", "s2"}
    drive.errors = [Killed()]  # the process dies while Drive answers: nothing of the round is saved

    with pytest.raises(Killed):
        the_bench.run()
    assert the_bench.stored().feed.position == "1"

    drive.changed = {"s1", "s2"}  # Drive reports them again from the old position
    again = the_bench.run()
    assert sorted(read_in(the_bench, again)) == ["s1", "s2"]


def test_a_kill_during_the_first_read_keeps_the_new_position_and_the_changes_it_covered():
    reader = ScriptedReader()
    the_bench, drive = bench(4, reader)
    the_bench.run()
    reader.script = {"s1": [Killed()]}
    next_round(the_bench)
    drive.changed = {"s1", "s2"}

    with pytest.raises(Killed):
        the_bench.run()
    stored = the_bench.stored()
    assert stored.feed.position == "3"  # saved in one update with the round and the marks it covered
    assert all(stored.health[sid].change_unread for sid in ("s1", "s2"))

    the_bench.run()
    stored = the_bench.stored()
    assert not any(stored.health[sid].change_unread for sid in ("s1", "s2"))
    assert drive.asked == [None, "1"]  # the round went on: Drive is asked again by the next round


def test_a_change_whose_read_failed_is_read_again_when_drive_no_longer_reports_it():
    forbidden = SheetReadError(ErrorClass.PERMANENT, 403, "PERMISSION_DENIED", "no access")
    reader = ScriptedReader()
    the_bench, drive = bench(3, reader)
    the_bench.run()
    next_round(the_bench)
    drive.removed = {"s2"}  # unshared: Drive reports it removed, and its read fails
    reader.script = {"s2": [forbidden]}
    the_bench.run()
    assert the_bench.stored().health["s2"].health is ERROR and "s2" in the_bench.stored().dlq

    next_round(the_bench)
    third = the_bench.run()  # Drive says nothing now: it is still read, as failing
    assert read_in(the_bench, third) == ["s2"]
    assert the_bench.stored().health["s2"].health is OK


def test_a_change_to_a_muted_spreadsheet_is_read_once_the_mute_ends():
    the_bench, drive = bench(3)
    the_bench.run()
    with the_bench.session() as session:
        session.state.mutes["s1"] = Mute(until=the_bench.clock.now() + timedelta(minutes=7), reason="move")
    next_round(the_bench)
    drive.changed = {"s1"}
    muted = the_bench.run()
    assert muted.report.counts.tasks == 0

    next_round(the_bench)
    unmuted = the_bench.run()
    assert read_in(the_bench, unmuted) == ["s1"]


def test_an_unchanged_spreadsheet_is_read_before_its_last_read_passes_max_age():
    the_plans = [replace(plan, max_age=timedelta(minutes=20)) for plan in plans(2)]
    the_bench, _ = bench(the_plans=the_plans)
    the_bench.run()
    reads = []
    for _ in range(8):
        next_round(the_bench)
        reads.append(the_bench.run().report.counts.tasks)
    # Read at 0; due when the next round would find it older than 20 minutes: at 20, 40 ...
    assert reads == [0, 0, 0, 2, 0, 0, 0, 2]


def test_unchanged_spreadsheets_a_full_round_read_together_are_spread_over_the_rounds_after():
    the_plans = [replace(plan, max_age=timedelta(hours=1)) for plan in plans(24)]
    the_bench, _ = bench(the_plans=the_plans)
    the_bench.run()  # the first round reads all 24 at once
    reads, oldest = [], timedelta(0)
    for _ in range(30):
        next_round(the_bench)
        reads.append(the_bench.run().report.counts.tasks)
        now = the_bench.clock.now()
        oldest = max(oldest, *(now - record.read_at for record in the_bench.stored().health.values()))
    # 24 spreadsheets kept within an hour by rounds 5 minutes apart: 2 reads a round, never 24 at once.
    assert reads == [2] * 30
    assert oldest <= timedelta(hours=1)


def test_always_read_and_changed_checks_are_read_whatever_drive_says():
    the_plans = plans(3)
    the_plans[0] = replace(the_plans[0], always_read=True)
    the_bench, _ = bench(the_plans=the_plans)
    the_bench.run()
    next_round(the_bench)
    assert read_in(the_bench, the_bench.run()) == ["s0"]

    the_bench.plans[2] = replace(the_plans[2], fingerprint="other checks")
    next_round(the_bench)
    assert sorted(read_in(the_bench, the_bench.run())) == ["s0", "s2"]


def fresh_plan(sid: str) -> SheetPlan:
    check = FreshnessCheck(range=RANGE, warn="> 2h", fail="> 1d")
    return SheetPlan(id=sid, name=sid, checks=(check,), ranges=(RANGE,), fingerprint="f",
                     max_age=timedelta(days=7))


def test_a_spreadsheet_that_silently_goes_stale_is_judged_on_time_without_a_read():
    reader = ScriptedReader()
    the_bench, _ = bench(the_plans=[fresh_plan("s0")], reader=reader)
    written = the_bench.clock.now() - timedelta(hours=1)
    reader.script = {"s0": [{"range": RANGE, "values": [[written.strftime("%Y-%m-%dT%H:%M:%SZ")]]}]}
    the_bench.run()
    assert the_bench.stored().health["s0"].health is OK

    verdicts = []
    for _ in range(15):  # 75 minutes: the newest date passes 2 hours old within one round of it
        next_round(the_bench)
        run = the_bench.run()
        assert run.report.counts.tasks == 0
        verdicts.append(the_bench.stored().health["s0"].health)
    assert verdicts.index(WARN) == 12  # 1 h old, then 13 rounds of 5 min: first over 2 h at 2h05
    [event] = [e for e in the_bench.stored().events if isinstance(e, HealthChanged)]
    assert event.previous is OK and event.current is WARN
    assert "newest date" in event.findings[0].message and "(> 2h)" in event.findings[0].message
    assert len(reader.reads) == 1

    the_bench.clock.advance(timedelta(days=1).total_seconds())
    the_bench.run()
    assert the_bench.stored().health["s0"].health is FAIL and len(reader.reads) == 1


def test_drive_failing_reads_everything_keeps_the_position_and_is_told_once_per_episode():
    the_bench, drive = bench(3)
    the_bench.run()
    drive.errors = [DRIVE_DOWN, DRIVE_DOWN]
    runs = []
    for _ in range(3):
        next_round(the_bench)
        runs.append(the_bench.run())

    assert [run.report.counts.tasks for run in runs] == [3, 3, 0]
    assert drive.asked == [None, "1", "1", "1"]  # the same position while Drive failed
    told = [kinds(of_run(run)) for run in runs]
    assert told[0].count(ChangeFeedFailing.KIND) == 1 and ChangeFeedFailing.KIND not in told[1]
    assert told[2].count(ChangeFeedRecovered.KIND) == 1
    assert the_bench.stored().feed.failing_since is None


def test_a_position_drive_refuses_is_dropped_and_a_fresh_one_taken():
    the_bench, drive = bench(2)
    the_bench.run()
    next_round(the_bench)
    drive.errors = [UNKNOWN_POSITION]
    assert the_bench.run().report.counts.tasks == 2
    assert the_bench.stored().feed.position is None

    next_round(the_bench)
    assert the_bench.run().report.counts.tasks == 2  # from a fresh position nothing is known yet
    assert drive.asked[-1] is None and the_bench.stored().feed.position == "1"


def test_switching_detection_off_reads_everything_and_forgets_the_position():
    the_bench, drive = bench(3)
    the_bench.run()
    the_bench.changes = None
    next_round(the_bench)
    assert the_bench.run().report.counts.tasks == 3
    assert the_bench.stored().feed == FeedState()

    the_bench.changes = drive
    next_round(the_bench)
    assert the_bench.run().report.counts.tasks == 3 and drive.asked[-1] is None  # starts afresh


def test_a_feed_of_another_credential_starts_from_a_fresh_position():
    the_bench, drive = bench(2)
    the_bench.run()
    drive.source = "sa-2.json"
    next_round(the_bench)
    assert the_bench.run().report.counts.tasks == 2 and drive.asked[-1] is None


# -- no edit is ever missed, whatever is killed when --------------------------------------------------


class DriveLog:
    """Drive's change feed over a log of edits: a position is an index into the log."""

    source = "sa-1.json"

    def __init__(self) -> None:
        self.log: list[str] = []
        self.kill_next = False

    def start_position(self, timeout: float) -> str:
        self._maybe_killed()
        return str(len(self.log))

    def changed_since(self, position: str, timeout: float) -> ChangedFiles:
        self._maybe_killed()
        return ChangedFiles(frozenset(self.log[int(position):]), frozenset(), str(len(self.log)), 1)

    def _maybe_killed(self) -> None:
        if self.kill_next:
            self.kill_next = False
            raise Killed()


class VersionedReader(ScriptedReader):
    """Serves each spreadsheet's current version, and remembers which version each answer carried
    at which instant; ``kill_after`` reads, the next one dies with the process."""

    def __init__(self, clock) -> None:
        super().__init__()
        self.clock = clock
        self.versions: dict[str, int] = {}
        self.served: dict[tuple[str, object], int] = {}
        self.kill_after: int | None = None

    def read(self, spreadsheet_id, ranges, credential, timeout):
        if self.kill_after is not None:
            if self.kill_after == 0:
                self.kill_after = None
                raise Killed()
            self.kill_after -= 1
        self.served[(spreadsheet_id, self.clock.now())] = self.versions.get(spreadsheet_id, 0)
        return super().read(spreadsheet_id, ranges, credential, timeout)


class NoEditMissed(RuleBasedStateMachine):
    """Edits, runs killed at any read or while Drive answers, and time passing, in any order: once
    the edits stop, a few unkilled rounds leave every spreadsheet judged on its latest version."""

    def __init__(self) -> None:
        super().__init__()
        self.drive = DriveLog()
        the_plans = [replace(plan, max_age=timedelta(days=30)) for plan in plans(6)]
        self.bench = Bench(ScriptedReader(), the_plans, MemoryLocation(), changes=self.drive)
        self.reader = VersionedReader(self.bench.clock)
        self.bench.reader = self.reader

    @rule(sheet=st.integers(0, 5))
    def edit(self, sheet):
        sid = f"s{sheet}"
        self.reader.versions[sid] = self.reader.versions.get(sid, 0) + 1
        self.drive.log.append(sid)

    @rule(kill=st.one_of(st.none(), st.integers(0, 6), st.just("drive")))
    def run(self, kill):
        if kill == "drive":
            self.drive.kill_next = True
        else:
            self.reader.kill_after = kill
        with contextlib.suppress(Killed):  # what its checkpoints saved is what is left
            self.bench.run()
        self.drive.kill_next, self.reader.kill_after = False, None

    @rule(minutes=st.integers(1, 7))
    def wait(self, minutes):
        self.bench.clock.advance(minutes * 60)

    @rule()
    def settle(self):
        for _ in range(2):
            self.bench.clock.advance(ROUND)
            self.bench.run()
        stored = self.bench.stored()
        for sid, version in self.reader.versions.items():
            read_at = stored.health[sid].read_at
            assert self.reader.served[(sid, read_at)] == version, sid


TestNoEditMissed = NoEditMissed.TestCase
TestNoEditMissed.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)


# -- a run that keeps watching the feed ([run] change_poll) -------------------------------------------

WATCH = timedelta(seconds=20)
CRON_BUDGET = timedelta(minutes=4, seconds=30)  # as shipped: the round it starts outlives the run
GONE = SheetReadError(ErrorClass.PERMANENT, 404, "notFound", "Requested entity was not found.")


def watching_bench(count: int = 5, per_credential: int = 60, **bench_fields) -> tuple[Bench, ScriptedDrive]:
    drive = ScriptedDrive()
    the_bench = Bench(ScriptedReader(), plans(count), MemoryLocation(), changes=drive,
                      per_credential=per_credential, **bench_fields)
    drive.clock = the_bench.clock
    return the_bench, drive


def test_a_run_watching_the_feed_reads_an_edit_it_reports_mid_run_and_tells_it_before_the_run_ends():
    told_at: list[tuple[float, list[str]]] = []
    the_bench, drive = watching_bench(5)
    the_bench.run()  # the first round, and the feed's position
    next_round(the_bench)
    start = the_bench.clock.monotonic()
    drive.later = [(start + 70, {"s3"})]
    the_bench.reader.script = {"s3": [GONE]}  # the edit was its deletion: there is news to tell
    the_bench.tell = lambda: told_at.append((the_bench.clock.monotonic() - start,
                                             list(the_bench.reader.reads)))

    run = the_bench.run(budget=CRON_BUDGET, change_poll=WATCH)

    assert read_in(the_bench, run) == ["s3"]  # nothing at the round's start; s3 once Drive showed it
    asks = drive.asked[1:]  # this run's: the round's start, then one every 20 s of its 4m30s
    assert len(asks) == 1 + 13 and set(asks) <= {"1", "2"}
    # Told within a look of Drive showing it, not at the run's end (nothing before: no news).
    [(at, reads)] = told_at
    assert 70 <= at <= 70 + 20 and reads[-1] == "s3"
    assert kinds(of_run(run)) == [DeadLettered.KIND]
    assert run.report.stop_reason == "watched"
    stored = the_bench.stored()
    assert stored.round.info.targets == ("s3",) and stored.round.info.unread == 4
    assert stored.round.is_complete() and "s3" in stored.dlq


def test_an_edit_reported_during_the_round_is_read_first_even_when_the_round_read_it_already():
    # Two reads a minute: the round of 5 takes two minutes, so the feed is asked while it goes on.
    the_bench, drive = watching_bench(5, per_credential=2)
    drive.later = [(the_bench.clock.monotonic() + 20, {"s0", "s4"})]

    run = the_bench.run(budget=CRON_BUDGET, change_poll=WATCH)

    # s0 was read before Drive reported it: it is read again; s4 goes before the round's s2 and s3.
    assert the_bench.reader.reads[:3] == ["s0", "s1", "s0"]
    assert the_bench.reader.reads[3:] in (["s4", "s2", "s3"], ["s4", "s3", "s2"])
    assert run.report.counts.tasks == 6 and the_bench.stored().round.is_complete()


def test_an_edit_reported_while_its_read_is_out_is_read_again():
    # s1's read takes 30 s; Drive reports s1 edited 20 s in, while that read is out: its answer may
    # hold the values from before the edit.
    the_bench, drive = watching_bench(3)
    the_bench.run()
    next_round(the_bench)
    drive.changed = {"s1"}
    drive.later = [(the_bench.clock.monotonic() + 15, {"s1"})]
    the_bench.make_reads = lambda clock: SimulatedReads(the_bench.reader, clock,
                                                        latency=lambda sid: 30.0 if sid == "s1" else 0.1)
    the_bench.run(budget=CRON_BUDGET, change_poll=WATCH, request_timeout=60.0)
    assert the_bench.reader.reads[-2:] == ["s1", "s1"]
    assert not the_bench.stored().health["s1"].change_unread


def test_a_kill_while_watching_loses_no_edit():
    the_bench, drive = watching_bench(4)
    the_bench.run()
    next_round(the_bench)
    drive.later = [(the_bench.clock.monotonic() + 30, {"s2"})]
    the_bench.reader.script = {"s2": [Killed()]}  # the read the watch queued dies with the process

    with pytest.raises(Killed):
        the_bench.run(budget=CRON_BUDGET, change_poll=WATCH)
    stored = the_bench.stored()
    # The feed's new position was saved with what it queued.
    assert stored.feed.position == "2" and stored.health["s2"].change_unread

    # Recovered, quarantined: read after the run's first seconds.
    again = the_bench.run(budget=CRON_BUDGET, change_poll=WATCH)
    assert "s2" in read_in(the_bench, again) and not the_bench.stored().health["s2"].change_unread


def test_a_feed_failing_mid_run_is_told_once_and_asked_again_a_look_later():
    the_bench, drive = watching_bench(3)
    the_bench.run()
    next_round(the_bench)
    drive.errors = [None, DRIVE_DOWN, DRIVE_DOWN]  # the round's start answers; two looks fail
    drive.later = [(the_bench.clock.monotonic() + 100, {"s0"})]

    run = the_bench.run(budget=CRON_BUDGET, change_poll=WATCH)

    assert kinds(of_run(run)).count(ChangeFeedFailing.KIND) == 1
    assert kinds(of_run(run)).count(ChangeFeedRecovered.KIND) == 1
    assert len(drive.asked) - 1 == 1 + 13  # a failed look waits its 20 s like any other
    assert read_in(the_bench, run) == ["s0"]


def test_the_lag_from_an_edit_to_its_verdict_is_kept_and_every_view_shows_the_same_figure():
    from monitor.admin import edit_lag_text, status_report
    from monitor.admin.metrics import edit_lag_families

    the_bench, drive = watching_bench(4)
    the_bench.run()
    next_round(the_bench)
    start = the_bench.clock.monotonic()
    # Drive shows s1 and s2 a minute in, edited three and two minutes before that (its own delay).
    drive.later = [(start + 60, {"s1", "s2"})]
    drive.edited = {"s1": the_bench.clock.now() - timedelta(seconds=120),
                    "s2": the_bench.clock.now() - timedelta(seconds=60)}

    the_bench.run(budget=CRON_BUDGET, change_poll=WATCH)

    stored, now = the_bench.stored(), the_bench.clock.now()
    [record] = [run for hour in stored.runlog.values() for run in hour.runs if run.edit_lags]
    assert sorted(record.edit_lags) == [120, 180]  # judged at once, the moment Drive showed them
    lag = status_report(stored, now)["edit_lag"]
    assert lag == {"edits": 2, "p50_seconds": 120, "p95_seconds": 180, "max_seconds": 180}
    assert edit_lag_text(lag) == ("2 edits in the last hour, judged 2 minutes after they were made "
                                  "(median), 3 minutes for 95 % of them, 3 minutes at most")
    families = {family.name: family for family in edit_lag_families(stored, now)}
    samples = families["sheet_monitor_edit_lag_seconds"].samples
    quantiles = {sample.labels["quantile"]: sample.value for sample in samples}
    assert quantiles == {"0.5": 120, "0.95": 180, "1": 180}
    # An hour on, the figure is gone from every view alike.
    assert status_report(stored, now + timedelta(hours=1, minutes=5))["edit_lag"] is None


def test_a_round_reads_the_edits_drive_reported_before_its_routine_reads():
    the_bench, drive = bench(5)
    the_bench.run()
    the_bench.clock.advance(2 * 3600)  # every spreadsheet is due by its max_age too
    drive.changed = {"s3"}
    run = the_bench.run()
    assert read_in(the_bench, run)[0] == "s3" and len(read_in(the_bench, run)) == 5
