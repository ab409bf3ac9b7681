"""Delivery held to a run's deadline: a sender and a clock that refuse to go past it.

A run must end within its budget plus a few seconds even when Telegram is slow or rate-limits us.
Refusals are retryable delivery errors, so what did not fit stays in the outbox for the next run.
"""

from __future__ import annotations

from datetime import datetime

from monitor.notify import lean_httpx  # noqa: F401  before httpx: see its doc

# isort: split

import httpx

from monitor.notify.documents import Keyboard
from monitor.notify.telegram import RetryableDeliveryError, Sender, Sent

MIN_REQUEST_SECONDS = 1.0  # less than this and even a healthy Telegram cannot answer
MAX_REQUEST_SECONDS = 10.0  # the sender's own default timeout


def request_timeout(seconds_left: float) -> float:
    """The timeout a Telegram request may have with ``seconds_left`` before the deadline."""
    return max(MIN_REQUEST_SECONDS, min(MAX_REQUEST_SECONDS, seconds_left))


class WithinDeadline:
    """The sender, held to the run's deadline: a slow Telegram answering each message just within
    the timeout would otherwise stretch a run by the send budget times the timeout (a 4 s run took
    17 s). Each request gets only the time left (``client`` is the sender's httpx client, whose
    timeout is cut before each send); once it is spent, messages stay in the outbox."""

    def __init__(self, sender: Sender, client: httpx.Client, clock: object, deadline: float) -> None:
        self._sender, self._client, self._clock, self._deadline = sender, client, clock, deadline

    @property
    def chat_id(self) -> str | None:  # the outbox compares it before and after a send to notice migrations
        return getattr(self._sender, "chat_id", None)

    def send(self, text: str, keyboard: Keyboard = ()) -> Sent:
        left = self._deadline - self._clock.monotonic()
        if left <= 0:
            raise RetryableDeliveryError("the run's budget is spent; the next run sends it")
        self._client.timeout = httpx.Timeout(request_timeout(left))
        return self._sender.send(text, keyboard)


class DeadlineClock:
    """The run's clock as the Telegram sender sees it: a wait (pacing, a 429's retry_after) that
    would end past the run's deadline is refused as a retryable delivery error, so the message stays
    in the outbox; otherwise two 429s with retry_after 20 held a 4 s run for 40 s."""

    def __init__(self, clock: object, deadline: float) -> None:
        self._clock, self._deadline = clock, deadline

    def now(self) -> datetime:
        return self._clock.now()

    def time(self) -> float:
        return self._clock.time()

    def monotonic(self) -> float:
        return self._clock.monotonic()

    def sleep(self, seconds: float) -> None:
        if self._clock.monotonic() + seconds > self._deadline:
            raise RetryableDeliveryError(
                f"a wait of {seconds:.0f} s would pass the run's deadline; the next run sends it",
                retry_after=seconds,
            )
        self._clock.sleep(seconds)
