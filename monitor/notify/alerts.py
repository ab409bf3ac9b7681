"""One run's events -> ONE grouped alert: collapsed, muted, ranked, counted, cut at ``max_items``.

Pure: nothing here knows how a message travels (``monitor.notify.outbox`` keeps it until
``monitor.notify.telegram`` has sent it). Each event's line comes from ``monitor.notify.render``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from monitor.core.timefmt import format_utc
from monitor.engine.events import (
    BreakerClosed,
    BreakerOpened,
    Event,
    FolderEvent,
    MaintenanceBegan,
    MaintenanceEnded,
    SpreadsheetRestored,
    SpreadsheetTrashed,
    StateEntryDamaged,
    sheet_of,
)
from monitor.engine.fleet import Fleet
from monitor.notify.counts import failing_now_line
from monitor.notify.documents import Keyboard
from monitor.notify.flood import flood_lines, is_flood
from monitor.notify.messages import Message, esc, fingerprint, listed, messages_for, more_line
from monitor.notify.render import RECOVERED, Item, headline, render
from monitor.notify.settings import AlertSettings

Buttons = Callable[[list[str]], Keyboard]  # the rows under a message naming these spreadsheets


def no_buttons(spreadsheet_ids: list[str]) -> Keyboard:
    return ()


def topic(event: Event) -> tuple[str, ...]:
    """What an event is about; of several events on one topic in a run, people hear the latest.

    A spreadsheet's health and readability are one topic (failed then recovered within a run is
    told once, as recovered), its breaker another, its place in Drive's trash a third. An event
    about the monitor or Google is its own topic by kind, except a damaged state entry (each one
    lost something different) and a maintenance window's beginning or end (each window's own).
    """
    sid = sheet_of(event)
    if sid is None:
        if isinstance(event, StateEntryDamaged):
            return ("system", event.KIND, event.key)
        if isinstance(event, MaintenanceBegan | MaintenanceEnded):
            return ("maintenance", event.KIND, event.window)
        if isinstance(event, FolderEvent):  # each folder's own, and each time it changed
            return ("folder", event.KIND, event.folder_id, event.at.isoformat())
        return ("system", event.KIND)
    if isinstance(event, BreakerOpened | BreakerClosed):
        return ("breaker", sid)
    if isinstance(event, SpreadsheetTrashed | SpreadsheetRestored):
        return ("trash", sid)
    return ("sheet", sid)


def collapse(events: Iterable[Event], muted: frozenset[str] = frozenset()) -> list[Event]:
    """The latest event of each topic, in the order of those latest events; muted spreadsheets'
    events dropped (they alert nobody)."""
    latest: dict[tuple[str, ...], Event] = {}
    for event in events:
        if sheet_of(event) in muted:
            continue
        key = topic(event)
        latest.pop(key, None)  # re-insert so the order follows the latest event
        latest[key] = event
    return list(latest.values())


def rendered(events: Iterable[Event], muted: frozenset[str] = frozenset(),
             owners: Mapping[str, str] | None = None,
             acknowledged: Mapping[str, str] | None = None) -> list[tuple[Event, Item]]:
    """(event, its line) for each collapsed event people hear about, in event order; a line about a
    spreadsheet with an owner names the owner, and a finding of a check with its own owner names that
    one instead; a recovery says who had acknowledged the trouble (``acknowledged``: by spreadsheet)."""
    lines = [(event, item) for event in collapse(events, muted) if (item := render(event)) is not None]
    return [(event, with_acknowledged(with_owner(item, owner_of(event, owners or {})),
                                      (acknowledged or {}).get(sheet_of(event) or "")))
            for event, item in lines]


def owner_of(event: Event, owners: Mapping[str, str]) -> str | None:
    """Who answers for an event's line: its findings' checks' owners, and the spreadsheet's owner for
    the findings (or the event) without one."""
    sheet_owner = owners.get(sheet_of(event) or "")
    findings = getattr(event, "findings", ())
    named = [finding.owner or sheet_owner for finding in findings] or [sheet_owner]
    return ", ".join(dict.fromkeys(owner for owner in named if owner)) or None


def with_owner(item: Item, owner: str | None) -> Item:
    """The line with who answers for its spreadsheet ("@olga" notifies her in Telegram)."""
    return replace(item, html=f"{item.html} · owner: {esc(owner, 200)}") if owner else item


def with_acknowledged(item: Item, by: str | None) -> Item:
    """A recovery with who had acknowledged the trouble: they can stop looking."""
    if not by or item.category != RECOVERED:
        return item
    return replace(item, html=f"{item.html} (acknowledged by {esc(by, 100)})")


def ranked(events: Iterable[Event], muted: frozenset[str] = frozenset(),
           owners: Mapping[str, str] | None = None,
           acknowledged: Mapping[str, str] | None = None) -> list[tuple[Event, Item]]:
    """``rendered``, in the order an alert lists them: most urgent first (stable: the same rank
    keeps event order)."""
    return sorted(rendered(events, muted, owners, acknowledged), key=lambda pair: pair[1].rank)


def alert_items(events: Iterable[Event], muted: frozenset[str] = frozenset(),
                owners: Mapping[str, str] | None = None) -> list[Item]:
    return [item for _, item in ranked(events, muted, owners)]


def shown_sheets(events: Iterable[Event], muted: frozenset[str], max_items: int) -> set[str]:
    """The spreadsheets whose lines an alert of ``events`` shows (its first ``max_items``, the rest
    only counted in "+K more"): what a summary in the same message need not list again."""
    return {sid for event, _ in ranked(events, muted)[:max_items] if (sid := sheet_of(event)) is not None}


def compose_alert(
    events: Sequence[Event],
    fleet: Fleet,
    settings: AlertSettings,
    muted: Iterable[str] = (),
    owners: Mapping[str, str] | None = None,
    buttons: Buttons = no_buttons,
    acknowledged: Mapping[str, str] | None = None,
) -> list[Message]:
    """One run's events as ONE grouped message (split only when longer than ``max_length``).

    Headline counting what changed, how many of the chat's spreadsheets (``fleet``) are failing now,
    then the first ``max_items`` items, then "+K more". More new problems than ``flood_after`` (a first
    round) make the short form instead (``monitor.notify.flood``). Events of muted spreadsheets are
    dropped. No alert-worthy event: []. The key is the same for the same events, so composing them
    again after a crash adds nothing. ``owners`` (spreadsheet id -> owner) names who answers for each
    line's spreadsheet; ``buttons`` gives the rows under the message for the spreadsheets its lines
    name (``monitor.notify.buttons``).
    """
    muted = frozenset(muted)
    pairs = ranked(events, muted, owners, acknowledged)
    if not pairs:
        return []
    key = "alert:" + fingerprint([(e.KIND, format_utc(e.at), sheet_of(e)) for e in events])
    items = [item for _, item in pairs]
    if is_flood(items, settings):
        lines, named = flood_lines(pairs, fleet, settings)
        return messages_for(key, "\n".join(lines), settings.max_length, buttons(named))
    lines = [f"<b>sheet-monitor: {headline(items)}</b>", failing_now_line(fleet), ""]
    lines += listed(items, settings.max_items, lambda item: item.html,
                    more_line(settings.report_url, of_sheets=False))
    named = [sid for event, _ in pairs[:settings.max_items] if (sid := sheet_of(event)) is not None]
    return messages_for(key, "\n".join(lines), settings.max_length, buttons(named))
