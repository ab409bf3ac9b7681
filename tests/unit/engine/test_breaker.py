"""Per-spreadsheet breaker transitions over an explicit ``now`` (the whole-API breaker: test_api_health)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.core.errors import ErrorClass
from monitor.engine.breaker import (
    CLOSED,
    HALF_OPEN,
    OPEN,
    BreakerPolicy,
    BreakerState,
    Closed,
    Opened,
    allow,
    record_failure,
    record_success,
)
from monitor.state.schema import BREAKER

T0 = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)
COOLDOWN = 900.0
MAX_COOLDOWN = 3000.0
POLICY = BreakerPolicy(failure_threshold=3, cooldown=timedelta(seconds=COOLDOWN),
                       max_cooldown=timedelta(seconds=MAX_COOLDOWN))


def _fail(state, now, error_class=ErrorClass.TRANSIENT):
    return record_failure(state, now, POLICY, error_class)


def _opened_at(now):
    state = BreakerState()
    for _ in range(3):
        state, transitions = _fail(state, now)
    return state, transitions


def test_three_consecutive_failures_open_the_breaker_with_one_transition():
    state = BreakerState()
    state, transitions = _fail(state, T0)
    state, more = _fail(state, T0, ErrorClass.UNCERTAIN)  # a 500 counts as much as a 503
    assert state.state is CLOSED and transitions == more == []
    assert not state.is_healthy  # failures counted: this breaker must be stored
    state, transitions = _fail(state, T0)
    assert state.state is OPEN
    assert transitions == [Opened(T0, 3, COOLDOWN, T0 + timedelta(seconds=COOLDOWN))]
    assert state.first_opened_at == T0 and state.next_probe_at() == T0 + timedelta(seconds=COOLDOWN)


def test_a_success_resets_the_failure_count():
    state, _ = _fail(BreakerState(), T0)
    state, _ = _fail(state, T0)
    state, transitions = record_success(state, T0)
    assert state.consecutive_failures == 0 and state.is_healthy and transitions == []
    state, _ = _fail(state, T0)
    assert state.state is CLOSED


def test_a_success_on_a_healthy_breaker_changes_nothing():
    healthy = BreakerState()
    assert record_success(healthy, T0) == (healthy, [])
    assert record_success(healthy, T0)[0] is healthy


def test_open_breaker_refuses_until_the_cooldown_then_lets_exactly_one_probe_through():
    state, _ = _opened_at(T0)
    just_before = T0 + timedelta(seconds=COOLDOWN) - timedelta(microseconds=1)
    at = T0 + timedelta(seconds=COOLDOWN)
    allowed, unchanged = allow(state, just_before)
    assert not allowed and unchanged == state
    assert state.blocks(just_before) and not state.blocks(at)
    allowed, probing = allow(state, at)
    assert allowed and probing.state is HALF_OPEN and probing.probe_started_at == at
    allowed_again, _ = allow(probing, at + timedelta(seconds=1))
    assert not allowed_again  # one probe at a time
    assert probing.blocks(at + timedelta(seconds=1))


def test_just_after_the_cooldown_the_probe_is_allowed_too():
    state, _ = _opened_at(T0)
    allowed, probing = allow(state, T0 + timedelta(seconds=COOLDOWN + 1))
    assert allowed and probing.state is HALF_OPEN


def test_a_closed_breaker_always_allows_and_never_blocks():
    assert allow(BreakerState(), T0) == (True, BreakerState())
    assert BreakerState().next_probe_at() is None and not BreakerState().blocks(T0)


def test_a_successful_probe_closes_the_breaker_and_reports_the_downtime():
    state, _ = _opened_at(T0)
    probe_time = T0 + timedelta(seconds=COOLDOWN)
    _, probing = allow(state, probe_time)
    state, transitions = record_success(probing, probe_time + timedelta(seconds=2))
    assert state == BreakerState() and state.is_healthy
    assert transitions == [Closed(probe_time + timedelta(seconds=2), T0, COOLDOWN + 2)]
    assert allow(state, probe_time)[0]


def test_a_failed_probe_reopens_with_a_doubled_cooldown_capped_at_the_maximum():
    state, _ = _opened_at(T0)
    now = T0
    cooldowns = []
    for _ in range(4):
        now = state.next_probe_at()
        allowed, state = allow(state, now)
        assert allowed
        state, transitions = _fail(state, now)
        assert transitions == []  # the same outage: no new alert at every cooldown
        assert state.state is OPEN and state.probe_started_at is None
        cooldowns.append(state.cooldown_seconds)
    assert cooldowns == [1800, 3000, 3000, 3000]
    assert state.reopen_count == 4 and state.first_opened_at == T0
    # Just before the (capped) cooldown the spreadsheet is still skipped.
    assert not allow(state, now + timedelta(seconds=2999))[0]
    assert allow(state, now + timedelta(seconds=3000))[0]


def test_the_downtime_of_a_long_outage_counts_from_its_first_opening():
    state, _ = _opened_at(T0)
    for _ in range(2):  # two failed probes
        _, state = allow(state, state.next_probe_at())
        state, _ = _fail(state, state.probe_started_at)
    _, state = allow(state, state.next_probe_at())
    closed_at = state.probe_started_at + timedelta(seconds=1)
    _, transitions = record_success(state, closed_at)
    assert transitions == [Closed(closed_at, T0, (closed_at - T0).total_seconds())]


def test_reopening_after_a_close_starts_again_from_the_base_cooldown():
    state, _ = _opened_at(T0)
    _, state = allow(state, state.next_probe_at())
    state, _ = _fail(state, T0 + timedelta(seconds=COOLDOWN))
    assert state.cooldown_seconds == 2 * COOLDOWN
    _, state = allow(state, state.next_probe_at())
    state, _ = record_success(state, state.probe_started_at)
    later = T0 + timedelta(hours=5)
    for _ in range(3):
        state, transitions = _fail(state, later)
    assert state.cooldown_seconds == COOLDOWN and isinstance(transitions[0], Opened)
    assert state.first_opened_at == later  # a new outage


def test_a_failure_reported_while_open_is_counted_and_changes_nothing_else():
    state, _ = _opened_at(T0)  # a request sent before it opened comes back failed
    later, transitions = _fail(state, T0 + timedelta(seconds=5))
    assert transitions == [] and later.state is OPEN
    assert later.consecutive_failures == 4 and later.next_probe_at() == state.next_probe_at()


def test_a_probe_lost_to_a_crash_does_not_wedge_the_breaker_half_open():
    state, _ = _opened_at(T0)
    probe_time = T0 + timedelta(seconds=COOLDOWN)
    _, probing = allow(state, probe_time)
    assert not allow(probing, probe_time + timedelta(seconds=COOLDOWN - 1))[0]
    assert allow(probing, probe_time + timedelta(seconds=COOLDOWN))[0]


@pytest.mark.parametrize("error_class", [ErrorClass.QUOTA, ErrorClass.PERMANENT, ErrorClass.LOADING])
def test_quota_permanent_and_loading_errors_are_refused_by_the_breaker(error_class):
    # Whatever the caller's mistake, a 429, a 404 or cells still loading never trip a breaker.
    for state in (BreakerState(), _opened_at(T0)[0]):
        with pytest.raises(ValueError, match="must not reach the breaker"):
            _fail(state, T0, error_class)


def test_a_policy_needs_at_least_one_failure_to_open():
    with pytest.raises(ValueError, match="failure_threshold"):
        BreakerPolicy(0, cooldown=timedelta(minutes=15), max_cooldown=timedelta(hours=4))
    single = BreakerPolicy(1, cooldown=timedelta(minutes=15), max_cooldown=timedelta(hours=4))
    state, transitions = record_failure(BreakerState(), T0, single, ErrorClass.TRANSIENT)
    assert state.state is OPEN and len(transitions) == 1


def test_a_base_cooldown_above_the_maximum_is_capped():
    policy = BreakerPolicy(failure_threshold=1, cooldown=timedelta(hours=8), max_cooldown=timedelta(hours=4))
    state, transitions = record_failure(BreakerState(), T0, policy, ErrorClass.TRANSIENT)
    assert state.cooldown_seconds == transitions[0].cooldown_seconds == 4 * 3600


def test_a_breaker_is_stored_with_utc_times_and_read_back_equal():
    state, _ = _opened_at(T0)
    _, state = allow(state, state.next_probe_at())
    stored = BREAKER.encode(state)
    assert '"2026-01-05T03:00:00.000Z"' in stored  # as every stored time (monitor.core.timefmt)
    assert BREAKER.decode(stored) == state
    assert BREAKER.decode("{}") == BreakerState()


@pytest.mark.parametrize("call", [
    lambda naive: allow(BreakerState(), naive),
    lambda naive: record_success(BreakerState(), naive),
    lambda naive: record_failure(BreakerState(), naive, POLICY, ErrorClass.TRANSIENT),
])
def test_naive_times_are_refused(call):
    with pytest.raises(ValueError, match="aware"):
        call(datetime(2026, 1, 5))
