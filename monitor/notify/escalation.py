"""Escalation: a failing spreadsheet's incident nobody acknowledged for ``[alerts] escalate_after`` is
told once more, naming its owner, in its own chat or the escalation chat (``Routing.escalation``).

Once per incident: the time it was escalated is kept on the incident (``Incident.escalated_at``),
saved with the message that tells it. Acknowledging it first prevents it; a trouble that ends and
comes back is a new incident, which may escalate again. A spreadsheet muted or under maintenance is
not failing now in the fleet's count, so it is not escalated while it is silenced. Pure but for
:func:`mark_escalated`, which records it on the state's incidents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.core.wording import counted
from monitor.engine.fleet import Fleet
from monitor.engine.health import ERROR
from monitor.engine.incidents import Incident
from monitor.notify.alerts import Buttons, no_buttons
from monitor.notify.messages import (
    Message,
    duration_text,
    esc,
    fingerprint,
    listed,
    messages_for,
    more_line,
    sheet_link,
)
from monitor.notify.settings import AlertSettings


def due_escalations(incidents: Mapping[str, Incident], fleet: Fleet, escalate_after: timedelta | None,
                    now: datetime) -> list[str]:
    """The spreadsheets failing now (the fleet's: not muted, not under maintenance) whose open
    incident nobody acknowledged, opened at least ``escalate_after`` before ``now``, and not
    escalated yet; in the fleet's order. None: escalation is off."""
    if escalate_after is None:
        return []
    due = []
    for sid in fleet.failing:
        incident = incidents.get(sid)
        if (incident is not None and incident.is_open and not incident.acknowledged
                and incident.escalated_at is None and now - incident.opened_at >= escalate_after):
            due.append(sid)
    return due


def escalation_line(sid: str, incident: Incident, fleet: Fleet, owners: Mapping[str, str],
                    now: datetime) -> str:
    """'⏫ Store 014 has been failing for 2 hours and nobody acknowledged it · owner: @olga'."""
    how_long = duration_text((now - incident.opened_at).total_seconds())
    verb = "has been unreadable" if fleet.standings.get(sid) == ERROR else "has been failing"
    owner = owners.get(sid)
    named = f" · owner: {esc(owner, 200)}" if owner else ""
    return f"⏫ {sheet_link(sid, incident.name)} {verb} for {how_long} and nobody acknowledged it{named}"


def compose_escalation(spreadsheet_ids: Sequence[str], incidents: Mapping[str, Incident], fleet: Fleet,
                       owners: Mapping[str, str], now: datetime, settings: AlertSettings,
                       buttons: Buttons = no_buttons) -> list[Message]:
    """One message escalating ``spreadsheet_ids`` (see :func:`due_escalations`), a line each, with the
    buttons of those it lists; [] for none."""
    if not spreadsheet_ids:
        return []
    after = duration_text(settings.escalate_after.total_seconds()) if settings.escalate_after else ""
    lines = [f"<b>sheet-monitor: {counted(len(spreadsheet_ids), 'problem')} nobody acknowledged for "
             f"{after}</b>", ""]
    lines += listed(list(spreadsheet_ids), settings.max_items,
                    lambda sid: escalation_line(sid, incidents[sid], fleet, owners, now),
                    more_line(settings.report_url))
    key = "escalation:" + fingerprint([incidents[sid].id for sid in spreadsheet_ids])
    return messages_for(key, "\n".join(lines), settings.max_length,
                        buttons(list(spreadsheet_ids[:settings.max_items])))


def mark_escalated(state, spreadsheet_ids: Sequence[str], now: datetime) -> None:
    """Record on each spreadsheet's incident that it was escalated at ``now`` (saved with the message)."""
    for sid in spreadsheet_ids:
        state.incidents[sid] = replace(state.incidents[sid], escalated_at=now)
