"""The whole-API breaker: many different spreadsheets failing in a row means Google, not them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monitor.engine.api_health import ApiHealth, ApiState, Degraded, Recovered
from monitor.state.schema import API

T0 = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)


def test_api_is_degraded_after_failures_on_enough_different_spreadsheets():
    health = ApiHealth(threshold=3)
    assert health.record_failure("a", T0) == (False, None)
    assert health.record_failure("a", T0) == (False, None)  # the same sheet's retry counts once
    assert health.record_failure("b", T0) == (False, None)
    stop, degraded = health.record_failure("c", T0)
    assert stop and degraded == Degraded(T0, ("a", "b", "c"))
    assert health.state == ApiState(degraded=True, degraded_since=T0)
    # Further failures keep stopping, without a second transition.
    assert health.record_failure("d", T0 + timedelta(seconds=1)) == (True, None)


def test_an_answer_breaks_the_failure_streak():
    health = ApiHealth(threshold=3)
    health.record_failure("a", T0)
    health.record_failure("b", T0)
    assert health.record_answer(T0) is None  # not degraded: nothing recovered
    assert health.record_failure("c", T0) == (False, None)
    assert health.record_failure("d", T0) == (False, None)
    assert not health.state.degraded


def test_next_run_starts_with_a_single_probe_that_fails_quietly_or_recovers():
    health = ApiHealth(threshold=8)
    for sheet in "abcdefgh":
        stop, _ = health.record_failure(sheet, T0)
    assert stop
    stored = API.encode(health.state)  # what the run leaves in the state

    failing_run = ApiHealth(API.decode(stored), threshold=8)
    assert failing_run.probe_required
    # Stop after one probe, and no second "degraded" alert: it is the same outage.
    assert failing_run.record_failure("z", T0 + timedelta(minutes=5)) == (True, None)
    assert failing_run.state.degraded_since == T0

    next_run = ApiHealth(API.decode(API.encode(failing_run.state)), threshold=8)
    assert next_run.record_answer(T0 + timedelta(minutes=10)) == Recovered(T0 + timedelta(minutes=10), T0)
    assert not next_run.probe_required and next_run.state == ApiState()
    assert next_run.record_answer(T0 + timedelta(minutes=11)) is None  # told once


def test_a_fresh_state_is_not_degraded():
    assert not ApiHealth().probe_required and ApiHealth().state == ApiState()
