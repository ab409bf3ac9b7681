from datetime import UTC, datetime, timedelta

import pytest

from monitor.engine.dlq import DeadLetters
from monitor.state.events import Event

NOW = datetime(2026, 3, 2, 3, 47, tzinfo=UTC)
ERROR = {"error_class": "permanent", "http_status": 403, "message": "The caller does not have permission"}


def test_a_repeated_failure_updates_its_entry_instead_of_adding_one():
    dlq = DeadLetters()
    assert dlq.record("s1", "Store 1", {"id": "t1", "history": []}, ERROR, NOW) is True
    later = NOW + timedelta(minutes=5)
    assert dlq.record("s1", "Store 1", {"id": "t2", "history": []}, ERROR, later) is False
    entry = dlq.get("s1")
    assert len(dlq) == 1 and entry.occurrences == 2
    assert entry.first_failed_at == "2026-03-02T03:47:00.000Z"
    assert entry.last_failed_at == "2026-03-02T03:52:00.000Z"
    assert entry.task["id"] == "t2"


def test_resolving_removes_the_entry_and_survives_a_round_trip():
    dlq = DeadLetters()
    dlq.record("s1", "Store 1", {"id": "t1"}, ERROR, NOW)
    dlq.record("s2", "Store 2", {"id": "t2"}, ERROR, NOW)
    again = DeadLetters.from_dict(dlq.to_dict())
    assert again.resolve("s1").name == "Store 1"
    assert "s1" not in again and "s2" in again
    assert again.resolve("s1") is None


def test_the_registry_is_capped_by_age_then_count():
    dlq = DeadLetters()
    dlq.record("old", "Old", {}, ERROR, NOW - timedelta(days=31))
    for n in range(5):
        dlq.record(f"s{n}", f"S{n}", {}, ERROR, NOW + timedelta(seconds=n))
    dropped = dlq.prune(NOW + timedelta(seconds=10), max_entries=3)
    assert dropped == ["old", "s0", "s1"]
    assert sorted(dlq.entries) == ["s2", "s3", "s4"]


def test_events_refuse_unknown_kinds():
    assert Event.make("recovered", NOW, "run-1", spreadsheet_id="s1").at == "2026-03-02T03:47:00.000Z"
    with pytest.raises(ValueError):
        Event.make("sheet_was_sad", NOW, "run-1")
