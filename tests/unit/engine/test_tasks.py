"""The round: one task per spreadsheet, which one is due next, and every change of a task through Round.

Pure: ``now`` comes in. A stateful property test at the end drives random sequences of task lives,
kills and admin actions, and checks the incremental counts and the O(log n) ``next_due`` against a
plain scan of the tasks.
"""

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from monitor.core.errors import POISON, ErrorInfo
from monitor.engine.tasks import (
    DONE,
    FAILED,
    HISTORY_LIMIT,
    PENDING,
    POISON_INTERRUPTIONS,
    PROCESSING,
    Round,
    RoundInfo,
    TaskStatus,
    tick_slack,
)
from monitor.state.schema import ROUND, TASK

NOW = datetime(2026, 3, 2, 3, 47, tzinfo=UTC)
UNAVAILABLE = ErrorInfo("transient", "The service is currently unavailable.", 503, "UNAVAILABLE")
QUOTA = ErrorInfo("quota", "Quota exceeded for quota metric 'Read requests'.", 429, "RESOURCE_EXHAUSTED")


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


def take(rnd: Round, now: datetime = NOW):
    """The next due task, leased as the run leases it before its request."""
    task = rnd.next_due(now)
    rnd.start(task)
    return task


def failed_for_retry(rnd: Round, at: datetime):
    task = take(rnd)
    rnd.record_failure(task, NOW, UNAVAILABLE, task.attempts + 1)
    rnd.retry_at(task, at)
    return task


def test_a_round_has_one_pending_task_per_target_in_order():
    rnd = Round.build(["a", "b", "c"], NOW)
    assert [t.target for t in rnd.tasks.values()] == ["a", "b", "c"]
    assert rnd.counts() == {PENDING: 3, PROCESSING: 0, DONE: 0, FAILED: 0}
    assert all(t.created_at == NOW and t.round_id == rnd.id for t in rnd.tasks.values())
    assert rnd.id == "r20260302T034700" and rnd.started_at == NOW and len(rnd) == 3


def test_next_due_walks_the_round_and_offers_an_untaken_task_again():
    rnd = Round.build(["a", "b"], NOW)
    first = rnd.next_due(NOW)
    assert first.target == "a"
    assert rnd.next_due(NOW) is first  # not taken yet: offered again, never lost
    rnd.start(first)
    assert rnd.next_due(NOW).target == "b"  # a leased task is not offered twice
    rnd.succeed(first, NOW)
    assert rnd.next_due(NOW).target == "b"


def test_a_retry_waits_until_its_time_while_other_tasks_go_first():
    rnd = Round.build(["a", "b"], NOW)
    a = failed_for_retry(rnd, NOW + seconds(3))
    assert rnd.next_due(NOW).target == "b"
    rnd.succeed(take(rnd), NOW)
    assert rnd.next_due(NOW + seconds(2.999)) is None
    assert rnd.next_retry_at() == NOW + seconds(3)
    assert rnd.next_due(NOW + seconds(3)) is a
    assert rnd.next_due(NOW + seconds(4)) is a


def test_a_due_retry_goes_before_fresh_tasks():
    rnd = Round.build(["a", "b", "c"], NOW)
    a = failed_for_retry(rnd, NOW + seconds(3))
    assert rnd.next_due(NOW + seconds(3)) is a


def test_a_due_retry_offered_but_not_taken_is_offered_again():
    rnd = Round.build(["a", "b"], NOW)
    a = failed_for_retry(rnd, NOW + seconds(3))
    rnd.succeed(take(rnd), NOW)
    later = NOW + seconds(3)
    assert rnd.next_due(later) is a
    assert rnd.next_due(later) is a  # not taken (no quota yet): still due, never lost
    assert rnd.next_retry_at() == later
    rnd.start(a)
    rnd.succeed(a, later)
    assert rnd.next_due(later) is None and rnd.next_retry_at() is None


def test_a_rescheduled_retry_is_due_at_its_new_time_only():
    rnd = Round.build(["a"], NOW)
    a = failed_for_retry(rnd, NOW + seconds(3))
    rnd.start(rnd.next_due(NOW + seconds(3)))
    rnd.record_failure(a, NOW + seconds(3), UNAVAILABLE, 2)
    rnd.retry_at(a, NOW + seconds(12))
    assert rnd.next_retry_at() == NOW + seconds(12)  # the earlier heap entry went stale
    assert rnd.next_due(NOW + seconds(11.999)) is None
    assert rnd.next_due(NOW + seconds(12)) is a


