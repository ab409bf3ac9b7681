from datetime import UTC, datetime, timedelta

import pytest

from monitor.engine.health import ERROR, FAIL, OK, SKIPPED, UNKNOWN, SheetHealth, is_alerting, record_verdict

NOW = datetime(2026, 3, 2, 3, 47, tzinfo=UTC)


def test_the_first_healthy_check_is_a_change_nobody_needs_to_hear_about():
    record = SheetHealth()
    change = record_verdict(record, OK, NOW, [])
    assert (change.previous, change.current) == (UNKNOWN, OK)
    assert not is_alerting(change)


def test_a_failure_alerts_once_and_the_recovery_says_how_long_it_was_down():
    record = SheetHealth()
    record_verdict(record, OK, NOW, [])
    change = record_verdict(record, FAIL, NOW + timedelta(minutes=5), [{"kind": "formula_errors"}])
    assert is_alerting(change)
    assert record_verdict(record, FAIL, NOW + timedelta(minutes=10), []) is None
    assert record_verdict(record, ERROR, NOW + timedelta(minutes=15), []).current == ERROR
    recovered = record_verdict(record, OK, NOW + timedelta(minutes=65), [])
    assert recovered.down_for_seconds == 3600
    assert record.down_since is None and record.since == "2026-03-02T04:52:00.000Z"


def test_skipping_shows_beside_the_verdict_without_changing_it():
    record = SheetHealth()
    record_verdict(record, ERROR, NOW, [])
    record.skipped = "breaker_open"
    assert record.shown == SKIPPED and record.health == ERROR
    assert record_verdict(record, ERROR, NOW, []) is None
    assert record.shown == ERROR


def test_only_verdicts_are_recorded():
    with pytest.raises(ValueError):
        record_verdict(SheetHealth(), SKIPPED, NOW, [])
