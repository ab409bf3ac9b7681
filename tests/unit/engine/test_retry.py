"""Error classification (the table in monitor.core.errors) and the retry decisions built on it."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from monitor.core.errors import ErrorClass, ErrorInfo, MonitorError, SheetReadError, classify
from monitor.engine.retry import DEFAULT_POLICIES, RetryPolicy, decide, schedule

NOW = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)


def _classify(status=None, google=None, html=False, timeout=False, connection=False):
    return classify(status, google, html, timeout, connection)


@pytest.mark.parametrize(
    ("status", "google", "expected"),
    [
        (429, "RESOURCE_EXHAUSTED", ErrorClass.QUOTA),
        (429, None, ErrorClass.QUOTA),
        (503, "UNAVAILABLE", ErrorClass.TRANSIENT),
        (502, None, ErrorClass.TRANSIENT),
        (504, "DEADLINE_EXCEEDED", ErrorClass.TRANSIENT),
        (500, "INTERNAL", ErrorClass.UNCERTAIN),
        (418, None, ErrorClass.UNCERTAIN),
        (400, "INVALID_ARGUMENT", ErrorClass.PERMANENT),
        (403, "PERMISSION_DENIED", ErrorClass.PERMANENT),
        (404, "NOT_FOUND", ErrorClass.PERMANENT),
    ],
)
def test_http_statuses_map_to_their_error_class(status, google, expected):
    assert _classify(status, google) is expected


def test_resource_exhausted_is_quota_whatever_the_status():
    assert _classify(403, "RESOURCE_EXHAUSTED") is ErrorClass.QUOTA
    assert _classify(None, "resource_exhausted") is ErrorClass.QUOTA


@pytest.mark.parametrize(
    "flags",
    [{"html": True}, {"timeout": True}, {"connection": True}],
)
def test_html_pages_timeouts_and_connection_errors_are_transient(flags):
    # gspread reports -1 as the code of an HTML error page.
    assert _classify(-1, None, **flags) is ErrorClass.TRANSIENT
    assert _classify(None, None, **flags) is ErrorClass.TRANSIENT


def test_an_html_page_with_a_500_status_is_transient_not_uncertain():
    assert _classify(500, None, html=True) is ErrorClass.TRANSIENT


def test_unknown_failures_are_uncertain_and_body_status_is_used_without_http_status():
    assert _classify() is ErrorClass.UNCERTAIN
    assert _classify(None, "SOMETHING_NEW") is ErrorClass.UNCERTAIN
    assert _classify(None, "NOT_FOUND") is ErrorClass.PERMANENT
    assert _classify(None, "UNAVAILABLE") is ErrorClass.TRANSIENT


def test_sheet_read_error_carries_its_class_and_what_is_stored_about_it():
    error = SheetReadError(
        ErrorClass.PERMANENT, 400, "INVALID_ARGUMENT", "Unable to parse range: Stok!A1",
        range="Stok!A1",
    )
    assert isinstance(error, MonitorError)
    assert error.permanent and not error.retryable
    assert "Stok!A1" in str(error) and "400" in str(error)
    assert error.info() == ErrorInfo("permanent", "Unable to parse range: Stok!A1", 400, "INVALID_ARGUMENT",
                                     "Stok!A1")
    assert SheetReadError(ErrorClass.TRANSIENT, 503, None, "x").retryable


def test_an_error_class_given_as_its_stored_name_is_the_same_class():
    assert SheetReadError("transient", 503, None, "x").error_class is ErrorClass.TRANSIENT
    with pytest.raises(ValueError):
        SheetReadError("poison", None, None, "poison is what the DLQ records, never a read's error")


def test_transient_delays_grow_by_three_from_three_seconds():
    policy = DEFAULT_POLICIES[ErrorClass.TRANSIENT]
    assert [policy.nominal_delay(n) for n in range(1, 6)] == [3, 9, 27, 81, 243]
    assert schedule(ErrorClass.TRANSIENT) == [3, 9, 27, 81]
    assert schedule(ErrorClass.UNCERTAIN) == [3, 9]
    assert schedule(ErrorClass.PERMANENT) == []


def test_jitter_only_lengthens_the_wait_and_stays_within_its_fraction():
    rng = random.Random(7)
    policy = DEFAULT_POLICIES[ErrorClass.TRANSIENT]
    for failed in range(1, 5):
        nominal = policy.nominal_delay(failed)
        delays = [policy.delay(failed, rng) for _ in range(200)]
        assert all(nominal <= d < nominal * (1 + policy.jitter) for d in delays)
        assert max(delays) - min(delays) > nominal * policy.jitter / 2  # it does vary


def test_decisions_are_deterministic_for_a_seeded_rng():
    first = decide(ErrorClass.TRANSIENT, 1, NOW, random.Random(42))
    second = decide(ErrorClass.TRANSIENT, 1, NOW, random.Random(42))
    assert first == second


def test_without_jitter_the_next_attempt_is_exactly_the_nominal_delay_away():
    policies = {**DEFAULT_POLICIES, ErrorClass.TRANSIENT: RetryPolicy(5, counts_for_breaker=True,
                                                                      jitter=0.0)}
    waits = []
    for before in range(4):
        decision = decide(ErrorClass.TRANSIENT, before, NOW, policies=policies)
        waits.append((decision.next_attempt_at - NOW).total_seconds())
    assert waits == [3, 9, 27, 81]


def test_transient_errors_get_five_attempts_then_the_dead_letter_queue():
    rng = random.Random(1)
    attempts = 0
    tries = 0
    while True:
        tries += 1
        decision = decide(ErrorClass.TRANSIENT, attempts, NOW, rng)
        assert decision.attempts == attempts + 1 and decision.counts_for_breaker
        attempts = decision.attempts
        if not decision.retry:
            break
        assert decision.next_attempt_at > NOW
        assert decision.next_attempt_at == NOW + timedelta(seconds=decision.delay_seconds)
    assert tries == 5 and attempts == 5
    assert decision.next_attempt_at is None and decision.delay_seconds is None


def test_uncertain_errors_get_three_attempts():
    assert decide(ErrorClass.UNCERTAIN, 1, NOW, random.Random(1)).retry
    final = decide(ErrorClass.UNCERTAIN, 2, NOW, random.Random(1))
    assert not final.retry and final.attempts == 3
    assert final.counts_for_breaker


def test_permanent_errors_go_straight_to_the_dead_letter_queue_without_tripping_the_breaker():
    decision = decide(ErrorClass.PERMANENT, 0, NOW, random.Random(1))
    assert not decision.retry and decision.next_attempt_at is None
    assert decision.attempts == 1
    assert not decision.counts_for_breaker


def test_quota_errors_are_not_decided_by_attempts():
    # A 429 waits for the quota pacer and counts no attempt (monitor.engine.task_results); asking the
    # retry policy about one is a mistake that must fail loudly rather than dead-letter a sheet.
    with pytest.raises(ValueError, match="quota pacer"):
        decide(ErrorClass.QUOTA, 0, NOW, random.Random(1))
    with pytest.raises(KeyError):
        schedule(ErrorClass.QUOTA)


def test_loading_cells_are_retried_like_transient_errors_but_do_not_trip_the_breaker():
    decision = decide(ErrorClass.LOADING, 0, NOW, random.Random(3))
    assert decision.retry and 3 <= decision.delay_seconds < 3 * 1.2
    assert not decision.counts_for_breaker
    assert not decide(ErrorClass.LOADING, 4, NOW).retry
    assert schedule(ErrorClass.LOADING) == schedule(ErrorClass.TRANSIENT)


def test_a_negative_attempt_count_is_refused():
    with pytest.raises(ValueError, match="attempts_so_far"):
        decide(ErrorClass.TRANSIENT, -1, NOW)
    with pytest.raises(ValueError, match="failed_attempts"):
        DEFAULT_POLICIES[ErrorClass.TRANSIENT].nominal_delay(0)


def test_long_backoffs_are_capped():
    policy = RetryPolicy(max_attempts=20, max_delay=3600.0, jitter=0.0)
    assert policy.nominal_delay(10) == 3600.0 and policy.delay(10, random.Random(0)) == 3600.0


def test_naive_times_are_refused():
    with pytest.raises(ValueError, match="aware"):
        decide(ErrorClass.TRANSIENT, 0, datetime(2026, 1, 5, 3, 0))


@pytest.mark.parametrize("reason", ["userRateLimitExceeded", "rateLimitExceeded", "dailyLimitExceeded"])
def test_drives_quota_reasons_are_quota_even_on_a_403(reason):
    assert classify(403, None, False, False, False, reason) is ErrorClass.QUOTA
    assert classify(403, None, False, False, False, "insufficientFilePermissions") is ErrorClass.PERMANENT