def stored_and_loaded(rnd: Round) -> Round:
    """The round as the next run reads it back from the state."""
    info = ROUND.decode(ROUND.encode(rnd.info))
    return Round(info, [TASK.decode(TASK.encode(task)) for task in rnd.tasks.values()])


def test_the_round_survives_storage_and_its_retries_stay_scheduled():
    rnd = Round.build(["a", "b"], NOW)
    failed_for_retry(rnd, NOW + seconds(9))
    again = stored_and_loaded(rnd)
    assert again.info == rnd.info and list(again.tasks.values()) == list(rnd.tasks.values())
    assert again.counts() == rnd.counts()
    assert again.next_due(NOW).target == "b"
    assert again.next_retry_at() == NOW + seconds(9)
    assert again.tasks.pending_changes() == ({}, set())  # as loaded: nothing to save


def test_a_success_counts_the_attempt_and_ends_the_wait():
    rnd = Round.build(["a"], NOW)
    a = failed_for_retry(rnd, NOW + seconds(3))
    rnd.start(rnd.next_due(NOW + seconds(3)))
    rnd.succeed(a, NOW + seconds(3))
    assert a.status is DONE and a.attempts == 2 and a.next_attempt_at is None
    assert [attempt.outcome for attempt in a.history] == ["transient", "ok"]
    assert a.history[0].error == UNAVAILABLE and a.last_error == UNAVAILABLE


def test_a_quota_wait_counts_no_attempt():
    rnd = Round.build(["a", "b"], NOW)
    a = take(rnd)
    rnd.record_quota_wait(a, NOW, QUOTA, NOW + seconds(61))
    assert a.status is PENDING and a.attempts == 0 and a.next_attempt_at == NOW + seconds(61)
    assert a.last_error is None  # the spreadsheet did nothing wrong
    assert [attempt.outcome for attempt in a.history] == ["quota"]
    assert rnd.next_due(NOW).target == "b" and rnd.next_retry_at() == NOW + seconds(61)


def test_skipping_and_giving_up_finish_the_task_for_this_round():
    rnd = Round.build(["muted", "guarded", "dead"], NOW)
    muted = rnd.next_due(NOW)
    rnd.skip(muted, NOW, "muted")
    guarded = take(rnd)
    rnd.record_failure(guarded, NOW, UNAVAILABLE, 3)
    rnd.give_up_for_round(guarded)
    dead = take(rnd)
    rnd.record_failure(dead, NOW, UNAVAILABLE, 5)
    rnd.fail(dead)
    assert (muted.status, guarded.status, dead.status) == (DONE, DONE, FAILED)
    assert muted.history[-1].outcome == "skipped_muted" and muted.attempts == 0
    assert rnd.is_complete() and rnd.next_due(NOW) is None and rnd.next_retry_at() is None


def test_tasks_left_processing_by_a_killed_run_are_reclaimed_then_poisoned():
    rnd = Round.build(["a"], NOW)
    task = rnd.next_due(NOW)
    for interruption in range(1, POISON_INTERRUPTIONS):
        rnd.start(task)  # the only read in flight when the run was killed
        assert rnd.reclaim_abandoned(NOW) == ([task], [])
        assert task.status == PENDING and task.interruptions == interruption and task.quarantined
        assert rnd.next_due(NOW) is None and rnd.next_quarantined() is task
    rnd.start(task)
    reclaimed, poisoned = rnd.reclaim_abandoned(NOW)
    assert (reclaimed, poisoned) == ([], [task]) and task.status == FAILED
    assert task.last_error.error_class == POISON and "3 times" in task.last_error.message
    assert rnd.counts()[FAILED] == 1 and rnd.is_complete()


@pytest.mark.parametrize(("overdue", "answered", "counted"), [
    (False, True, 0),  # killed before its answer was due: not its doing
    (True, True, 1),  # out longer than its answers take: it hangs, or its answer killed the run
    (False, False, 1),  # never answered: nothing says when its answer is due
])
def test_a_task_killed_alone_counts_only_when_overdue_or_its_spreadsheet_never_answered(
        overdue, answered, counted):
    rnd = Round.build(["a"], NOW)
    task = take(rnd)
    if overdue:
        rnd.mark_overdue(task)
    rnd = stored_and_loaded(rnd)  # the mark is saved with the task: the next run reads it
    (reclaimed,), poisoned = rnd.reclaim_abandoned(NOW, answered=lambda target: answered)
    assert reclaimed.interruptions == counted and poisoned == []
    assert reclaimed.quarantined and not reclaimed.overdue  # the mark ends with the lease


