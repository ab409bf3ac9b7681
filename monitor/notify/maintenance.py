"""Maintenance windows told: each one's beginning once, and its end once with what stands then.

The windows in force when a message is composed (``monitor.engine.maintenance.in_force``) are
compared with those the alert memory holds as told (``AlertMemory.maintenance``): one not told yet
has begun, one told and no longer in force is over (its time came, it was ended from the chat, or
its table left the config). Each becomes an event for the run's message, one per chat, about that
chat's spreadsheets only (``monitor.notify.routing``), and the memory holds the windows in force
now; the caller saves it with the message it composed, so each is told once.

A window that ends tells what fails and warns among what it covered: nobody heard of it while it
lasted. Those are noted in the alert memory as told, so their reminders count from now and their
recovery is told.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from monitor.engine.events import Event, MaintenanceBegan, MaintenanceEnded
from monitor.engine.fleet import FAILING_NOW, Fleet
from monitor.engine.health import WARN
from monitor.engine.maintenance import Window, covered_by
from monitor.notify.destinations import Destination
from monitor.notify.documents import Alerted, AlertMemory
from monitor.notify.routing import Routing


def window_changes(memory: AlertMemory, windows: Sequence[Window], fleet: Fleet, names: Mapping[str, str],
                   routing: Routing, now: datetime, run_id: str,
                   named_at_most: int) -> tuple[AlertMemory, dict[Destination, list[Event]]]:
    """The windows begun and ended since the last message, as events by chat (each naming at most
    ``named_at_most`` spreadsheets), and the memory as it is after telling them."""
    configured = list(fleet.standings)
    # A window covering no configured spreadsheet (all of them left the config) concerns nobody.
    current = {window.key: window for window in windows if covered_by(window, configured)}
    told = {window.key: window for window in memory.maintenance}
    events: dict[Destination, list[Event]] = {}
    alerted, warned = dict(memory.alerted), dict(memory.warned)
    for key, window in told.items():
        if key in current:
            continue
        for destination, part in routing.split(covered_by(window, configured), lambda sid: sid).items():
            failing = [sid for sid in part if fleet.standings[sid] in FAILING_NOW]
            warning = [sid for sid in part if fleet.standings[sid] == WARN]
            events.setdefault(destination, []).append(MaintenanceEnded(
                at=now, run_id=run_id, window=key, reason=window.reason, covered=len(part),
                everything=window.spreadsheet_ids is None, tags=window.tags,
                failing=_named(failing, names, named_at_most), failing_count=len(failing),
                warning=_named(warning, names, named_at_most), warning_count=len(warning)))
            alerted.update({sid: Alerted(now, names.get(sid, sid)) for sid in failing})
            warned.update({sid: Alerted(now, names.get(sid, sid)) for sid in warning})
    for key, window in current.items():
        if key in told:
            continue
        for destination, part in routing.split(covered_by(window, configured), lambda sid: sid).items():
            events.setdefault(destination, []).append(MaintenanceBegan(
                at=now, run_id=run_id, window=key, until=window.end, reason=window.reason, covered=len(part),
                named=_named(part, names, named_at_most), everything=window.spreadsheet_ids is None,
                tags=window.tags, by=window.by))
    kept = tuple(current.values())  # as they stand now: a window the chat extended keeps its new end
    if kept == memory.maintenance and not events:
        return memory, events
    return replace(memory, maintenance=kept, alerted=alerted, warned=warned), events


def _named(spreadsheet_ids: Sequence[str], names: Mapping[str, str],
           at_most: int) -> tuple[tuple[str, str], ...]:
    return tuple((sid, names.get(sid, sid)) for sid in spreadsheet_ids[:at_most])
