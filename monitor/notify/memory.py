"""The alert memory: whom people were told is bad and when, what this round changed, Google reads.

Every function takes an :class:`AlertMemory` and returns the memory as it is after, a new value when
something changed and the same one when nothing did (the caller stores it; see
``monitor.notify.documents``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.engine.dlq import DeadLetter
from monitor.engine.events import Event, HealthChanged, ReadableAgain, sheet_of
from monitor.engine.health import BAD, OK, WARN, SheetHealth
from monitor.notify.alerts import rendered
from monitor.notify.documents import Alerted, AlertMemory, RoundChanges
from monitor.notify.render import FAILING, RECOVERED, WARNING


def announced_only(events: Sequence[Event], memory: AlertMemory) -> list[Event]:
    """The events with every "resolved" left out whose trouble people were never told of (a
    warning or failure that began and ended within a run, or while its spreadsheet was muted, or
    before the alert memory knew of warnings). A failure never told that ends in a warning is told
    as the warning it now is."""
    told = memory.alerted.keys() | memory.warned.keys()
    kept: list[Event] = []
    for event in events:
        sid = sheet_of(event)
        if sid is None or sid in told or not _resolves(event):
            kept.append(event)
        elif isinstance(event, HealthChanged) and event.current == WARN:
            kept.append(replace(event, previous=OK, down_for_seconds=None))
    return kept


def _resolves(event: Event) -> bool:
    if isinstance(event, HealthChanged):
        return event.previous != event.current and event.current not in BAD
    return isinstance(event, ReadableAgain) and event.health not in BAD


def note_alerts(
    memory: AlertMemory, events: Iterable[Event], now: datetime, muted: Iterable[str] = ()
) -> tuple[AlertMemory, int]:
    """Remember which spreadsheets people were told are bad or warning (and forget resolved ones);
    also returns how many alert-worthy events there were (for the round summary "on_change")."""
    alerted, warned = dict(memory.alerted), dict(memory.warned)
    worthy = 0
    for event, item in rendered(events, frozenset(muted)):
        worthy += 1
        sid = sheet_of(event)
        if sid is None:
            continue
        told = Alerted(now, event.name or sid)
        if item.category == FAILING:
            alerted[sid] = told
            warned.pop(sid, None)
        elif item.category in (WARNING, RECOVERED):
            alerted.pop(sid, None)
            warned.pop(sid, None)
            if item.category == WARNING or _still_warns(event):
                warned[sid] = told  # "recovered, still warns" tells the warning too
    memory = _with_alerted(memory, alerted)
    return (memory if warned == memory.warned else replace(memory, warned=warned)), worthy


def _still_warns(event: Event) -> bool:
    if isinstance(event, HealthChanged):
        return event.current == WARN
    return isinstance(event, ReadableAgain) and event.health == WARN


def count_round_changes(memory: AlertMemory, round_id: str, changes: int) -> AlertMemory:
    """Add alert-worthy events to the current round's count (a new round starts from zero)."""
    tracked = memory.round
    if tracked is None or tracked.id != round_id:
        tracked = RoundChanges(round_id)
    elif not changes:
        return memory
    return replace(memory, round=replace(tracked, changes=tracked.changes + changes))


def due_reminders(
    failing: Iterable[str],
    health: Mapping[str, SheetHealth],
    memory: AlertMemory,
    now: datetime,
    every: timedelta,
) -> list[str]:
    """Of the spreadsheets failing now (the fleet's: configured, not muted), those whose last alert
    or reminder is at least ``every`` old, sorted.

    A failing spreadsheet people were never told about (alert memory lost, or unmuted while bad)
    counts from when it went bad, so it is reminded at most once per ``every`` too.
    """
    due = []
    for sid in failing:
        record = health[sid]
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
    """Forget spreadsheets no longer bad (warning) or no longer configured (keeps the memory bounded)."""
    alerted = {
        sid: told for sid, told in memory.alerted.items() if sid in health and health[sid].health in BAD
    }
    warned = {
        sid: told for sid, told in memory.warned.items() if sid in health and health[sid].health == WARN
    }
    memory = _with_alerted(memory, alerted)
    return memory if warned == memory.warned else replace(memory, warned=warned)


def known_names(
    memory: AlertMemory, dead_letters: Mapping[str, DeadLetter], names: Mapping[str, str] | None
) -> dict[str, str]:
    """Spreadsheet names for reminders and digests: the config's, else the dead-letter queue's,
    else the name people were last told (a spreadsheet removed from the config keeps its name)."""
    known = {sid: told.name for sid, told in (*memory.warned.items(), *memory.alerted.items()) if told.name}
    known.update({sid: entry.name for sid, entry in dead_letters.items()})
    known.update(names or {})
    return known


def _with_alerted(memory: AlertMemory, alerted: dict[str, Alerted]) -> AlertMemory:
    return memory if alerted == memory.alerted else replace(memory, alerted=alerted)
