"""Incidents: a spreadsheet's trouble, one record from first seen to resolved.

A spreadsheet that warns, fails, cannot be read or is paused by its breaker has one open incident
for as long as that lasts, whatever its verdict does meanwhile (warning, then failing, then
unreadable is still the one incident): when it opened, what kind of trouble it is now, the messages
that told it (so their buttons can be changed), who acknowledged it and when, when it was escalated,
every action people took on it, and when it was resolved. Its mute is the spreadsheet's
``engine.mutes.Mute`` (until when, by whom), read beside it, never copied.

``incident/<spreadsheet id>`` holds the spreadsheet's latest incident, open or resolved: a resolved
one stays until the next trouble replaces it, so a button pressed on an old message finds out that it
is over, and the recovery can say who had acknowledged it. One document per configured spreadsheet
at most: bounded.

:func:`reconcile` opens, updates and resolves incidents from what the state says of each configured
spreadsheet; the run calls it at its end (before the notifier), so every view and every message that
reads incidents sees them as the run left the fleet. Pure: ``now`` and the id maker come in.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Literal

from monitor.core.logs import log_event
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document
from monitor.engine.dlq import DeadLetter
from monitor.engine.health import ERROR, FAIL, WARN, SheetHealth

IncidentKind = Literal["failing", "warning", "unreadable", "dead_lettered", "access_lost"]
INCIDENT_KINDS: tuple[str, ...] = ("failing", "warning", "unreadable", "dead_lettered", "access_lost")
TOLD_KEPT = 10  # the latest messages that told an incident: their buttons are the ones still pressed
ACTIONS_KEPT = 20  # the latest actions people took on it, for `sheets` and the page


@document
class Told:
    """A Telegram message that told an incident: where it is, so its buttons can be changed."""

    chat_id: str
    message_id: int
    at: UtcTime
    place: int = 0  # its place among the spreadsheets the message's buttons name, kept after a press


@document
class Action:
    """Something a person did about an incident, from the chat or the command line."""

    at: UtcTime
    by: str  # "@ivan", "Ivan (id 1234)", or "admin" for the command line
    what: str  # "acknowledged", "muted for 1 day", "checked again", ...


@document
class Incident:
    id: str  # short and unique (a button's data names it: monitor.notify.buttons)
    spreadsheet_id: str
    name: str
    kind: IncidentKind
    opened_at: UtcTime
    told: tuple[Told, ...] = ()
    acked_by: str | None = None
    acked_at: UtcTime | None = None
    escalated_at: UtcTime | None = None
    actions: tuple[Action, ...] = ()
    resolved_at: UtcTime | None = None

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None

    @property
    def acknowledged(self) -> bool:
        return self.acked_by is not None

    def with_told(self, told: Told) -> Incident:
        return replace(self, told=(*self.told, told)[-TOLD_KEPT:])

    def with_action(self, action: Action) -> Incident:
        return replace(self, actions=(*self.actions, action)[-ACTIONS_KEPT:])

    def acknowledge(self, by: str, now: datetime) -> Incident:
        """Acknowledged by ``by`` (a second acknowledgement keeps the first one's name). The action is
        the caller's to record, as every action is (``with_action``)."""
        return self if self.acknowledged else replace(self, acked_by=by, acked_at=now)


def trouble_of(record: SheetHealth | None, entry: DeadLetter | None, paused: bool) -> IncidentKind | None:
    """What kind of trouble a spreadsheet is in, from its record, dead letter and breaker; None: none."""
    if entry is not None:
        refused = entry.last_error.http_status == 403 and entry.last_error.error_class == "permanent"
        return "access_lost" if refused else "dead_lettered"
    health = record.health if record is not None else None
    if health == ERROR or paused:
        return "unreadable"
    if health == FAIL:
        return "failing"
    if health == WARN:
        return "warning"
    return None


def reconcile(incidents, health: Mapping[str, SheetHealth], dlq: Mapping[str, DeadLetter],
              paused: frozenset[str], names: Mapping[str, str], now: datetime,
              new_id: Callable[[], str]) -> list[Incident]:
    """Bring ``incidents`` (a state collection, by spreadsheet id) in line with the configured
    spreadsheets (``names``): open one for trouble that has none, follow its kind, resolve one whose
    trouble is over. Returns the incidents it resolved (their mutes "until fixed" end with them)."""
    resolved = []
    for sid, name in names.items():
        kind = trouble_of(health.get(sid), dlq.get(sid), sid in paused)
        current = incidents.get(sid)
        if kind is not None and (current is None or not current.is_open):
            record = health.get(sid)
            opened = (record.down_since or record.since) if record is not None else None
            incidents[sid] = Incident(new_id(), sid, name, kind, min(opened or now, now))
        elif kind is not None and (current.kind != kind or current.name != name):
            incidents[sid] = replace(current, kind=kind, name=name)
        elif kind is None and current is not None and current.is_open:
            incidents[sid] = replace(current, resolved_at=now)
            resolved.append(incidents[sid])
    return resolved


def settle_incidents(state, names: Mapping[str, str], now: datetime, new_id: Callable[[], str]) -> None:
    """:func:`reconcile` on a runner's state (``names``: the configured spreadsheets); a mute "until
    fixed" ends with its incident."""
    resolved = reconcile(state.incidents, state.health, state.dlq, frozenset(state.open_breakers()), names,
                         now, new_id)
    for incident in resolved:
        mute = state.mutes.get(incident.spreadsheet_id)
        if mute is not None and mute.until_fixed:
            del state.mutes[incident.spreadsheet_id]
            log_event("mute_ended", spreadsheet_id=incident.spreadsheet_id, reason="fixed")


def incident_id(rng: random.Random) -> str:
    """40 random bits in 8 characters of base32: short enough for a button's data, unique enough for
    the one incident per spreadsheet the state keeps."""
    return base64.b32encode(rng.getrandbits(40).to_bytes(5, "big")).decode().lower()
