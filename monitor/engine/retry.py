"""Error class -> what happens next to the task: retry when, count it or not, or dead-letter.

Pure: :func:`decide` takes the time and a random source and returns a :class:`Decision`; it never
sleeps. Retries are scheduled in the task (``next_attempt_at``) so the run works on other due
spreadsheets meanwhile, and a retry may well happen in a later run: that is why the backoff is
computed here rather than by an in-process retry loop.

Attempts mean *tries*: "up to 5 attempts" is the first try plus at most 4 retries. After the n-th
counted failed try the task waits ``3 * 3**(n-1)`` seconds (3, 9, 27, 81), plus upward jitter.
Jitter only ever lengthens a wait, so a retry is never earlier than the nominal schedule; it spreads
the retries of sheets that failed together. One try waits nothing: a plain read that showed a code
only Google's details tell apart is read again with them at once (``TaskResults.failed``).

Quota refusals (429) are not decided here: they are not the spreadsheet's fault, count no attempt,
and wait for the quota pacer (see ``TaskResults.failed``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from monitor.core.errors import ErrorClass


class RandomSource(Protocol):
    def random(self) -> float: ...


@dataclass(frozen=True)
class RetryPolicy:
    """How one error class is retried.

    ``max_attempts`` is the number of counted tries before dead-lettering. ``counts_for_breaker``
    says whether the failure is the spreadsheet's fault as far as its circuit breaker (and the
    API-wide one) is concerned.
    """

    max_attempts: int
    counts_for_breaker: bool = False
    base_delay: float = 3.0
    multiplier: float = 3.0
    max_delay: float = 3600.0
    jitter: float = 0.2  # fraction: the wait is in [delay, delay * (1 + jitter))

    def nominal_delay(self, failed_attempts: int) -> float:
        """Wait before the next try after ``failed_attempts`` (>= 1) counted failures, no jitter."""
        if failed_attempts < 1:
            raise ValueError(f"failed_attempts must be >= 1, got {failed_attempts}")
        return min(self.base_delay * self.multiplier ** (failed_attempts - 1), self.max_delay)

    def delay(self, failed_attempts: int, rng: RandomSource) -> float:
        """The nominal delay lengthened by up to ``jitter`` of itself, drawn from ``rng``."""
        nominal = self.nominal_delay(failed_attempts)
        return nominal * (1.0 + self.jitter * rng.random()) if self.jitter else nominal


# Transient failures (503, timeouts) usually pass within minutes: five tries over two minutes.
# Uncertain ones (500, unknown answers) may be a bug on either side: three tries, then a human looks.
# A permanent one (400/403/404) cannot be helped by retrying. A sheet still computing (LOADING)
# answers fine and fast, so it is no evidence that the sheet or the API is failing: no breaker.
DEFAULT_POLICIES: Mapping[ErrorClass, RetryPolicy] = {
    ErrorClass.TRANSIENT: RetryPolicy(max_attempts=5, counts_for_breaker=True),
    ErrorClass.UNCERTAIN: RetryPolicy(max_attempts=3, counts_for_breaker=True),
    ErrorClass.LOADING: RetryPolicy(max_attempts=5),
    ErrorClass.PERMANENT: RetryPolicy(max_attempts=1),
}


def is_last_try(error_class: ErrorClass, attempts_so_far: int,
                policies: Mapping[ErrorClass, RetryPolicy] = DEFAULT_POLICIES) -> bool:
    """Would a failure of ``error_class`` on the next try (after ``attempts_so_far`` counted ones)
    be the last one allowed? A read that may still be computing is judged as it is then."""
    return attempts_so_far + 1 >= policies[ErrorClass(error_class)].max_attempts


@dataclass(frozen=True)
class Decision:
    """What to do with a task whose try just failed.

    ``attempts`` is the value to store in the task (already counting this failure). ``next_attempt_at``
    and ``delay_seconds`` are set iff ``retry``; otherwise the task is dead-lettered.
    """

    retry: bool
    attempts: int
    counts_for_breaker: bool
    next_attempt_at: datetime | None = None
    delay_seconds: float | None = None


def decide(
    error_class: ErrorClass,
    attempts_so_far: int,
    now: datetime,
    rng: RandomSource | None = None,
    *,
    policies: Mapping[ErrorClass, RetryPolicy] = DEFAULT_POLICIES,
) -> Decision:
    """Decide the fate of a task whose try just failed with ``error_class`` (any class but quota).

    ``attempts_so_far`` is the task's stored ``attempts`` *before* this failure (0 on the first
    failure). ``now`` must be aware. ``rng`` supplies jitter (pass ``random.Random(seed)`` in tests;
    None uses a fresh unseeded one).
    """
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime (stored times are UTC)")
    if attempts_so_far < 0:
        raise ValueError(f"attempts_so_far must be >= 0, got {attempts_so_far}")
    policy = policies.get(ErrorClass(error_class))
    if policy is None:
        raise ValueError(f"{ErrorClass(error_class).value} errors are not retried by attempts "
                         "(a quota refusal waits for the quota pacer)")
    attempts = attempts_so_far + 1
    if attempts >= policy.max_attempts:
        return Decision(retry=False, attempts=attempts, counts_for_breaker=policy.counts_for_breaker)
    delay = policy.delay(attempts, rng or random.Random())
    return Decision(
        retry=True,
        attempts=attempts,
        counts_for_breaker=policy.counts_for_breaker,
        next_attempt_at=now + timedelta(seconds=delay),
        delay_seconds=delay,
    )


def schedule(
    error_class: ErrorClass, policies: Mapping[ErrorClass, RetryPolicy] = DEFAULT_POLICIES
) -> list[float]:
    """The nominal waits a task meets before it is dead-lettered (for docs and check-config)."""
    policy = policies[ErrorClass(error_class)]
    return [policy.nominal_delay(n) for n in range(1, policy.max_attempts)]
