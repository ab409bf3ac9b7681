"""Error class -> what happens next to the task: retry when, count it or not, or dead-letter.

Pure: :func:`decide` takes the time and a random source and returns a :class:`Decision`; it never
sleeps. Retries are scheduled in the task (``next_attempt_at``) so the run works on other due
spreadsheets meanwhile (SPEC 5, 6).

Attempts mean *tries*: "up to 5 attempts" is the first try plus at most 4 retries. After the n-th
counted failed try the task waits ``3 * 3**(n-1)`` seconds (3, 9, 27, 81, then 243 if a policy
allows a 6th try), plus upward jitter. Jitter only ever lengthens a wait, so a retry is never
earlier than the nominal schedule; it spreads the retries of sheets that failed together.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from tenacity import RetryCallState
from tenacity.wait import wait_base, wait_exponential

from monitor.core.errors import ErrorClass

QUOTA_WINDOW_SECONDS = 60.0  # Google's read quotas are per rolling minute


class RandomSource(Protocol):
    def random(self) -> float: ...


@dataclass(frozen=True)
class RetryPolicy:
    """How one error class is retried.

    ``max_attempts`` is the number of counted tries before dead-lettering (None: never).
    ``counts_attempt`` says whether the failure uses one of them; ``counts_for_breaker`` whether
    it is the spreadsheet's fault as far as its circuit breaker (and the API-wide one) is concerned.
    """

    max_attempts: int | None
    counts_attempt: bool = True
    counts_for_breaker: bool = False
    base_delay: float = 3.0
    multiplier: float = 3.0
    max_delay: float = 3600.0
    jitter: float = 0.2  # fraction: the wait is in [delay, delay * (1 + jitter))

    def nominal_delay(self, failed_attempts: int) -> float:
        """Wait before the next try after ``failed_attempts`` (>= 1) counted failures, no jitter."""
        if failed_attempts < 1:
            raise ValueError(f"failed_attempts must be >= 1, got {failed_attempts}")
        return _backoff_seconds(self._wait(), failed_attempts)

    def delay(self, failed_attempts: int, rng: RandomSource) -> float:
        """The nominal delay lengthened by up to ``jitter`` of itself, drawn from ``rng``."""
        nominal = self.nominal_delay(failed_attempts)
        return nominal * (1.0 + self.jitter * rng.random()) if self.jitter else nominal

    def _wait(self) -> wait_base:
        return wait_exponential(
            multiplier=self.base_delay, exp_base=self.multiplier, max=self.max_delay
        )


def _backoff_seconds(wait: wait_base, attempt_number: int) -> float:
    """Ask a tenacity wait object for its delay after ``attempt_number`` tries, without retrying.

    tenacity's wait objects only read ``attempt_number`` from the call state, so a bare state is
    enough; this keeps the curve tenacity's while the decision stays a pure function.
    """
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = attempt_number
    return float(wait(state))


# Reasons for each choice are in SPEC 6; LOADING's breaker flag is ours: a sheet still
# computing answers fine and fast, so it is no evidence that the sheet or the API is failing.
DEFAULT_POLICIES: Mapping[ErrorClass, RetryPolicy] = {
    ErrorClass.TRANSIENT: RetryPolicy(max_attempts=5, counts_for_breaker=True),
    ErrorClass.UNCERTAIN: RetryPolicy(max_attempts=3, counts_for_breaker=True),
    ErrorClass.LOADING: RetryPolicy(max_attempts=5),
    ErrorClass.PERMANENT: RetryPolicy(max_attempts=1),
    ErrorClass.QUOTA: RetryPolicy(max_attempts=None, counts_attempt=False, jitter=0.0),
}


@dataclass(frozen=True)
class Decision:
    """What to do with a task whose try just failed.

    ``attempts`` is the value to store in the task (already incremented when the failure counts);
    do not increment it yourself. ``next_attempt_at``/``delay_seconds`` are set iff ``retry``.
    ``dead_letter`` is the opposite of ``retry``.
    """

    retry: bool
    next_attempt_at: datetime | None
    counts_attempt: bool
    counts_for_breaker: bool
    dead_letter: bool
    attempts: int
    delay_seconds: float | None = None


def decide(
    error_class: ErrorClass,
    attempts_so_far: int,
    now: datetime,
    rng: RandomSource | None = None,
    *,
    quota_wait_seconds: float | None = None,
    policies: Mapping[ErrorClass, RetryPolicy] = DEFAULT_POLICIES,
) -> Decision:
    """Decide the fate of a task whose try just failed with ``error_class``.

    ``attempts_so_far`` is the task's stored ``attempts`` *before* this failure (0 on the first
    failure). ``now`` must be aware. ``rng`` supplies jitter (pass ``random.Random(seed)`` in tests;
    None uses a fresh unseeded one). For QUOTA, ``quota_wait_seconds`` is how long until the
    credential's window refills, from the quota pacer; without it a whole window is assumed.
    """
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime (stored times are UTC)")
    if attempts_so_far < 0:
        raise ValueError(f"attempts_so_far must be >= 0, got {attempts_so_far}")
    policy = policies[ErrorClass(error_class)]
    attempts = attempts_so_far + 1 if policy.counts_attempt else attempts_so_far

    if policy.max_attempts is not None and attempts >= policy.max_attempts:
        return Decision(
            retry=False,
            next_attempt_at=None,
            counts_attempt=policy.counts_attempt,
            counts_for_breaker=policy.counts_for_breaker,
            dead_letter=True,
            attempts=attempts,
        )

    if policy.counts_attempt:
        delay = policy.delay(attempts, rng or random.Random())
    else:
        # Quota: the wait is the pacer's, not a backoff; never less than zero.
        wait = QUOTA_WINDOW_SECONDS if quota_wait_seconds is None else quota_wait_seconds
        delay = max(0.0, float(wait))
    return Decision(
        retry=True,
        next_attempt_at=now + timedelta(seconds=delay),
        counts_attempt=policy.counts_attempt,
        counts_for_breaker=policy.counts_for_breaker,
        dead_letter=False,
        attempts=attempts,
        delay_seconds=delay,
    )


def schedule(
    error_class: ErrorClass, policies: Mapping[ErrorClass, RetryPolicy] = DEFAULT_POLICIES
) -> list[float]:
    """The nominal waits a task meets before it is dead-lettered (for docs and check-config)."""
    policy = policies[ErrorClass(error_class)]
    if policy.max_attempts is None or not policy.counts_attempt:
        return []
    return [policy.nominal_delay(n) for n in range(1, policy.max_attempts)]
