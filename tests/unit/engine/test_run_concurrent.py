"""Several reads in flight: the run keeps the quota busy at Google's latency, and nothing else changes.

Reads overlap on the run's ManualClock (``SimulatedReads``): each lasts the time the test gives its
spreadsheet and lands in order of its end, so every test here is deterministic and waits for nothing.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import timedelta

import pytest
from concurrency_helpers import most_at_the_server
from run_fixtures import (
    FORBIDDEN,
    QUOTA,
    RANGE,
    UNAVAILABLE,
    Bench,
    Killed,
    PoisonReader,
    ScriptedReader,
    SimulatedReads,
    kinds,
    plans,
)

from monitor.checks import FreshnessCheck
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.engine.api_health import ApiState
from monitor.engine.events import CrashRecovered
from monitor.engine.inspect import SheetPlan
from monitor.engine.tasks import DONE, FAILED, PENDING, POISON_INTERRUPTIONS
from monitor.storage import MemoryLocation

LATENCY = 0.4
MARGIN = 1.0  # the pacer's


def bench(reader, count: int, seconds=lambda sheet: LATENCY, **fields) -> tuple[Bench, list[SimulatedReads]]:
    """A bench whose runs read through SimulatedReads; the list collects each run's reads."""
    made: list[SimulatedReads] = []

    def reads(clock):
        made.append(SimulatedReads(reader, clock, seconds))
        return made[-1]

    return Bench(reader, plans(count), MemoryLocation(), make_reads=reads, **fields), made


def at_the_server(reads: SimulatedReads, seconds=lambda sheet: LATENCY) -> list[tuple[float, float]]:
    """Each read's span at Google: sent at its start, counted by its answer and (the pacer's margin's
    assumption) within a second of its start."""
    return [(start, start + min(seconds(sheet), MARGIN)) for sheet, start in reads.started]


def peak_in_flight(reads: SimulatedReads, seconds=lambda sheet: LATENCY) -> int:
    spans = [(start, start + seconds(sheet)) for sheet, start in reads.started]
    return max(sum(1 for other in spans if other[0] <= start < other[1]) for start, _ in spans)


def test_while_the_window_has_room_the_run_keeps_the_ceiling_in_flight():
    sequential, _ = bench(ScriptedReader(), 60, credentials=("a", "b", "c"))
    concurrent, made = bench(ScriptedReader(), 60, credentials=("a", "b", "c"))
    one_at_a_time = sequential.run(max_in_flight=1)
    together = concurrent.run(max_in_flight=16)
    assert one_at_a_time.state.round.is_complete() and together.state.round.is_complete()
    # 180 reads a window, 60 to send: the window has room for all, so 16 go at once (after each
    # credential's first read, alone), not the 3 that the average rate needs (3/s x 0.4 s, and one).
    assert peak_in_flight(made[0]) == 16
    assert one_at_a_time.report.duration_seconds == pytest.approx(60 * LATENCY)
    # The first reads, then 57 more 16 at a time: 4 batches.
    assert together.report.duration_seconds == pytest.approx(LATENCY + 4 * LATENCY)


def test_reads_with_grid_data_go_at_half_the_ceiling_and_batchgets_at_the_whole():
    # A first read of a spreadsheet whose dates need its zone is a spreadsheets.get with grid data, a
    # heavy answer; the second round's reads of the same spreadsheets are batchGets.
    dated = (FreshnessCheck(range=RANGE, warn="> 2h"),)
    the_bench, made = bench(ScriptedReader(), 0, credentials=("a", "b", "c"))
    the_bench.plans[:] = [SheetPlan(f"s{n}", f"Store {n}", dated, (RANGE,)) for n in range(60)]
    first = the_bench.run(max_in_flight=16)
    assert first.state.round.is_complete() and len(the_bench.reader.zone_reads) == 60
    assert peak_in_flight(made[0]) == 8
    the_bench.clock.advance(5 * 60)
    second = the_bench.run(max_in_flight=16)
    assert second.state.round.is_complete() and len(the_bench.reader.zone_reads) == 60  # zones known
    assert peak_in_flight(made[1]) == 16