def test_tasks_killed_in_flight_together_are_not_blamed_but_quarantined_behind_the_due_work():
    rnd = Round.build(["a", "b", "c", "d"], NOW)
    take(rnd), take(rnd)  # two reads in flight when the run was killed
    rnd = stored_and_loaded(rnd)  # the next run
    reclaimed, poisoned = rnd.reclaim_abandoned(NOW)
    assert ({task.target for task in reclaimed}, poisoned) == ({"a", "b"}, [])
    tasks = {task.target: task for task in rnd.tasks.values()}
    assert all(tasks[t].interruptions == 0 and tasks[t].quarantined for t in "ab")
    assert [take(rnd).target, take(rnd).target] == ["c", "d"]  # the fresh ones first
    assert rnd.next_due(NOW) is None
    first = rnd.next_quarantined()
    assert first.target == "a"
    rnd.start(first)
    rnd.succeed(first, NOW)  # read alone, and the run lived: no longer a suspect
    assert not first.quarantined and rnd.next_quarantined().target == "b"


def test_suspects_are_read_longest_suspected_first_and_keep_that_order_across_runs():
    rnd = Round.build(["a", "b", "c"], NOW)
    take(rnd), take(rnd)  # a and b in flight together when the run was killed
    rnd = stored_and_loaded(rnd)
    rnd.reclaim_abandoned(NOW)
    a = rnd.next_quarantined()
    assert a.target == "a"
    rnd.start(a)  # read alone, and the run was killed again
    rnd = stored_and_loaded(rnd)
    rnd.reclaim_abandoned(NOW + seconds(60))
    order = []
    while (suspect := rnd.next_quarantined()) is not None:
        order.append((suspect.target, suspect.interruptions))
        rnd.start(suspect)
        rnd.succeed(suspect, NOW)
    assert order == [("b", 0), ("a", 1)]  # a, just suspected again, waits behind b


def test_a_reclaimed_retry_waits_its_turn_alone_after_the_due_work():
    rnd = Round.build(["a", "b"], NOW)
    failed_for_retry(rnd, NOW + seconds(3))
    rnd.start(rnd.next_due(NOW + seconds(3)))  # the run died during the retry's request
    rnd = stored_and_loaded(rnd)  # the next run
    (a,), _ = rnd.reclaim_abandoned(NOW)
    assert a.next_attempt_at is None and a.quarantined
    assert rnd.next_due(NOW + seconds(3)).target == "b"
    assert rnd.next_quarantined() is a


def test_a_task_given_back_at_the_end_of_a_run_is_offered_again_as_it_was():
    rnd = Round.build(["a", "b"], NOW)
    a = take(rnd)
    rnd.release(a)  # still in flight when the budget ended: no interruption, no quarantine
    assert (a.status, a.interruptions, a.quarantined) == (PENDING, 0, False)
    assert rnd.next_due(NOW) is a
    retry = failed_for_retry(rnd, NOW + seconds(3))
    rnd.start(retry)
    rnd.release(retry)
    assert rnd.next_retry_at() == NOW + seconds(3)


def test_nothing_is_reclaimed_from_a_round_no_run_died_in():
    rnd = Round.build(["a", "b"], NOW)
    rnd.succeed(take(rnd), NOW)
    assert rnd.reclaim_abandoned(NOW) == ([], [])


def test_history_is_bounded():
    rnd = Round.build(["a"], NOW)
    task = take(rnd)
    for n in range(25):
        rnd.record_failure(task, NOW + seconds(n), UNAVAILABLE, n + 1)
    assert len(task.history) == HISTORY_LIMIT
    assert task.history[-1].at == NOW + seconds(24) and task.history[0].at == NOW + seconds(15)


def test_dropping_removed_spreadsheets_and_requeueing():
    rnd = Round.build(["a", "b", "c"], NOW)
    for _ in range(3):
        task = take(rnd)
        rnd.record_failure(task, NOW, UNAVAILABLE, 5)
        rnd.fail(task)
    assert [t.target for t in rnd.drop_targets({"b"})] == ["b"]
    assert rnd.counts() == {PENDING: 0, PROCESSING: 0, DONE: 0, FAILED: 2}
    assert rnd.requeue_now("c") and not rnd.requeue_now("b")
    assert rnd.next_due(NOW).target == "c"
    assert rnd.is_complete() is False


