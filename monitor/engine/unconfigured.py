"""Spreadsheets no longer in the config: forgotten whole by the next run, and said once.

An admin removing a spreadsheet from the config means "stop watching it". What the state kept of it
(its health, breaker, dead-letter entry, mute, incident, metric history, Drive's trash mark, its place
in the round and in `dlq retry`'s list) would otherwise live on in every view and reminder. Each run
forgets it at its start (in a turn, beside other runners), before anything counts it; one that
leaves with something open (failing, warning, dead-lettered, paused or muted) is told as no longer
monitored, so the last thing people heard of it is not "failing".
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import datetime

from monitor.core.logs import log_event
from monitor.engine.events import Event, NoLongerMonitored
from monitor.engine.fleet import standing
from monitor.engine.health import OK, UNKNOWN
from monitor.engine.runner_state import RetryFirst, RunnerState

_QUIET = frozenset({OK, UNKNOWN})  # left with nothing open: nobody needs telling


def forget_unconfigured(state: RunnerState, configured: Collection[str], now: datetime, run_id: str,
                        emit: Callable[[Event], None]) -> list[str]:
    """Forget every spreadsheet the state holds that ``configured`` no longer lists; returns their ids."""
    # Ids, not documents: a metric history is read when first used (monitor.core.tracking), and only
    # those of the spreadsheets forgotten are read here, by ``pop``.
    gone = sorted((state.health.ids() | state.breakers.ids() | state.dlq.ids() | state.mutes.ids()
                   | state.history.ids() | state.incidents.ids() | _round_targets(state)) - set(configured))
    for sid in gone:
        told = _told_if_open(state, sid, now, run_id)
        if told is not None:
            emit(told)
        for documents in (state.health, state.breakers, state.dlq, state.mutes, state.history,
                          state.incidents):
            documents.pop(sid, None)
    _forget_elsewhere(state, set(gone))
    if gone:
        log_event("sheets_forgotten", reason="removed_from_config", count=len(gone))
    return gone


def _told_if_open(state: RunnerState, sid: str, now: datetime, run_id: str) -> NoLongerMonitored | None:
    mute = state.mutes.get(sid)
    shown = standing(state.health.get(sid), mute if mute is not None and mute.in_force(now) else None)
    entry = state.dlq.get(sid)
    if shown in _QUIET and entry is None and sid not in state.open_breakers():
        return None
    name = (entry.name if entry else "") or (mute.name if mute else "")
    return NoLongerMonitored(at=now, run_id=run_id, spreadsheet_id=sid, name=name, was=str(shown))


def _round_targets(state: RunnerState) -> set[str]:
    rnd = state.round
    return set(rnd.targets()) if rnd is not None else set()


def _forget_elsewhere(state: RunnerState, gone: set[str]) -> None:
    """Its task in the round, its place in `dlq retry`'s list, and Drive's trash mark."""
    if not gone:
        return
    rnd = state.round
    if rnd is not None and gone & _round_targets(state):
        rnd.drop_targets(gone)
    first = state.retry_first.spreadsheet_ids
    if gone & set(first):
        state.retry_first = RetryFirst(tuple(sid for sid in first if sid not in gone))
    trashed = state.feed.trashed
    if gone & trashed.keys():
        state.feed = replace(state.feed, trashed={sid: at for sid, at in trashed.items() if sid not in gone})
