"""The fake Bot API's ``getUpdates``, with long polling as the Bot API server does it
(telegram-bot-api's ``Client::process_get_updates_query`` and ``do_get_updates``; docs/sandbox.md,
"Updates"):

- ``offset`` (default 0), ``limit`` (default 100, clamped to 1..100) and ``timeout`` (default 0,
  clamped to 0..50 seconds) are read as TDLib reads numbers, never refused;
- with no update ready and a timeout, the request waits until one is queued or the timeout passes;
- a second getUpdates that is going to wait ends the one already waiting, which is answered
  409 "Conflict: terminated by other getUpdates request; make sure that only one bot instance is
  running" (setWebhook ends it with "Conflict: terminated by setWebhook request"); while a webhook
  is set every getUpdates is 409 "Conflict: can't use getUpdates method while webhook is active;
  use deleteWebhook to delete the webhook first". The server answers such conflicts at most once
  every 3 seconds: one more within 3 s of the last is held back 3 s first;
- a client repeating the same offset within 3 seconds waits at least 3 seconds, and within half a
  second gets at most one update (the server's guard against polling loops).

Waits follow the fake's clock (see ``FakeTelegram.wait_for``): with a ManualClock a test moves the
clock instead of sleeping, and a capped real wait keeps a forgotten poll from hanging it.
"""

from __future__ import annotations

from .http import Response
from .telegram_errors import TelegramError, ok
from .telegram_model import Bot
from .telegram_params import integer_arg
from .telegram_updates import Mailbox, Poll, Receiving, Update, allowed_updates, mailbox

LONG_POLL_MAX_TIMEOUT = 50
CONFLICT_SPACING = 3.0
TERMINATED_BY_POLL = ("Conflict: terminated by other getUpdates request; make sure that only one "
                      "bot instance is running")
TERMINATED_BY_WEBHOOK = "Conflict: terminated by setWebhook request"
WEBHOOK_ACTIVE = ("Conflict: can't use getUpdates method while webhook is active; use "
                  "deleteWebhook to delete the webhook first")


def get_updates(fake: Receiving, bot: Bot, params: dict[str, str]) -> Response:
    box = mailbox(fake, bot)
    now = fake.clock.time()
    if box.webhook is not None:
        _answer_conflict(fake, box, WEBHOOK_ACTIVE, conflict_answer_time(box, now))
    offset = integer_arg(params, "offset", 0)
    limit = integer_arg(params, "limit", 100, 1, 100)
    timeout = integer_arg(params, "timeout", 0, 0, LONG_POLL_MAX_TIMEOUT)
    allowed = allowed_updates(params.get("allowed_updates"))
    if allowed is not None:
        box.allowed = allowed
    if offset == box.previous_offset and timeout < 3 and now < box.previous_start + 3.0:
        timeout = 3
    if offset == box.previous_offset and now < box.previous_start + 0.5:
        limit = 1
    box.previous_offset, box.previous_start = offset, now

    updates = box.queue.take(offset, limit, now)
    if updates or timeout == 0:
        return ok(_delivered(updates))
    if box.waiting is not None:
        end_poll(fake, box, TERMINATED_BY_POLL)
    poll = box.waiting = Poll(offset, limit)
    box.held += 1
    try:
        found = fake.wait_for(lambda: _ready(fake, box, poll), now + timeout)
    finally:
        box.held -= 1
        if box.waiting is poll:
            box.waiting = None
    if poll.conflict is not None:
        raise TelegramError(409, poll.conflict)
    return ok(_delivered(found or []))


def end_poll(fake: Receiving, box: Mailbox, reason: str) -> None:
    """End the long poll waiting in ``box`` with a 409 (another getUpdates, or setWebhook)."""
    poll = box.waiting
    if poll is None:
        return
    box.waiting = None
    poll.conflict = reason
    poll.answer_at = conflict_answer_time(box, fake.clock.time())
    fake.changed.notify_all()


def conflict_answer_time(box: Mailbox, now: float) -> float:
    """When a 409 may be answered: now, unless one was answered less than 3 s ago."""
    if now >= box.next_conflict_at:
        box.next_conflict_at = now + CONFLICT_SPACING
        return now
    return now + CONFLICT_SPACING


def _answer_conflict(fake: Receiving, box: Mailbox, description: str, answer_at: float) -> None:
    if answer_at > fake.clock.time():
        box.held += 1
        try:
            fake.wait_for(lambda: True if fake.clock.time() >= answer_at else None, answer_at)
        finally:
            box.held -= 1
    raise TelegramError(409, description)


def _ready(fake: Receiving, box: Mailbox, poll: Poll) -> list[Update] | bool | None:
    if poll.conflict is not None:
        return True if fake.clock.time() >= poll.answer_at else None
    return box.queue.take(poll.offset, poll.limit, fake.clock.time()) or None


def _delivered(updates: list[Update]) -> list[dict]:
    for update in updates:
        update.deliveries += 1
        if update.state == "pending":
            update.state = "delivered"
    return [update.api_json() for update in updates]
