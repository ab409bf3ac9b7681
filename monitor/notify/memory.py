"""The alert memory: whom people were told is bad and when, what this round changed, Google reads.

Every function takes an :class:`AlertMemory` and returns the memory as it is after, a new value when
something changed and the same one when nothing did (the caller stores it; see
``monitor.notify.documents``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.engine.dlq import DeadLetter
from monitor.engine.events import Event, sheet_of
from monitor.engine.health import BAD, SheetHealth
from monitor.engine.heartbeat import Heartbeat
from monitor.notify.alerts import rendered
from monitor.notify.documents import Alerted, AlertMemory, RoundChanges
from monitor.notify.render import FAILING, RECOVERED


def note_alerts(
    memory: AlertMemory, events: Iterable[Event], now: datetime, muted: Iterable[str] = ()
) -> tuple[AlertMemory, int]:
    """Remember which spreadsheets people were told are bad (and forget recovered ones); also
    returns how many alert-worthy events there were (for the round summary "on_change")."""
    alerted = dict(memory.alerted)
    worthy = 0
    for event, item in rendered(events, frozenset(muted)):
        worthy += 1
        sid = sheet_of(event)
        if sid is None:
            continue
        if item.category == FAILING:
            alerted[sid] = Alerted(now, event.name or sid)
        elif item.category == RECOVERED:
            alerted.pop(sid, None)
    return _with_alerted(memory, alerted), worthy


def count_round_changes(memory: AlertMemory, round_id: str, changes: int) -> AlertMemory:
    """Add alert-worthy events to the current round's count (a new round starts from zero)."""
    tracked = memory.round
    if tracked is None or tracked.id != round_id:
        tracked = RoundChanges(round_id)
    elif not changes:
        return memory
    return replace(memory, round=replace(tracked, changes=tracked.changes + changes))


def due_reminders(
    health: Mapping[str, SheetHealth],
    memory: AlertMemory,
    now: datetime,
    every: timedelta,
    muted: Iterable[str] = (),
) -> list[str]:
    """Spreadsheets still failing whose last alert or reminder is at least ``every`` old, sorted.

    A failing spreadsheet people were never told about (alert memory lost, or unmuted while bad)
    counts from when it went bad, so it is reminded at most once per ``every`` too.
    """
    muted = frozenset(muted)
    due = []
    for sid, record in health.items():
        if sid in muted or record.health not in BAD:
            continue
        told = memory.alerted.get(sid)
        last = told.at if told else record.down_since or record.since
        if last is None or now - last >= every:
            due.append(sid)
    return sorted(due)


def mark_reminded(
    memory: AlertMemory, spreadsheet_ids: Iterable[str], names: Mapping[str, str], now: datetime
) -> AlertMemory:
    alerted = dict(memory.alerted)
    for sid in spreadsheet_ids:
        told = alerted.get(sid)
        alerted[sid] = Alerted(now, names.get(sid) or (told.name if told else "") or sid)
    return _with_alerted(memory, alerted)


def forget_healthy(memory: AlertMemory, health: Mapping[str, SheetHealth]) -> AlertMemory:
    """Forget spreadsheets no longer bad or no longer configured (keeps the memory bounded)."""
    alerted = {
        sid: told for sid, told in memory.alerted.items() if sid in health and health[sid].health in BAD
    }
    return _with_alerted(memory, alerted)


def count_reads(memory: AlertMemory, heartbeat: Heartbeat | None) -> AlertMemory:
    """Add the latest finished run's Google reads to the digest's tally, once per run."""
    if heartbeat is None or heartbeat.finished_at is None or memory.counted_run == heartbeat.run_id:
        return memory
    reads = sum(heartbeat.stats.reads_by_credential.values()) if heartbeat.stats else 0
    return replace(memory, reads_since_digest=memory.reads_since_digest + reads, counted_run=heartbeat.run_id)


def reads_known(memory: AlertMemory) -> int | None:
    """Google reads since the last digest; None before any run was counted (then nobody knows)."""
    return memory.reads_since_digest if memory.counted_run is not None else None


def known_names(
    memory: AlertMemory, dead_letters: Mapping[str, DeadLetter], names: Mapping[str, str] | None
) -> dict[str, str]:
    """Spreadsheet names for reminders and digests: the config's, else the dead-letter queue's,
    else the name people were last told (a spreadsheet removed from the config keeps its name)."""
    known = {sid: told.name for sid, told in memory.alerted.items() if told.name}
    known.update({sid: entry.name for sid, entry in dead_letters.items()})
    known.update(names or {})
    return known


def _with_alerted(memory: AlertMemory, alerted: dict[str, Alerted]) -> AlertMemory:
    return memory if alerted == memory.alerted else replace(memory, alerted=alerted)
