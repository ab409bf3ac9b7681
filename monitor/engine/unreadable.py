"""A spreadsheet that has not been read for too long: failing, whatever its breaker and retries say.

A spreadsheet that hangs or answers 503 forever opens its breaker after a few failures and is then only
probed now and then; its retries never reach the dead-letter queue, so nothing else would ever call it
failing. Its health record keeps the streak (:class:`Unreadable`: since when, how many failed reads, the
last failure in a few words). Once the streak is older than ``[breaker] unreadable_after`` its verdict
becomes ``error`` with one finding saying so, which every list (failing now, reminders, the digest)
already shows; the next read that works ends it like any bad episode. Pure: values in, values out.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from http import HTTPStatus

from monitor.core.errors import ErrorInfo
from monitor.core.wording import counted
from monitor.engine.health import (
    DEFAULT_KEEP,
    ERROR,
    Change,
    Finding,
    SheetHealth,
    Unreadable,
    record_verdict,
)

# The finding's check and kind: no configured check failed, the read itself did. A check named after its
# kind is shown by its message alone (monitor.notify.messages).
CHECK = KIND = "unreadable"
FAILURE_TEXT_LIMIT = 60  # a failure without an HTTP status is told by its message, this long at most


def read_failure_text(error: ErrorInfo) -> str:
    """'503 Service Unavailable' for an HTTP failure, else the message (a timeout says what it waited)."""
    if error.http_status is not None:
        try:
            return f"{error.http_status} {HTTPStatus(error.http_status).phrase}"
        except ValueError:
            return str(error.http_status)
    message = " ".join(error.message.split())
    if len(message) > FAILURE_TEXT_LIMIT:
        message = message[: FAILURE_TEXT_LIMIT - 1] + "…"
    return message or "no answer"


def streak_start_text(since: datetime, now: datetime) -> str:
    """'03:12 UTC' the same UTC day, '2026-01-05 03:12 UTC' before it (stored times are UTC)."""
    if since.date() == now.date():
        return f"{since:%H:%M} UTC"
    return f"{since:%Y-%m-%d %H:%M} UTC"


def finding(streak: Unreadable, now: datetime) -> Finding:
    tries = counted(streak.tries, "try", "tries")
    message = f"cannot be read since {streak_start_text(streak.since, now)} ({streak.failure}, {tries})"
    return Finding(CHECK, KIND, "fail", message)


def record_failed_read(record: SheetHealth | None, error: ErrorInfo, now: datetime) -> SheetHealth:
    """One more failed read in the spreadsheet's streak (the first one starts it)."""
    record = record or SheetHealth()
    streak = record.unreadable
    if streak is None:
        streak = Unreadable(since=now, tries=1, failure=read_failure_text(error))
    else:
        streak = replace(streak, tries=streak.tries + 1, failure=read_failure_text(error))
    return replace(record, unreadable=streak)


def judge_streak(record: SheetHealth, now: datetime, after: timedelta, keep: timedelta = DEFAULT_KEEP
                 ) -> tuple[SheetHealth, Change | None]:
    """The record judged by its streak: ``error`` with a finding once the streak has lasted ``after``
    (at exactly ``after`` too), the record as it was before that. The change is the one to tell, None
    when the verdict stays (a later failed read only refreshes the finding's words)."""
    streak = record.unreadable
    if streak is None or now - streak.since < after:
        return record, None
    findings = (finding(streak, now),)
    if record.health == ERROR and record.findings == findings:
        return record, None
    judged, change = record_verdict(record, ERROR, now, findings, keep)
    if change is not None and change.previous != ERROR and record.down_since is None:
        # The episode began with the streak's first failed read, not when it had lasted long enough:
        # "failing for" and "recovered after" count from there.
        judged = replace(judged, down_since=streak.since)
    return judged, change


def read_again(record: SheetHealth) -> SheetHealth:
    """A read worked: the streak is over (its verdict is replaced by the read's own)."""
    return replace(record, unreadable=None) if record.unreadable is not None else record
