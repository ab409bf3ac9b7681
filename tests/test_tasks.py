from datetime import UTC, datetime, timedelta

from monitor.engine.tasks import DONE, FAILED, PENDING, POISON_INTERRUPTIONS, PROCESSING, Round

NOW = datetime(2026, 3, 2, 3, 47, tzinfo=UTC)


def test_a_round_has_one_pending_task_per_target_in_order():
    rnd = Round.build(["a", "b", "c"], NOW)
    assert [t.target for t in rnd.tasks.values()] == ["a", "b", "c"]
    assert rnd.counts() == {PENDING: 3, PROCESSING: 0, DONE: 0, FAILED: 0}
    assert all(t.created_at == "2026-03-02T03:47:00.000Z" for t in rnd.tasks.values())


def test_next_due_walks_the_round_and_offers_an_untaken_task_again():
    rnd = Round.build(["a", "b"], NOW)
    first = rnd.next_due(NOW)
    assert first.target == "a"
    assert rnd.next_due(NOW) is first  # not taken yet: offered again, never lost
    first.status = DONE
    assert rnd.next_due(NOW).target == "b"


def test_a_retry_waits_until_its_time_while_other_tasks_go_first():
    rnd = Round.build(["a", "b"], NOW)
    a = rnd.next_due(NOW)
    rnd.schedule_retry(a, NOW + timedelta(seconds=3))
    assert rnd.next_due(NOW).target == "b"
    rnd.tasks[rnd.next_due(NOW).id].status = DONE
    assert rnd.next_due(NOW + timedelta(seconds=2.999)) is None
    assert rnd.next_retry_at() == NOW + timedelta(seconds=3)
    assert rnd.next_due(NOW + timedelta(seconds=3)) is a


def test_round_survives_a_round_trip_through_its_dict():
    rnd = Round.build(["a", "b"], NOW)
    a = rnd.next_due(NOW)
    a.attempts = 1
    a.record_attempt(NOW, "transient", {"status": 503})
    rnd.schedule_retry(a, NOW + timedelta(seconds=9))
    again = Round.from_dict(rnd.to_dict())
    assert again.to_dict() == rnd.to_dict()
    assert again.next_due(NOW + timedelta(seconds=10)).target == "a"


def test_tasks_left_processing_by_a_killed_run_are_reclaimed_then_poisoned():
    rnd = Round.build(["a"], NOW)
    task = rnd.next_due(NOW)
    for interruption in range(1, POISON_INTERRUPTIONS):
        task.status = PROCESSING
        reclaimed, poisoned = rnd.reclaim_abandoned()
        assert (reclaimed, poisoned) == ([task], [])
        assert task.status == PENDING and task.interruptions == interruption
    task.status = PROCESSING
    reclaimed, poisoned = rnd.reclaim_abandoned()
    assert poisoned == [task] and task.status == FAILED
    assert task.last_error["error_class"] == "poison"


def test_history_is_bounded():
    rnd = Round.build(["a"], NOW)
    task = rnd.next_due(NOW)
    for n in range(25):
        task.record_attempt(NOW + timedelta(seconds=n), "transient")
    assert len(task.history) == 10
    assert task.history[-1]["at"] == "2026-03-02T03:47:24.000Z"


def test_dropping_removed_spreadsheets_and_requeueing():
    rnd = Round.build(["a", "b", "c"], NOW)
    for task in rnd.tasks.values():
        task.status = FAILED
    assert [t.target for t in rnd.drop_targets({"b"})] == ["b"]
    assert rnd.requeue_now("c") and not rnd.requeue_now("b")
    assert rnd.next_due(NOW).target == "c"
    assert rnd.is_complete() is False


def test_a_due_retry_offered_but_not_taken_is_offered_again():
    rnd = Round.build(["a", "b"], NOW)
    a = rnd.next_due(NOW)
    rnd.schedule_retry(a, NOW + timedelta(seconds=3))
    rnd.next_due(NOW).status = DONE
    later = NOW + timedelta(seconds=3)
    assert rnd.next_due(later) is a
    assert rnd.next_due(later) is a  # not taken (no quota yet): still due, never lost
    assert rnd.next_retry_at() == later
    a.status = DONE
    assert rnd.next_due(later) is None and rnd.next_retry_at() is None
