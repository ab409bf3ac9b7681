"""Per-spreadsheet breaker transitions and the whole-API breaker, over an explicit ``now``."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from monitor.core.errors import ErrorClass
from monitor.engine.breaker import (
    ApiDegraded,
    ApiHealth,
    ApiRecovered,
    BreakerClosed,
    BreakerOpened,
    BreakerState,
    BreakerStatus,
    allow,
    record_failure,
    record_success,
)
from monitor.engine.retry import decide

T0 = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)
COOLDOWN = 900.0
MAX_COOLDOWN = 3000.0


def _fail(state, now, **kw):
    return record_failure(state, now, 3, COOLDOWN, MAX_COOLDOWN, **kw)


def _opened_at(now):
    state = BreakerState()
    for _ in range(3):
        state, events = _fail(state, now)
    return state, events


def test_three_consecutive_failures_open_the_breaker_with_one_event():
    state = BreakerState()
    state, events = _fail(state, T0)
    state, more = _fail(state, T0)
    assert state.state is BreakerStatus.CLOSED and events == more == []
    state, events = _fail(state, T0)
    assert state.state is BreakerStatus.OPEN
    assert events == [BreakerOpened(T0, 3, COOLDOWN, T0 + timedelta(seconds=COOLDOWN))]


def test_a_success_resets_the_failure_count():
    state, _ = _fail(BreakerState(), T0)
    state, _ = _fail(state, T0)
    state, events = record_success(state, T0)
    assert state.consecutive_failures == 0 and events == []
    state, _ = _fail(state, T0)
    assert state.state is BreakerStatus.CLOSED


def test_open_breaker_refuses_until_the_cooldown_then_lets_exactly_one_probe_through():
    state, _ = _opened_at(T0)
    just_before = T0 + timedelta(seconds=COOLDOWN) - timedelta(microseconds=1)
    at = T0 + timedelta(seconds=COOLDOWN)
    allowed, unchanged = allow(state, just_before)
    assert not allowed and unchanged == state
    allowed, probing = allow(state, at)
    assert allowed and probing.state is BreakerStatus.HALF_OPEN
    allowed_again, _ = allow(probing, at + timedelta(seconds=1))
    assert not allowed_again  # one probe at a time


def test_just_after_the_cooldown_the_probe_is_allowed_too():
    state, _ = _opened_at(T0)
    allowed, probing = allow(state, T0 + timedelta(seconds=COOLDOWN + 1))
    assert allowed and probing.state is BreakerStatus.HALF_OPEN


def test_a_successful_probe_closes_the_breaker_and_reports_the_downtime():
    state, _ = _opened_at(T0)
    probe_time = T0 + timedelta(seconds=COOLDOWN)
    _, probing = allow(state, probe_time)
    state, events = record_success(probing, probe_time + timedelta(seconds=2))
    assert state == BreakerState()
    assert events == [BreakerClosed(probe_time + timedelta(seconds=2), T0, COOLDOWN + 2)]
    assert allow(state, probe_time)[0]


def test_a_failed_probe_reopens_with_a_doubled_cooldown_capped_at_the_maximum():
    state, _ = _opened_at(T0)
    now = T0
    cooldowns = []
    for _ in range(4):
        now = state.next_probe_at()
        allowed, state = allow(state, now)
        assert allowed
        state, events = _fail(state, now)
        assert events == []  # the same outage: no new alert at every cooldown
        assert state.state is BreakerStatus.OPEN
        cooldowns.append(state.cooldown_seconds)
    assert cooldowns == [1800, 3000, 3000, 3000]
    assert state.reopen_count == 4 and state.first_opened_at == T0
    # Just before the (capped) cooldown the spreadsheet is still skipped.
    assert not allow(state, now + timedelta(seconds=2999))[0]
    assert allow(state, now + timedelta(seconds=3000))[0]


def test_reopening_after_a_close_starts_again_from_the_base_cooldown():
    state, _ = _opened_at(T0)
    _, state = allow(state, state.next_probe_at())
    state, _ = _fail(state, T0 + timedelta(seconds=COOLDOWN))
    assert state.cooldown_seconds == 2 * COOLDOWN
    _, state = allow(state, state.next_probe_at())
    state, _ = record_success(state, state.probe_started_at)
    later = T0 + timedelta(hours=5)
    for _ in range(3):
        state, events = _fail(state, later)
    assert state.cooldown_seconds == COOLDOWN and isinstance(events[0], BreakerOpened)


def test_a_probe_lost_to_a_crash_does_not_wedge_the_breaker_half_open():
    state, _ = _opened_at(T0)
    probe_time = T0 + timedelta(seconds=COOLDOWN)
    _, probing = allow(state, probe_time)
    assert not allow(probing, probe_time + timedelta(seconds=COOLDOWN - 1))[0]
    assert allow(probing, probe_time + timedelta(seconds=COOLDOWN))[0]


@pytest.mark.parametrize("error_class", [ErrorClass.QUOTA, ErrorClass.PERMANENT, ErrorClass.LOADING])
def test_quota_permanent_and_loading_errors_are_refused_by_the_breaker(error_class):
    with pytest.raises(ValueError, match="must not reach the breaker"):
        _fail(BreakerState(), T0, error_class=error_class)


def test_quota_errors_do_not_trip_the_breaker():
    # The runner's rule: only failures whose decision counts_for_breaker reach record_failure.
    state = BreakerState()
    for error_class in [ErrorClass.QUOTA] * 10 + [ErrorClass.TRANSIENT] * 2:
        decision = decide(error_class, 0, T0, random.Random(0))
        if decision.counts_for_breaker:
            state, _ = _fail(state, T0, error_class=error_class)
    assert state.state is BreakerStatus.CLOSED and state.consecutive_failures == 2


def test_cooldowns_may_be_given_as_timedeltas():
    state = BreakerState()
    for _ in range(3):
        state, events = record_failure(
            state, T0, 3, timedelta(minutes=15), max_cooldown=timedelta(hours=4)
        )
    assert state.cooldown_seconds == 900.0
    assert json.loads(json.dumps(events[0].to_dict())) == {
        "opened_at": "2026-01-05T03:00:00.000Z",
        "consecutive_failures": 3,
        "cooldown_seconds": 900.0,
        "probe_at": "2026-01-05T03:15:00.000Z",
    }


def test_breaker_state_survives_a_round_trip_through_json():
    state, _ = _opened_at(T0)
    _, state = allow(state, state.next_probe_at())
    stored = json.dumps(state.to_dict())
    assert '"2026-01-05T03:00:00.000Z"' in stored  # as every stored time (monitor.timefmt)
    assert BreakerState.from_dict(json.loads(stored)) == state
    assert BreakerState.from_dict({}) == BreakerState()


def test_naive_times_are_refused():
    with pytest.raises(ValueError, match="aware"):
        allow(BreakerState(), datetime(2026, 1, 5))


def test_api_is_degraded_after_failures_on_enough_different_spreadsheets():
    health = ApiHealth(threshold=3)
    assert not health.record("a", False, T0)
    assert not health.record("a", False, T0)  # the same sheet's retry counts once
    assert not health.record("b", False, T0)
    assert health.record("c", False, T0)
    assert health.take_events() == [ApiDegraded(T0, ("a", "b", "c"))]
    assert health.take_events() == []


def test_a_success_breaks_the_failure_streak():
    health = ApiHealth(threshold=3)
    health.record("a", False)
    health.record("b", False)
    health.record("c", True)
    assert not health.record("d", False)
    assert not health.degraded


def test_next_run_starts_with_a_single_probe_that_fails_quietly_or_recovers():
    health = ApiHealth(threshold=8)
    for sheet in "abcdefgh":
        health.record(sheet, False, T0)
    health.take_events()
    stored = json.loads(json.dumps(health.to_dict()))

    failing_run = ApiHealth.from_dict(stored, threshold=8)
    assert failing_run.probe_required
    assert failing_run.record("z", False, T0 + timedelta(minutes=5))  # stop after one probe
    assert failing_run.take_events() == []  # same outage: no second "degraded" alert

    next_run = ApiHealth.from_dict(failing_run.to_dict(), threshold=8)
    assert not next_run.record("z", True, T0 + timedelta(minutes=10))
    assert next_run.take_events() == [ApiRecovered(T0 + timedelta(minutes=10), T0)]
    assert not next_run.probe_required and next_run.to_dict()["degraded"] is False
