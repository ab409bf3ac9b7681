"""What `dlq retry/purge`, `breakers reset`, `mute` and `unmute` change, as pure functions of the state.

Each changes the given ``State`` in place (storing new documents, as every change does) and returns a
JSON-ready report; the caller holds the run lock and saves. ``now`` comes in.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta
from typing import Any

from monitor.admin.errors import (
    AdminError,
    no_longer_configured_message,
    not_in_dlq_message,
    unknown_id_message,
)
from monitor.admin.reports import SheetLike
from monitor.core.durations import format_duration
from monitor.core.timefmt import format_utc
from monitor.engine.mutes import Mute
from monitor.engine.runner_state import RetryFirst
from monitor.state import State


def dlq_retry(
    state: State, spreadsheet_ids: Iterable[str], now: datetime, round_interval: timedelta,
    configured: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """Make dead-lettered spreadsheets due at once. The entries stay until a read succeeds; then the
    runner resolves them and people hear "recovered".

    A spreadsheet whose task is in a round the next run will continue is requeued there
    (``"due": "current_round"``). Otherwise (no round yet, or the round is finished and the next run
    starts a new one) it is put first in the next round (``"due": "next_round"``). An open breaker
    would skip it again, so it is closed (``breaker_was`` says what it was, else None). A muted
    spreadsheet is requeued too, but is not read until the mute ends: ``muted_until`` says so. One no
    longer ``configured`` (None: every one is) is refused: no round reads it any more.
    """
    ids = list(spreadsheet_ids)
    missing = [sid for sid in ids if sid not in state.dlq]
    if missing:
        raise AdminError(not_in_dlq_message(missing[0]))
    removed = [sid for sid in ids if configured is not None and sid not in configured]
    if removed:
        raise AdminError(no_longer_configured_message(removed[0], state.dlq[removed[0]].name), usage=True)
    mutes = state.active_mutes(now)
    results = []
    for sid in ids:
        due, breaker_was = read_now(state, sid, now, round_interval)
        results.append({"id": sid, "due": due, "breaker_was": breaker_was,
                        "muted_until": format_utc(mutes[sid].until) if sid in mutes else None})
    return results


def read_now(state: State, spreadsheet_id: str, now: datetime, round_interval: timedelta
             ) -> tuple[str, str | None]:
    """Make a spreadsheet due at once, as `dlq retry` and the chat's *Check again* do: requeued in
    the round the next run continues (``"current_round"``), else first in the next round
    (``"next_round"``); an open breaker, which would skip it again, is closed (what it was is the
    second value, None when it was closed)."""
    rnd = state.round
    # A finished round whose interval has passed is about to be replaced by a new one: requeueing
    # into it would only reopen an old round (and could raise a false "falling behind").
    if rnd is not None and rnd.continues(now, round_interval) and rnd.requeue_now(spreadsheet_id):
        due = "current_round"
    else:
        first = state.retry_first.spreadsheet_ids
        if spreadsheet_id not in first:
            state.retry_first = RetryFirst((*first, spreadsheet_id))
        due = "next_round"
    breaker = state.breakers.get(spreadsheet_id)
    if breaker is None or breaker.is_closed:
        return due, None
    return due, breaker_reset(state, spreadsheet_id, None)["was"]


def dlq_purge(state: State, spreadsheet_id: str | None = None) -> list[str]:
    """Forget one entry, or all with None; returns the ids removed. A purged spreadsheet stays in the
    rounds; if it fails again it gets a new entry (and a new alert), if it recovers nobody is told."""
    if spreadsheet_id is None:
        removed = list(state.dlq.keys())
        for sid in removed:
            del state.dlq[sid]
        return removed
    if state.dlq.resolve(spreadsheet_id) is None:
        raise AdminError(not_in_dlq_message(spreadsheet_id))
    return [spreadsheet_id]


def breaker_reset(state: State, spreadsheet_id: str, configured: Collection[str] | None) -> dict[str, Any]:
    """Close a breaker (its failure count goes too); the spreadsheet is read in its next turn.

    Resetting a breaker that is already closed is not an error (``was`` says "closed"); one of a
    spreadsheet not ``configured`` is (None: the caller checked).
    """
    if configured is not None and spreadsheet_id not in configured:
        known = spreadsheet_id in state.breakers
        raise AdminError(no_longer_configured_message(spreadsheet_id) if known
                         else unknown_id_message(spreadsheet_id), usage=True)
    stored = state.breakers.pop(spreadsheet_id)
    was = stored.state.value if stored else "closed"
    return {"id": spreadsheet_id, "was": was, "state": "closed"}


def mute(state: State, sheet: SheetLike, duration: timedelta, reason: str, now: datetime) -> dict[str, Any]:
    """Silence one spreadsheet until ``now + duration``: new rounds leave it out and its alerts go
    to nobody. It ends by itself; muting again replaces the earlier mute. Expired mutes are dropped."""
    if not reason.strip():
        raise AdminError("a mute needs a reason, so the next admin knows why: --reason TEXT", usage=True)
    _drop_expired(state, now)
    record = Mute(until=now + duration, reason=reason.strip(), muted_at=now, name=sheet.name)
    state.mutes[sheet.id] = record
    return {"id": sheet.id, "name": sheet.name, "until": format_utc(record.until), "reason": record.reason,
            "muted_at": format_utc(now), "for": format_duration(duration)}


def unmute(state: State, spreadsheet_id: str, now: datetime) -> dict[str, Any]:
    """End a mute now; the spreadsheet joins the next round. Not muted is not an error."""
    was = state.active_mutes(now).get(spreadsheet_id)
    state.mutes.pop(spreadsheet_id)
    _drop_expired(state, now)
    return {"id": spreadsheet_id, "was_muted": was is not None,
            "until": format_utc(was.until) if was else None}


def _drop_expired(state: State, now: datetime) -> None:
    for sid in [sid for sid, mute in state.mutes.items() if not mute.in_force(now)]:
        del state.mutes[sid]