def test_the_run_keeps_out_no_more_reads_than_its_own_thread_takes_in():
    # A read's lease (its task, "processing") is saved in half a millisecond, its result takes the
    # run's own thread 10 ms a document to record. Reads sent as fast as leases go would come back
    # faster than they are recorded, their answers waiting in memory: the run keeps out what its
    # thread takes in as they come back.
    seconds = lambda sheet: 0.1  # noqa: E731
    the_bench, made = bench(ScriptedReader(), 150, seconds, credentials=("a", "b", "c"))

    def slow_results(session):
        before = session.store.get_properties()
        session.save()
        written = [value for key, value in session.store.get_properties().items() if before.get(key) != value]
        leases = sum('"status":"processing"' in value for value in written)
        the_bench.clock.advance(0.0005 * leases + 0.01 * (len(written) - leases))

    for _ in range(2):  # the second starts from the first's latency (0.1 s, not Google's typical 0.4 s)
        with the_bench.opened(max_in_flight=64, checkpoint_every=0.0, save=slow_results) as run:
            run.execute()
        assert run.state.round.is_complete()
        the_bench.clock.advance(5 * 60)
    own = run.own_pace.per_read
    worth = math.ceil(4 * 0.1 / own)  # four times what it records while one is out (Little's law)
    assert worth < (0.1 / 0.0005) / 5  # a fifth of what the leases alone would let out
    assert peak_in_flight(made[1], seconds) <= worth + 3  # (each credential's first read, beside)
    # ... and the round is hardly slower for it: the thread's own time is what bounds it (with no
    # limit, 3.29 s; these answers, all 0.1 s, come together, the worst case for a limit).
    assert run.report.duration_seconds <= 1.15 * (150 * own + 0.1)


def test_reads_in_flight_never_exceed_the_quota_in_any_rolling_minute():
    # 1 credential at 60/min, 150 spreadsheets, 2.5 minutes of reads: the pacer, not the workers, decides.
    the_bench, made = bench(ScriptedReader(), 150)
    run = the_bench.run(max_in_flight=16, budget=timedelta(minutes=4))
    assert run.state.round.is_complete()
    # However each read arrived within its span, no window at Google held more than 60.
    assert most_at_the_server(at_the_server(made[0])) == 60


@pytest.mark.parametrize("count, credentials, per_window, ceiling", [
    (150, 1, 60, 32), (700, 5, 300, 32), (1153, 5, 300, 32),
    (519, 5, 300, 64),  # a burst of edits: the last window's 219 reads go at the pace the first's did
])
def test_a_round_takes_the_least_time_the_rolling_window_allows(count, credentials, per_window, ceiling):
    # N reads at L a window cannot take less than floor((N - 1) / L) windows and one read. Sized for
    # the average rate instead (2 in flight at 60 a minute, 3 at 300), each window's allowance took
    # most of the window to send, and the last window ended late: 134 s for 150 reads, not 122.
    names = tuple(f"sa-{n}" for n in range(credentials))
    the_bench, made = bench(ScriptedReader(), count, credentials=names)
    run = the_bench.run(max_in_flight=ceiling, budget=timedelta(minutes=10))
    assert run.state.round.is_complete()
    windows = (count - 1) // per_window
    least = windows * 60.0 + LATENCY
    assert run.report.duration_seconds <= 1.05 * least
    # ... and no faster than a window after each answer allows: the pacer decided every send.
    assert run.report.duration_seconds >= windows * (60.0 + LATENCY) + LATENCY
    assert most_at_the_server(at_the_server(made[0])) == per_window


def test_a_credentials_first_read_goes_alone_and_its_others_follow_when_it_is_back():
    # The first read fetches the credential's token: a read beside it would wait for the token inside
    # its request, counted by the pacer before Google counts it.
    the_bench, made = bench(ScriptedReader(), 40, credentials=("a", "b", "c"))
    the_bench.run(max_in_flight=16)
    reads = made[0]
    starts = [start for _, start in reads.started]
    for credential in ("a", "b", "c"):
        mine = [start for start, used in zip(starts, reads.credentials, strict=True) if used == credential]
        assert mine[1] - mine[0] == pytest.approx(LATENCY)  # the next went when the first came back
    first_three = reads.credentials[:3]
    assert sorted(first_three) == ["a", "b", "c"] and starts[2] == starts[0]  # the credentials together


