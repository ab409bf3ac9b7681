"""Delivery held to the run's deadline: waits and requests that would pass it are refused, retryably,
so the messages stay in the outbox and the run ends on time (over real HTTP, on a ManualClock)."""

from __future__ import annotations

import httpx
import pytest
from telegram_fixtures import GROUP, PRIVATE, TOKEN

from monitor.notify.deadline import DeadlineClock, WithinDeadline, request_timeout
from monitor.notify.documents import Outbox
from monitor.notify.messages import Message
from monitor.notify.outbox import deliver, enqueue
from monitor.notify.telegram import RetryableDeliveryError, TelegramSender


def held(server, http, clock, seconds_left: float, chat_id=PRIVATE) -> WithinDeadline:
    """A Telegram sender as a run wires it, ``seconds_left`` before the run's deadline."""
    deadline = clock.monotonic() + seconds_left
    sender = TelegramSender(
        TOKEN, chat_id, server.base_url, client=http, clock=DeadlineClock(clock, deadline)
    )
    return WithinDeadline(sender, http, clock, deadline)


def backlog(clock, count: int) -> Outbox:
    return enqueue(Outbox(), [Message(f"k{n}", f"m{n}") for n in range(count)], clock.now()).outbox


def test_a_wait_that_would_end_past_the_deadline_is_refused_and_one_that_ends_on_it_is_waited(clock):
    deadline = clock.monotonic() + 4
    held_clock = DeadlineClock(clock, deadline)
    with pytest.raises(RetryableDeliveryError, match="would pass the run's deadline") as caught:
        held_clock.sleep(4.001)
    assert caught.value.retry_after == pytest.approx(4.001) and clock.monotonic() == deadline - 4
    held_clock.sleep(4)
    assert clock.monotonic() == deadline
    assert (held_clock.now(), held_clock.time(), held_clock.monotonic()) == (
        clock.now(),
        clock.time(),
        deadline,
    )


def test_two_long_rate_limits_near_the_deadline_keep_the_message_instead_of_holding_the_run(
    server, http, clock, fake
):
    fake.force_rate_limit(count=2, retry_after=20, chat_id=PRIVATE)  # the sender would sleep 20 s, twice
    started = clock.monotonic()
    outbox, [result] = deliver(backlog(clock, 3), held(server, http, clock, 4), clock.now())
    assert result.outcome == "kept" and "deadline" in result.error.description
    assert clock.monotonic() == started and len(outbox.pending) == 3
    assert fake.stats()["sends"] == {"429": 1}


def test_pacing_stops_at_the_deadline_and_the_rest_waits_for_the_next_run(server, http, clock, fake):
    started = clock.monotonic()
    outbox, results = deliver(backlog(clock, 10), held(server, http, clock, 3.5), clock.now())
    assert [r.outcome for r in results] == ["sent"] * 4 + ["kept"]  # one a second: at 0, 1, 2 and 3 s
    assert clock.monotonic() - started == pytest.approx(3) and len(outbox.pending) == 6


def test_once_the_budget_is_spent_no_request_is_made(server, http, clock, fake):
    sender = held(server, http, clock, 5)
    clock.advance(5)  # exactly at the deadline
    with pytest.raises(RetryableDeliveryError, match="budget is spent"):
        sender.send("late")
    assert fake.stats()["sends"] == {}


@pytest.mark.parametrize(("seconds_left", "timeout"), [(0.3, 1.0), (2.5, 2.5), (30, 10.0)])
def test_each_request_gets_only_the_time_left_within_sane_bounds(server, clock, fake, seconds_left, timeout):
    with httpx.Client(timeout=30) as http:
        held(server, http, clock, seconds_left).send("hi")
        assert http.timeout == httpx.Timeout(timeout)
    assert request_timeout(seconds_left) == timeout


def test_a_migration_is_still_noticed_through_the_deadline_sender(server, http, clock, fake):
    new_id = fake.migrate_chat(GROUP)
    outbox, _ = deliver(backlog(clock, 1), held(server, http, clock, 10, chat_id=GROUP), clock.now())
    assert outbox.migrations == {str(GROUP): str(new_id)}