def test_requeueing_is_a_fresh_start_even_behind_the_cursor():
    rnd = Round.build(["a", "b", "c"], NOW)
    a = rnd.next_due(NOW)
    for _ in range(2):  # two runs killed while reading it alone
        rnd.start(a)
        rnd.reclaim_abandoned(NOW)
    rnd.start(a)
    rnd.record_failure(a, NOW, UNAVAILABLE, 5)
    rnd.fail(a)
    rnd.succeed(take(rnd), NOW)  # the cursor is past "a" now
    assert rnd.requeue_now("a")
    assert (a.status, a.attempts, a.interruptions, a.next_attempt_at) == (PENDING, 0, 0, None)
    assert rnd.next_due(NOW) is a


def test_requeueing_a_waiting_retry_makes_it_due_now():
    rnd = Round.build(["a"], NOW)
    a = failed_for_retry(rnd, NOW + seconds(81))
    rnd.requeue_now("a")
    assert rnd.next_due(NOW) is a and rnd.next_retry_at() is None


def test_dropping_a_task_waiting_for_a_retry_forgets_its_wait():
    rnd = Round.build(["a", "b"], NOW)
    failed_for_retry(rnd, NOW + seconds(3))
    rnd.drop_targets({"a"})
    assert rnd.next_retry_at() is None and rnd.next_due(NOW).target == "b"


def test_counts_follow_every_change_without_a_recount():
    rnd = Round.build(["a", "b", "c", "d"], NOW)
    a = take(rnd)
    assert rnd.counts() == {PENDING: 3, PROCESSING: 1, DONE: 0, FAILED: 0} and rnd.finished() == 0
    rnd.succeed(a, NOW)
    b = take(rnd)
    rnd.record_quota_wait(b, NOW, QUOTA, NOW + seconds(60))
    assert rnd.counts() == {PENDING: 3, PROCESSING: 0, DONE: 1, FAILED: 0}
    rnd.skip(rnd.next_due(NOW), NOW, "breaker_open")
    d = take(rnd)
    rnd.record_failure(d, NOW, UNAVAILABLE, 5)
    rnd.fail(d)
    assert rnd.counts() == {PENDING: 1, PROCESSING: 0, DONE: 2, FAILED: 1} and rnd.finished() == 3
    assert not rnd.is_complete()


def test_a_round_continues_while_unfinished_and_until_its_interval_has_passed():
    interval = timedelta(minutes=5)
    rnd = Round.build(["a"], NOW)
    assert rnd.continues(NOW + timedelta(hours=3), interval)  # unfinished: whatever the time
    rnd.succeed(take(rnd), NOW)
    # The next round may start a little early: the next cron tick's run may get there a moment sooner.
    assert tick_slack(interval) == seconds(30) and tick_slack(timedelta(seconds=30)) == seconds(3)
    assert tick_slack(timedelta(hours=1)) == seconds(30)
    assert rnd.continues(NOW + interval - seconds(30.001), interval)
    assert not rnd.continues(NOW + interval - seconds(30), interval)
    assert not rnd.continues(NOW + interval + seconds(1), interval)


def test_the_oldest_pending_task():
    rnd = Round.build(["a", "b"], NOW)
    assert rnd.oldest_pending().target == "a"
    rnd.succeed(take(rnd), NOW)
    assert rnd.oldest_pending().target == "b"
    rnd.succeed(take(rnd), NOW)
    assert rnd.oldest_pending() is None


def test_only_what_changed_since_the_last_save_is_pending():
    rnd = Round.build(["a", "b", "c"], NOW)
    info, changed, removed = rnd.pending_changes()
    # A new round is its own document: its fresh tasks are implied by its targets.
    assert info == rnd.info and info.targets == ("a", "b", "c") and changed == {} and removed == set()
    rnd.mark_saved()
    assert rnd.pending_changes() == (None, {}, set())
    a = rnd.next_due(NOW)
    assert rnd.pending_changes() == (None, {}, set())  # offering a task changes nothing
    rnd.start(a)
    rnd.drop_targets({"c"})
    rnd.mark_behind_reported()
    info, changed, removed = rnd.pending_changes()
    assert info == RoundInfo(rnd.id, NOW, targets=("a", "b", None), behind_reported=True)
    assert set(changed) == {a.id} and removed == {f"{rnd.id}-000003"}