def test_a_hanging_first_read_holds_its_credential_back_for_a_second_only():
    seconds = lambda sheet: float("inf") if sheet == "s0" else LATENCY  # noqa: E731
    the_bench, made = bench(ScriptedReader(), 5, seconds)
    run = the_bench.run(max_in_flight=16, request_timeout=30.0, budget=timedelta(seconds=60))
    starts = [start for _, start in made[0].started]
    assert made[0].started[0][0] == "s0"
    # A second: the token has come by then (or is late by less than the pacer's 1 s margin).
    assert starts[1] - starts[0] == pytest.approx(1.0)
    # Still none back: that read too goes alone, and once it is back the others go together.
    assert starts[2] - starts[1] == pytest.approx(LATENCY) and starts[4] == starts[2]
    assert all(run.state.health[f"s{n}"].last_checked_at for n in range(1, 5))


class RenamedTabs(ScriptedReader):
    """Every tenth spreadsheet's range is refused (a renamed tab), and the run may explain the refusal
    with one more request, sent without a slot of its own (its tab titles, as monitor.engine.inspect
    does): ``explained`` holds when each went, at the read's end, the latest the run can learn of it.
    They are s9, s19, ...: read in order at 60 a window, s59 and s119 come near a window's last slot."""

    def __init__(self, clock) -> None:
        super().__init__()
        self.clock = clock
        self.explained: list[float] = []
        self.refused: list[SheetReadError] = []

    def read(self, spreadsheet_id, ranges, credential, timeout):
        if int(spreadsheet_id[1:]) % 10 == 9:
            self.reads.append(spreadsheet_id)
            error = SheetReadError(ErrorClass.PERMANENT, 400, "INVALID_ARGUMENT",
                                   "Unable to parse range: Stock!A1:B2", range="Stock!A1:B2")
            self.refused.append(error)
            raise error
        return super().read(spreadsheet_id, ranges, credential, timeout)

    def tab_titles(self, spreadsheet_id, credential, timeout):
        self.explained.append(self.clock.time() + LATENCY)
        return super().tab_titles(spreadsheet_id, credential, timeout)


