"""Maintenance windows in force: the config's (``[[maintenance]]``) and those started from the chat.

While a window covers a spreadsheet, the spreadsheet stands as under maintenance in the fleet
(``monitor.engine.fleet``) and the notifier silences it as it silences a muted one; it is still
read, so that the window's end can tell what stands.

The config's windows are ``monitor.config.MaintenanceWindow``: each occurrence in force is a
:class:`Window` named by the table's key and its start. A window started from the chat
(``/maintenance 2h``) is kept in the state's ``maintenance`` document until it ends, and one ended
early from the chat leaves a note there until its scheduled end. Pure: ``now`` comes in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from monitor.config import MaintenanceWindow
from monitor.core.logs import log_event
from monitor.core.timefmt import UtcTime, format_utc
from monitor.core.tracking import document

WINDOWS_KEPT = 50  # windows started from the chat at once, at most: the oldest end first beyond it


@document
class Window:
    """One maintenance window: when it is in force, what it covers, why, and who started it."""

    key: str  # names this occurrence: what it was told as (monitor.notify.maintenance)
    start: UtcTime
    end: UtcTime
    reason: str
    spreadsheet_ids: tuple[str, ...] | None = None  # None: every configured spreadsheet
    tags: tuple[str, ...] = ()  # how it was chosen, said when it begins ("tag #moscow")
    by: str | None = None  # who started it from the chat ("@ivan"); None: the config

    def in_force(self, now: datetime) -> bool:
        return self.start <= now < self.end

    def covers(self, spreadsheet_id: str) -> bool:
        return self.spreadsheet_ids is None or spreadsheet_id in self.spreadsheet_ids


@document
class Maintenance:
    """The state's document: windows started from the chat, and the config's occurrences ended early
    from it (kept until their scheduled end, then forgotten)."""

    windows: tuple[Window, ...] = ()
    ended_early: tuple[Window, ...] = ()


def occurrence(window: MaintenanceWindow, now: datetime) -> Window | None:
    """The config window's occurrence in force at ``now``, as a :class:`Window`; None if none is."""
    found = window.occurrence_at(now)
    if found is None:
        return None
    start, end = found
    return Window(f"{window.key}@{format_utc(start)}", start, end, window.reason, window.spreadsheet_ids,
                  window.tags)


def in_force(scheduled: Iterable[MaintenanceWindow], maintenance: Maintenance, now: datetime) -> list[Window]:
    """Every window in force at ``now``: the config's occurrences (but those ended early), then the
    chat's, each in its order."""
    cut = {window.key for window in maintenance.ended_early}
    found = [window for window in (occurrence(each, now) for each in scheduled)
             if window is not None and window.key not in cut]
    return found + [window for window in maintenance.windows if window.in_force(now)]


def covering(windows: Iterable[Window], spreadsheet_ids: Iterable[str]) -> dict[str, Window]:
    """For each of ``spreadsheet_ids`` a window covers, the one that ends last (what `sheets` shows).
    Linear in spreadsheets times windows (each window's ids looked up in a set)."""
    ids = list(spreadsheet_ids)
    found: dict[str, Window] = {}
    for window in sorted(windows, key=lambda each: each.end):  # the latest end is written last
        covered = ids if window.spreadsheet_ids is None else set(window.spreadsheet_ids).intersection(ids)
        found.update(dict.fromkeys(covered, window))
    return {sid: found[sid] for sid in ids if sid in found}


class HoldsMaintenance(Protocol):
    """What starting and ending a window changes of the state (a ``RunnerState``, which holds this
    module's document: named so here, it would be imported back)."""

    maintenance: Maintenance


def start_maintenance(state: HoldsMaintenance, now: datetime, until: datetime, by: str, reason: str,
                      spreadsheet_ids: Collection[str] | None = None, tags: tuple[str, ...] = ()) -> Window:
    """Start a window from the chat (``/maintenance 2h [#tag|name] [reason]``): from ``now`` until
    ``until``, over ``spreadsheet_ids`` (None: every configured spreadsheet), chosen by ``tags`` (for
    the words only). A window started again over the same spreadsheets ends at the new ``until``
    and keeps its name, so it is not told as beginning twice. Returns the window as it stands."""
    if until <= now:
        raise ValueError("a maintenance window must end after it starts")
    ids = None if spreadsheet_ids is None else tuple(dict.fromkeys(spreadsheet_ids))
    if ids == ():
        raise ValueError("a maintenance window must cover a spreadsheet (None: every one)")
    kept = [window for window in state.maintenance.windows if window.in_force(now)]
    same = next((window for window in kept if window.spreadsheet_ids == ids), None)
    if same is not None:
        window = replace(same, end=until, reason=reason or same.reason, by=by, tags=tags or same.tags)
        kept[kept.index(same)] = window
    else:
        named = f"{format_utc(now)}|{by}|{ids}|{tags}"
        window = Window("chat-" + hashlib.sha256(named.encode()).hexdigest()[:10], now, until, reason, ids,
                        tags, by)
        kept.append(window)
    kept = sorted(kept, key=lambda each: each.end)[-WINDOWS_KEPT:]
    state.maintenance = replace(state.maintenance, windows=tuple(kept),
                                ended_early=_current(state.maintenance.ended_early, now))
    log_event("maintenance_started", key=window.key, by=by, until=format_utc(until),
              spreadsheets=len(ids) if ids is not None else "all")
    return window


def end_maintenance(state: HoldsMaintenance, now: datetime, by: str,
                    scheduled: Iterable[MaintenanceWindow] = (),
                    spreadsheet_ids: Collection[str] | None = None) -> list[Window]:
    """End now the windows in force that cover any of ``spreadsheet_ids`` (None: every window in
    force), the chat's and the config's (``scheduled``) alike; a config window's next occurrence
    comes as planned. Returns the windows ended (none: nothing was in force)."""

    def chosen(window: Window) -> bool:
        return spreadsheet_ids is None or any(window.covers(sid) for sid in spreadsheet_ids)

    ended = [window for window in in_force(scheduled, state.maintenance, now) if chosen(window)]
    if not ended:
        return []
    keys = {window.key for window in ended}
    windows = tuple(w for w in state.maintenance.windows if w.in_force(now) and w.key not in keys)
    early = (*_current(state.maintenance.ended_early, now),
             *(window for window in ended if window.by is None))  # the config's: remembered until their end
    state.maintenance = Maintenance(windows, early)
    for window in ended:
        log_event("maintenance_ended", key=window.key, by=by)
    return ended


def _current(windows: Iterable[Window], now: datetime) -> tuple[Window, ...]:
    return tuple(window for window in windows if now < window.end)


def covered_by(window: Window, configured: Iterable[str]) -> list[str]:
    """The configured spreadsheets a window covers, in the config's order."""
    if window.spreadsheet_ids is None:
        return list(configured)
    ids = set(window.spreadsheet_ids)
    return [sid for sid in configured if sid in ids]
