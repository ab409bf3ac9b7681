"""The dead-letter registry: an entry per failure episode, resolved when read again, capped by age, count."""

from datetime import UTC, datetime, timedelta

from monitor.core.errors import ErrorInfo
from monitor.engine.dlq import HISTORY_LIMIT, DeadLetters
from monitor.engine.tasks import FAILED, Round
from monitor.state.schema import DLQ

NOW = datetime(2026, 3, 2, 3, 47, tzinfo=UTC)
DENIED = ErrorInfo("permanent", "The caller does not have permission", 403, "PERMISSION_DENIED")
GONE = ErrorInfo("permanent", "Requested entity was not found.", 404, "NOT_FOUND")


def failed_task(target: str, now: datetime, error: ErrorInfo = DENIED):
    """The task of ``target`` in a fresh round, failed once and dead-lettered as the run does it."""
    rnd = Round.build([target], now)
    task = rnd.next_due(now)
    rnd.start(task)
    rnd.record_failure(task, now, error, 1)
    rnd.fail(task)
    return rnd, task


def test_a_repeated_failure_updates_its_entry_instead_of_adding_one():
    dlq = DeadLetters()
    _, first = failed_task("s1", NOW)
    assert dlq.record("s1", "Store 1", first, DENIED, NOW) is True
    later = NOW + timedelta(minutes=5)
    _, second = failed_task("s1", later, GONE)
    assert dlq.record("s1", "Store 1", second, GONE, later) is False
    entry = dlq.get("s1")
    assert len(dlq) == 1 and entry.occurrences == 2
    assert entry.first_failed_at == NOW and entry.last_failed_at == later
    assert entry.task.id == second.id and entry.last_error == GONE
    assert [attempt.error for attempt in entry.history] == [DENIED, GONE]  # both rounds' attempts


def test_an_entry_keeps_the_task_as_it_was_dead_lettered():
    dlq = DeadLetters()
    rnd, task = failed_task("s1", NOW)
    dlq.record("s1", "Store 1", task, DENIED, NOW)
    rnd.requeue_now("s1")  # the round's task lives on (`dlq retry`)...
    assert task.attempts == 0
    entry = dlq.get("s1")
    assert entry.task.status == FAILED and entry.task.attempts == 1  # ...the entry's copy does not


def test_the_history_of_a_long_episode_is_bounded():
    dlq = DeadLetters()
    for n in range(HISTORY_LIMIT + 5):
        _, task = failed_task("s1", NOW + timedelta(minutes=5 * n))
        dlq.record("s1", "Store 1", task, DENIED, NOW + timedelta(minutes=5 * n))
    entry = dlq.get("s1")
    assert entry.occurrences == HISTORY_LIMIT + 5 and len(entry.history) == HISTORY_LIMIT
    assert entry.history[-1].at == NOW + timedelta(minutes=5 * (HISTORY_LIMIT + 4))


def test_resolving_removes_the_entry_and_an_entry_survives_storage():
    dlq = DeadLetters()
    for sid in ("s1", "s2"):
        _, task = failed_task(sid, NOW)
        dlq.record(sid, f"Store {sid}", task, DENIED, NOW)
    again = DeadLetters({sid: DLQ.decode(DLQ.encode(entry)) for sid, entry in dlq.items()})
    assert again.get("s2") == dlq.get("s2")
    assert again.resolve("s1").name == "Store s1"
    assert "s1" not in again and "s2" in again
    assert again.resolve("s1") is None


def test_every_change_is_recorded_for_the_next_save():
    dlq = DeadLetters()
    for sid in ("s1", "s2"):
        _, task = failed_task(sid, NOW)
        dlq.record(sid, "Store", task, DENIED, NOW)
    dlq.mark_saved()
    _, task = failed_task("s2", NOW)
    dlq.record("s2", "Store", task, DENIED, NOW + timedelta(minutes=5))
    dlq.resolve("s1")
    changed, removed = dlq.pending_changes()
    assert set(changed) == {"s2"} and removed == {"s1"}


def test_the_registry_is_capped_by_age_then_count():
    dlq = DeadLetters()
    _, task = failed_task("old", NOW)
    dlq.record("old", "Old", task, DENIED, NOW - timedelta(days=30, seconds=1))
    _, task = failed_task("month", NOW)
    dlq.record("month", "Month", task, DENIED, NOW + timedelta(seconds=10) - timedelta(days=30))
    for n in range(5):
        _, task = failed_task(f"s{n}", NOW)
        dlq.record(f"s{n}", f"S{n}", task, DENIED, NOW + timedelta(seconds=n))
    dropped = dlq.prune(NOW + timedelta(seconds=10), max_entries=3)
    # "month" failed exactly 30 days before: not older than the limit, so only the count drops it.
    assert dropped == ["old", "month", "s0", "s1"]
    assert sorted(dlq.keys()) == ["s2", "s3", "s4"]
    assert dlq.prune(NOW + timedelta(seconds=10), max_entries=3) == []