def test_requests_a_read_sends_without_a_slot_find_room_left_for_them_in_the_window():
    # Sent at once, a window's allowance fills it: a refusal's explanation sent then would be the
    # window's 61st request at Google, unless the pacer kept a slot for each read out that may send
    # one, the read that takes the slot before the last included.
    reader = RenamedTabs(None)
    the_bench, made = bench(reader, 150)
    reader.clock = the_bench.clock
    run = the_bench.run(max_in_flight=16, budget=timedelta(minutes=4))
    assert run.state.round.is_complete() and len(reader.refused) == 15
    # An explanation is counted by Google by the read's end, when the run learns of it.
    assert most_at_the_server(at_the_server(made[0]) + [(end, end) for end in reader.explained]) <= 60
    # A window's last slot, free when no read is out, goes to a read all the same: one that may not
    # explain a refusal (told as Google worded it), never an idle slot.
    explained = [error for error in reader.refused if error.tabs is not None]
    assert len(reader.explained) == len(explained) >= 13
    assert all(error.extra_requests == (error.tabs is not None) for error in reader.refused)
    assert run.report.duration_seconds <= 1.05 * (165 // 60 * 60.0 + LATENCY)  # still the window's pace


def test_a_hanging_spreadsheet_holds_one_worker_and_the_others_go_on():
    hanging = {"s3", "s7"}
    seconds = lambda sheet: float("inf") if sheet in hanging else LATENCY  # noqa: E731
    the_bench, _ = bench(ScriptedReader(), 30, seconds, credentials=("a", "b", "c", "d", "e"))
    run = the_bench.run(max_in_flight=16, request_timeout=10.0)
    health = run.state.health
    assert all(health[f"s{n}"].last_checked_at for n in range(30) if f"s{n}" not in hanging)
    # Every healthy sheet was read while the first two timeouts were still running.
    healthy_done = max(health[f"s{n}"].last_checked_at for n in range(30) if f"s{n}" not in hanging)
    assert (healthy_done - run.state.heartbeat.started_at).total_seconds() < 10.0


def test_a_retry_waits_its_backoff_from_when_the_failure_became_known_not_from_when_the_read_started():
    seconds = lambda sheet: float("inf")  # noqa: E731 - every read times out
    the_bench, made = bench(ScriptedReader(), 1, seconds)
    the_bench.run(max_in_flight=4, request_timeout=10.0, budget=timedelta(seconds=40))
    starts = [start for _, start in made[0].started]
    # Each read times out after 10 s; the retries wait 3 s, then 9 s (and jitter) from then.
    assert len(starts) == 3
    assert starts[1] - starts[0] >= 10.0 + 3.0 and starts[2] - starts[1] >= 10.0 + 9.0


def test_with_every_request_hanging_the_run_ends_within_its_budget_and_gives_its_tasks_back():
    seconds = lambda sheet: float("inf")  # noqa: E731
    the_bench, _ = bench(ScriptedReader(), 10, seconds, credentials=("a", "b", "c"))
    run = the_bench.run(max_in_flight=8, request_timeout=30.0, budget=timedelta(seconds=20))
    assert the_bench.clock.monotonic() - run.started_monotonic <= 20.0
    stored = the_bench.stored().round.tasks.values()
    assert all(task.status is not FAILED and task.interruptions == 0 for task in stored)
    assert not any(task.quarantined for task in stored)


def outcomes_of(run) -> tuple:
    state = run.state
    return (
        {sid: record.health for sid, record in state.health.items()},
        sorted(state.dlq.keys()),
        {sid: (breaker.state, breaker.consecutive_failures) for sid, breaker in state.breakers.items()},
        Counter(kinds(state.events)),
        {task.target: (task.status, task.attempts) for task in state.round.tasks.values()},
    )


def test_breakers_the_dlq_and_the_events_see_the_same_outcomes_as_reading_one_at_a_time():
    def script():
        return ScriptedReader({"s1": 2, "s4": [FORBIDDEN], "s6": 6, "s8": [QUOTA], "s9": 1})

    sequential, _ = bench(script(), 12)
    concurrent, _ = bench(script(), 12, credentials=("a", "b", "c", "d"))
    one_at_a_time = sequential.run(max_in_flight=1)
    together = concurrent.run(max_in_flight=16)
    assert outcomes_of(together) == outcomes_of(one_at_a_time)
    assert together.report.duration_seconds < one_at_a_time.report.duration_seconds


def test_a_run_that_finds_google_degraded_sends_one_probe_alone_before_anything_else():
    the_bench, made = bench(ScriptedReader({"s0": [UNAVAILABLE]}), 10, credentials=("a", "b", "c"))
    with the_bench.session() as session:
        session.state.api = ApiState(degraded=True, degraded_since=the_bench.clock.now())
    run = the_bench.run(max_in_flight=16)
    assert run.report.stop_reason == "api_degraded"
    assert [sheet for sheet, _ in made[0].started] == ["s0"]  # the probe failed: nothing else went out


def killed_with_in_flight(the_bench: Bench, reader: ScriptedReader, after: int, **overrides) -> None:
    """A run killed (kill -9) as its ``after + 1``-th read goes out, with ``after`` reads in flight."""
    reader.kill_on = after
    with pytest.raises(Killed):
        the_bench.run(checkpoint_every=0.0, **overrides)
    reader.kill_on = None


class KillingReader(ScriptedReader):
    """A scripted reader that stands for kill -9 when its ``kill_on``-th read (0-based) goes out."""

    kill_on: int | None = None

    def read(self, spreadsheet_id, ranges, credential, timeout):
        if self.kill_on is not None and len(self.reads) == self.kill_on:
            raise Killed()
        return super().read(spreadsheet_id, ranges, credential, timeout)


def test_a_kill_with_several_reads_in_flight_blames_none_and_reads_them_alone_after_the_rest():
    reader = KillingReader()
    the_bench, made = bench(reader, 10, credentials=("a", "b", "c", "d", "e"))
    killed_with_in_flight(the_bench, reader, 2, max_in_flight=16)
    run = the_bench.run(max_in_flight=16)
    [event] = [e for e in run.state.events if isinstance(e, CrashRecovered)]
    assert (event.reclaimed, event.poisoned) == (3, 0)  # two reads out and the third's lease
    tasks = {task.target: task for task in run.state.round.tasks.values()}
    assert all(task.status is DONE and task.interruptions == 0 for task in tasks.values())
    second = made[1].started
    assert sorted(sheet for sheet, _ in second[-3:]) == ["s0", "s1", "s2"]  # after every fresh one
    # Each reclaimed read went out alone: the one before it had landed (0.4 s reads) when it started;
    # and none in the run's first seconds, where outside kills would land on it.
    starts = [start for _, start in second[-4:]]
    assert all(b - a >= LATENCY for a, b in zip(starts, starts[1:], strict=False))
    assert starts[1] - run.state.heartbeat.started_at.timestamp() >= run.settings.suspects_after


def test_a_spreadsheet_that_kills_every_run_it_is_read_alone_in_is_dead_lettered_as_poison():
    reader = PoisonReader("s2")
    the_bench, _ = bench(reader, 6, credentials=("a", "b", "c"))
    for _ in range(POISON_INTERRUPTIONS + 1):  # killed in flight with others once, then alone 3 times
        with pytest.raises(Killed):
            the_bench.run(max_in_flight=16, checkpoint_every=0.0)
    run = the_bench.run(max_in_flight=16)
    tasks = {task.target: task for task in run.state.round.tasks.values()}
    assert tasks["s2"].status is FAILED and "s2" in run.state.dlq
    assert all(task.status is DONE for sheet, task in tasks.items() if sheet != "s2")
    assert reader.reads.count("s2") == POISON_INTERRUPTIONS + 1


def test_a_task_given_back_at_the_end_of_the_budget_is_read_by_the_next_run_not_lost():
    seconds = lambda sheet: 50.0 if sheet == "s0" else LATENCY  # noqa: E731
    the_bench, _ = bench(ScriptedReader(), 3, seconds)
    first = the_bench.run(max_in_flight=4, request_timeout=60.0, budget=timedelta(seconds=30))
    stored = {task.target: task for task in the_bench.stored().round.tasks.values()}
    assert stored["s0"].status is PENDING and stored["s0"].interruptions == 0
    assert first.report.counts.tasks == 3
    second = the_bench.run(max_in_flight=4, request_timeout=60.0, budget=timedelta(minutes=2))
    assert second.state.round.is_complete()


def test_a_run_reports_reads_per_project_mean_read_time_and_peak_in_flight_and_the_next_starts_there():
    seconds = lambda sheet: 2.0  # noqa: E731 - a slow day at Google
    projects = {"a": "alpha", "b": "alpha", "c": "beta"}
    the_bench, made = bench(ScriptedReader(), 30, seconds, credentials=tuple(projects), projects=projects)
    first = the_bench.run(max_in_flight=16)
    stats = the_bench.stored().heartbeat.stats
    counts = stats.counts
    assert sum(counts.reads_by_project.values()) == 30 and set(counts.reads_by_project) == {"alpha", "beta"}
    by_credential = counts.reads_by_credential
    assert counts.reads_by_project["alpha"] == by_credential["a"] + by_credential["b"]
    assert stats.mean_read_seconds == 2.0
    assert stats.concurrency == first.peak_in_flight
    # The window has room for the 30: as many go as the ceiling allows, whatever the latency.
    assert peak_in_flight(made[0], seconds) == 16
    later = Bench(ScriptedReader(), plans(30), the_bench.location, clock=the_bench.clock,
                  credentials=tuple(projects), projects=projects)
    with later.opened(max_in_flight=16) as run:
        assert run.latency.value == 2.0  # the next run sizes itself from the last one's mean at once