def test_a_new_round_makes_a_task_only_when_it_is_asked_for():
    # A run's start-up at 20,000 spreadsheets made every fresh task, and its first save looked at each.
    targets = [f"s{n:05d}" for n in range(20_000)]
    rnd = Round.build(targets, NOW)
    assert len(rnd) == 20_000 and not rnd.is_complete() and rnd.counts()[PENDING] == 20_000
    assert set(rnd.targets()) == set(targets) and rnd.reclaim_abandoned(NOW) == ([], [])
    assert dict(rnd.tasks.read_items()) == {}
    first = take(rnd)
    rnd.mark_all_changed()  # as a new round's first save asks: the task taken, no fresh one
    assert [id for id, _ in rnd.tasks.read_items()] == [first.id] and first.target == "s00000"
    assert set(rnd.pending_changes()[1]) == {first.id}
    rnd.drop_targets({"s00007"})
    assert len(rnd) == 19_999 and [id for id, _ in rnd.tasks.read_items()] == [first.id]
    assert [t.target for t in rnd.tasks.values()][:3] == ["s00000", "s00001", "s00002"]

# -- random lives of a round, against a plain scan ---------------------------------------------------

TARGETS = [f"s{n:02d}" for n in range(8)]


class RoundMachine(RuleBasedStateMachine):
    @initialize(count=st.integers(min_value=1, max_value=len(TARGETS)))
    def build(self, count):
        self.now = NOW
        self.rnd = Round.build(TARGETS[:count], NOW)

    @rule(fate=st.sampled_from(["ok", "skip", "retry", "quota", "dead", "give_up", "killed", "released"]),
          delay=st.integers(min_value=0, max_value=90))
    def work(self, fate, delay):
        rnd, now = self.rnd, self.now
        task = rnd.next_due(now) or rnd.next_quarantined()
        if task is None:
            return
        if fate == "skip":
            rnd.skip(task, now, "muted")
            return
        rnd.start(task)
        if fate == "released":  # still in flight when the run's budget ended
            rnd.release(task)
        elif fate == "ok":
            rnd.succeed(task, now)
        elif fate == "quota":
            rnd.record_quota_wait(task, now, QUOTA, now + seconds(delay))
        elif fate != "killed":  # a killed run leaves the task processing (with any others in flight)
            rnd.record_failure(task, now, UNAVAILABLE, task.attempts + 1)
            {"retry": lambda: rnd.retry_at(task, now + seconds(delay)), "dead": lambda: rnd.fail(task),
             "give_up": lambda: rnd.give_up_for_round(task)}[fate]()

    @rule(step=st.integers(min_value=1, max_value=60))
    def time_passes(self, step):
        self.now += seconds(step)

    @rule()
    def next_run_reclaims(self):
        self.rnd.reclaim_abandoned(self.now)

    @rule(sheet=st.sampled_from(TARGETS))
    def admin_requeues(self, sheet):
        self.rnd.requeue_now(sheet)

    @rule(sheet=st.sampled_from(TARGETS))
    def config_drops(self, sheet):
        self.rnd.drop_targets({sheet})

    @invariant()
    def counts_match_the_tasks(self):
        by_status = Counter(task.status for task in self.rnd.tasks.values())
        assert self.rnd.counts() == {status: by_status[status] for status in TaskStatus}
        assert self.rnd.finished() == by_status[DONE] + by_status[FAILED]

    @invariant()
    def next_due_is_what_a_scan_would_pick(self):
        pending = [task for task in self.rnd.tasks.values() if task.status is PENDING]
        waits = sorted((task.next_attempt_at, task.id) for task in pending if task.next_attempt_at)
        due = [task_id for at, task_id in waits if at <= self.now]
        fresh = sorted(task.id for task in pending if not task.next_attempt_at and not task.quarantined)
        expected = due[0] if due else (fresh[0] if fresh else None)
        found = self.rnd.next_due(self.now)
        assert (found.id if found else None) == expected
        assert self.rnd.next_retry_at() == (waits[0][0] if waits else None)

    @invariant()
    def next_quarantined_is_a_quarantined_task_while_there_is_one(self):
        quarantined = {task.id for task in self.rnd.tasks.values()
                       if task.status is PENDING and task.quarantined and not task.next_attempt_at}
        found = self.rnd.next_quarantined()
        assert (found.id if found else None) in (quarantined or {None})


TestRoundLives = RoundMachine.TestCase
TestRoundLives.settings = settings(max_examples=80, stateful_step_count=40, deadline=None)
