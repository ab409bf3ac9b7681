"""What a press of one of the monitor's buttons does: checked, applied to the state, recorded on the
incident, and said back.

A press is untrusted (``monitor.chat.updates``). It acts only when it comes from one of the team's
chats, from someone allowed (``monitor.chat.people``), carries data the monitor signed
(``monitor.notify.buttons``), and is pressed on a message that told that very incident: a valid
button replayed on another message, in another chat, or after its trouble was replaced by a newer
one acts on nothing. Every refusal is logged with who tried what; every action is recorded on the
incident with who did it. Pure but for the log: ``now`` comes in, the state is changed in place
and saved by the caller, in the same save as the offset past this update.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from monitor.admin.mutations import read_now
from monitor.chat.people import Gate
from monitor.chat.updates import Person, Press
from monitor.core.durations import human_duration
from monitor.core.logs import log_event
from monitor.engine.incidents import Action, Incident
from monitor.engine.mutes import UNTIL_FIXED_AT_MOST, Mute
from monitor.notify.buttons import ACK, CHECK, MUTE_DAY, MUTE_FIXED, MUTE_HOUR, UNMUTE, Signer
from monitor.notify.documents import ASKED_KEPT, Asked
from monitor.notify.messages import esc, utc_text
from monitor.notify.telegram import html_to_text
from monitor.state import State

MUTES = {MUTE_HOUR: timedelta(hours=1), MUTE_DAY: timedelta(days=1)}


@dataclass(frozen=True)
class Said:
    """What the conversation says back about one update: the pressing client's answer (it stops
    the spinner), shown as an alert for a refusal; a line in the chat for everyone; and the
    spreadsheet whose messages' buttons change with it."""

    answer: str
    line: str | None = None
    alert: bool = False
    changed: str | None = None  # a spreadsheet id: its incident's messages get their buttons again


@dataclass(frozen=True)
class Place:
    """What an action needs to know of the config."""

    names: Mapping[str, str]  # the configured spreadsheets
    round_interval: timedelta
    maintenance: tuple = ()  # the config's [[maintenance]] windows (``/maintenance end`` cuts one short)


def apply_press(press: Press, state: State, signer: Signer, gate: Gate, place: Place, now: datetime) -> Said:
    """Check ``press`` and do what its button says."""
    who = press.person.shown
    if not gate.in_team_chat(press.chat_id):
        return _refused(press, "not a chat the monitor tells", "This chat is not one the monitor tells.")
    refusal = gate.refusal(press.person)
    if refusal is not None:
        return _refused(press, "not an operator", refusal)
    verified = signer.verify(press.data)
    if verified is None:
        return _refused(press, "data the monitor did not sign", "This button was not made by the monitor.")
    action, incident_id = verified
    found = _incident(state, incident_id)
    if found is None:
        return Said(
            "That trouble is over, and a newer one replaced it: use the buttons of the latest message.",
            alert=True,
        )
    sid, incident = found
    if (press.chat_id, press.message_id) not in {(told.chat_id, told.message_id) for told in incident.told}:
        return _refused(press, "a button of another message", "This button belongs to another message.")
    if sid not in place.names:
        return Said(f"{incident.name} is no longer in the config.", alert=True, changed=sid)
    if not incident.is_open:
        return Said(
            f"{incident.name} is fine again since {utc_text(incident.resolved_at)}: nothing to do.",
            changed=sid,
        )
    line, what = _do(action, sid, incident, state, press.person, place, now)
    state.incidents[sid] = state.incidents[sid].with_action(Action(now, who, what))
    if action == CHECK:
        ask(state, Asked(sid, now, who, press.chat_id, press.thread_id, press.message_id))
    log_event(
        "chat_action",
        action=what,
        spreadsheet_id=sid,
        user=who,
        user_id=press.person.id,
        chat_id=press.chat_id,
    )
    return Said(html_to_text(line)[:200], line, changed=sid)


def _do(
    action: str, sid: str, incident: Incident, state: State, person: Person, place: Place, now: datetime
) -> tuple[str, str]:
    """(the line saying what changed and who did it, what was done in words)."""
    who, name = person.shown, esc(incident.name, 150)
    if action == ACK:
        state.incidents[sid] = incident.acknowledge(who, now)
        line = f"✔ Acknowledged by {esc(who)}: {name}. No more reminders of it until it is fixed."
        return line, "acknowledged"
    if action in MUTES:
        until = now + MUTES[action]
        state.mutes[sid] = Mute(until, f"muted from Telegram by {who}", now, incident.name, who)
        span = human_duration(MUTES[action].total_seconds())
        return f"🔕 Muted for {span} by {esc(who)}: {name} (until {utc_text(until)}).", f"muted for {span}"
    if action == MUTE_FIXED:
        state.mutes[sid] = Mute(
            now + UNTIL_FIXED_AT_MOST,
            f"muted until fixed, from Telegram by {who}",
            now,
            incident.name,
            who,
            until_fixed=True,
        )
        return (
            f"🔕 Muted until fixed by {esc(who)}: {name}. It is still read; the mute ends when it "
            "is fine again.",
            "muted until fixed",
        )
    if action == UNMUTE:
        state.mutes.pop(sid)
        return f"🔔 Unmuted by {esc(who)}: {name}.", "unmuted"
    due, _ = read_now(state, sid, now, place.round_interval)
    when = "now" if due == "current_round" else "first in the next round"
    line = f"🔄 Checking again, asked by {esc(who)}: {name} is read {when}; its verdict follows."
    return line, "checked again"


def ask(state: State, asked: Asked) -> None:
    """Owe ``asked`` its spreadsheet's verdict once a read after it judged it (an earlier ask of the
    same spreadsheet in the same chat is answered by the same read: one answer)."""
    conversation = state.conversation
    kept = [
        owed
        for owed in conversation.asked
        if (owed.spreadsheet_id, owed.chat_id) != (asked.spreadsheet_id, asked.chat_id)
    ]
    state.conversation = replace(conversation, asked=(*kept, asked)[-ASKED_KEPT:])


def _incident(state: State, incident_id: str) -> tuple[str, Incident] | None:
    for sid, incident in state.incidents.items():
        if incident.id == incident_id:
            return sid, incident
    return None


def _refused(press: Press, reason: str, answer: str) -> Said:
    log_event(
        "chat_press_refused",
        logging.WARNING,
        reason=reason,
        user=press.person.shown,
        user_id=press.person.id,
        chat_id=press.chat_id,
        message_id=press.message_id,
    )
    return Said(answer, alert=True)
