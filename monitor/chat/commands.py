"""The chat's commands: what each one says back, and does.

``/status``, ``/failing``, ``/mute NAME|URL|#tag DURATION [reason]``, ``/unmute NAME|URL|#tag``,
``/check NAME|URL``, ``/ack NAME|URL``, ``/help``. A spreadsheet is named as on the command line
(``monitor.admin.targets``: an id, its URL, its name or part of it, ``#tag`` for all with the tag); a
name that fits several is answered with the candidates, never guessed. The answers say what
`status`, `sheets` and `check` say, in lines that fit a phone. Who may change anything is the gate's
(``monitor.chat.people``); anyone in the team's chats may ask how things stand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.admin.errors import AdminError
from monitor.admin.mutations import read_now
from monitor.admin.targets import Target, resolve, resolve_all
from monitor.chat.actions import Place, Said, ask
from monitor.chat.people import Gate
from monitor.chat.updates import Command
from monitor.core.durations import human_duration, parse_positive_duration
from monitor.core.invalid_value import InvalidValue
from monitor.engine.fleet import Fleet
from monitor.engine.incidents import Action
from monitor.engine.maintenance import covered_by, end_maintenance, start_maintenance
from monitor.engine.mutes import UNTIL_FIXED_AT_MOST, Mute
from monitor.notify.counts import counts_in_words
from monitor.notify.digest import Overview, failing_line, why_bad
from monitor.notify.documents import Asked
from monitor.notify.messages import esc, link, listed, more_line, sheet_link, utc_text
from monitor.state import State

HELP = """<b>sheet-monitor</b> answers here:
/status: how the spreadsheets stand
/failing: what fails now, longest first
/check NAME: read it now; the verdict follows
/ack NAME: you are on it (no more reminders)
/mute NAME 1h|1d|fixed [reason], /unmute NAME
/maintenance 2h [NAME|#tag] [reason]: silence them (all, without a name); /maintenance end
NAME: its name or part of it, its URL or id, or #tag for all with the tag.
The buttons under an alert do the same for its spreadsheet."""
# What the gate may refuse (they change what the monitor does); the others only tell.
CHANGES = frozenset({"mute", "unmute", "ack", "check", "maintenance"})
FIXED = {"fixed", "until-fixed", "untilfixed", "∞"}
_TAG = re.compile(r"^#(\S+)$")


class Context:
    """What a command answers from: the state, the configured spreadsheets, the page's address."""

    def __init__(
        self, state: State, sheets: Sequence[Target], place: Place, report_url: str | None, now: datetime
    ) -> None:
        self.state, self.sheets, self.place, self.report_url, self.now = state, sheets, place, report_url, now
        self.fleet = Fleet.of(state, [sheet.id for sheet in sheets], now)


def run_command(command: Command, context: Context, gate: Gate) -> Said | None:
    """The answer to ``command`` (None: not one of ours, said nothing: another bot's, a typo answered
    by /help would be noise in a group)."""
    handler = _HANDLERS.get(command.name)
    if handler is None:
        return None
    if command.name in CHANGES:
        refusal = gate.refusal(command.person)
        if refusal is not None:
            return Said("", refusal)
    try:
        return Said("", handler(command, context))
    except AdminError as exc:  # a name that fits none or several: said, with the candidates
        return Said("", esc(str(exc), 900))


def _status(command: Command, context: Context) -> str:
    state = context.state
    lines = ["<b>sheet-monitor</b>", counts_in_words(context.fleet.counts())]
    beat = state.heartbeat or max(state.runner_heartbeats.values(), key=lambda b: b.started_at, default=None)
    if beat is not None:
        ended = f"ended {utc_text(beat.finished_at)}" if beat.finished_at else "running now"
        lines.append(f"Last run: started {utc_text(beat.started_at)}, {ended} ({beat.outcome.value})")
    rnd = state.round
    if rnd is not None:
        lines.append(f"Round: {rnd.finished()} of {len(rnd)} read" + (", done" if rnd.is_complete() else ""))
    halted = state.outbox.halted or next(iter(state.outbox.halts.values()), None)
    if halted is not None:
        lines.append(f"Telegram refuses a chat since {utc_text(halted.at)}: {esc(halted.description, 120)}")
    if context.report_url:
        lines.append(link(context.report_url, "The status page"))
    return "\n".join(lines)


def _failing(command: Command, context: Context) -> str:
    fleet, state = context.fleet, context.state
    overview = Overview(fleet, state.health, {s.id: s.name for s in context.sheets}, state.dlq)
    bad = sorted(fleet.failing, key=lambda sid: (state.health[sid].down_since or context.now, sid))
    if not bad:
        return "Nothing is failing. " + counts_in_words(fleet.counts())
    lines = [f"<b>Failing now ({len(bad)})</b>"]
    lines += listed(
        bad,
        10,
        lambda sid: failing_line(sid, overview, context.now) + _acked(state, sid),
        more_line(context.report_url),
    )
    return "\n".join(lines)


def _acked(state: State, sid: str) -> str:
    incident = state.incidents.get(sid)
    if incident is None or not incident.is_open or not incident.acked_by:
        return ""
    return f" · acknowledged by {esc(incident.acked_by)}"


def _check(command: Command, context: Context) -> str:
    sheet = resolve(context.sheets, _one_reference(command, "/check NAME"))
    state, now = context.state, context.now
    if state.mute_skips_reads(sheet.id, now):
        mute = state.mutes[sheet.id]
        return (
            f"{sheet_link(sheet.id, sheet.name)} is muted until {utc_text(mute.until)}, so it is not "
            f"read: /unmute {esc(sheet.name)} first."
        )
    due, _ = read_now(state, sheet.id, now, context.place.round_interval)
    ask(
        state,
        Asked(sheet.id, now, command.person.shown, command.chat_id, command.thread_id, command.message_id),
    )
    _record(state, sheet.id, command, "checked again", now)
    when = "now" if due == "current_round" else "first in the next round"
    return f"🔄 {sheet_link(sheet.id, sheet.name)} is read {when}; its verdict follows."


def _ack(command: Command, context: Context) -> str:
    sheet = resolve(context.sheets, _one_reference(command, "/ack NAME"))
    state, now = context.state, context.now
    incident = state.incidents.get(sheet.id)
    if incident is None or not incident.is_open:
        return f"{sheet_link(sheet.id, sheet.name)} has no trouble to acknowledge: it is fine."
    state.incidents[sheet.id] = incident.acknowledge(command.person.shown, now)
    _record(state, sheet.id, command, "acknowledged", now)
    return (
        f"✔ Acknowledged by {esc(command.person.shown)}: {sheet_link(sheet.id, sheet.name)}. No more "
        "reminders of it until it is fixed."
    )


def _mute(command: Command, context: Context) -> str:
    references, duration, reason = _mute_arguments(command.arguments)
    sheets = _targets(context, references)
    state, now, who = context.state, context.now, command.person.shown
    until_fixed = duration is None
    until = now + (UNTIL_FIXED_AT_MOST if until_fixed else duration)
    span = "until fixed" if until_fixed else f"for {human_duration(duration.total_seconds())}"
    for sheet in sheets:
        state.mutes[sheet.id] = Mute(
            until, reason or f"muted from Telegram by {who}", now, sheet.name, who, until_fixed=until_fixed
        )
        _record(state, sheet.id, command, f"muted {span}", now)
    ends = "" if until_fixed else f" (until {utc_text(until)})"
    return f"🔕 Muted {span}{ends} by {esc(who)}: {_names(sheets)}."


def _unmute(command: Command, context: Context) -> str:
    sheets = _targets(context, _references(command.arguments) or [""])
    state, now = context.state, context.now
    was = [sheet for sheet in sheets if state.is_muted(sheet.id, now)]
    for sheet in sheets:
        state.mutes.pop(sheet.id)  # an expired mute goes too
    for sheet in was:
        _record(state, sheet.id, command, "unmuted", now)
    if not was:
        return f"{_names(sheets)}: not muted."
    return f"🔔 Unmuted by {esc(command.person.shown)}: {_names(was)}."


def _maintenance(command: Command, context: Context) -> str:
    """``/maintenance 2h [NAME|#tag] [reason]``: silence them (all without a name) until then, still
    read; ``/maintenance end [NAME|#tag]``: end it now."""
    state, now, who = context.state, context.now, command.person.shown
    words = command.arguments.split()
    if words[:1] == ["end"]:
        references = _references(" ".join(words[1:]))
        chosen = [sheet.id for sheet in _targets(context, references)] if references else None
        ended = end_maintenance(state, now, who, context.place.maintenance, chosen)
        if not ended:
            return "No maintenance is in force there."
        return f"🛠 Maintenance ended by {esc(who)}: {_covered(ended, context)}."
    if not words:
        raise AdminError("How long? /maintenance 2h [NAME|#tag] [reason], or /maintenance end", usage=True)
    try:
        duration = parse_positive_duration(words[0])
    except (InvalidValue, ValueError):
        raise AdminError(f"{words[0]!r} is not a duration: /maintenance 2h [NAME|#tag] [reason]",
                         usage=True) from None
    references, reason = _maintenance_scope(words[1:], context)
    sheets = _targets(context, references) if references else None
    tags = tuple(ref[1:] for ref in references if _TAG.match(ref))
    window = start_maintenance(state, now, now + duration, who, reason or f"started from Telegram by {who}",
                               None if sheets is None else [sheet.id for sheet in sheets], tags)
    # This answer tells its beginning: the run's message need not tell it again.
    told = [known for known in state.alerts.maintenance if known.key != window.key]
    state.alerts = replace(state.alerts, maintenance=(*told, window))
    scope = _names(sheets) if sheets is not None else "every spreadsheet"
    return (f"🛠 Maintenance until {utc_text(window.end)}, started by {esc(who)}: {scope}: "
            f"{esc(window.reason, 200)}. Nothing is said of them meanwhile; they are still read, and when "
            "it ends the chat hears what fails then.")


def _maintenance_scope(words: list[str], context: Context) -> tuple[list[str], str]:
    """(references, reason) of ``/maintenance DURATION ...``: tags, then the longest run of words that
    names a spreadsheet; what follows is the reason."""
    tags = [word for word in words if _TAG.match(word)]
    rest = [word for word in words if not _TAG.match(word)]
    for cut in range(len(rest), 0, -1):
        try:
            resolve(context.sheets, " ".join(rest[:cut]))
        except AdminError:
            continue
        return [*tags, " ".join(rest[:cut])], " ".join(rest[cut:])
    return tags, " ".join(rest)


def _covered(windows, context: Context) -> str:
    names = {sheet.id: sheet.name for sheet in context.sheets}
    ids = dict.fromkeys(sid for window in windows for sid in covered_by(window, names))
    return _first_few([esc(names[sid], 80) for sid in ids])


def _help(command: Command, context: Context) -> str:
    return HELP + f"\nYour Telegram id: {command.person.id}."


_HANDLERS: dict[str, Callable[[Command, Context], str]] = {
    "status": _status,
    "failing": _failing,
    "check": _check,
    "ack": _ack,
    "mute": _mute,
    "unmute": _unmute,
    "maintenance": _maintenance,
    "help": _help,
    "start": _help,
}


# ---- arguments -----------------------------------------------------------------------------------------


def _one_reference(command: Command, usage: str) -> str:
    if not command.arguments:
        raise AdminError(f"Which spreadsheet? {usage}", usage=True)
    return command.arguments


def _references(arguments: str) -> list[str]:
    """A whole name ("Store 014 — Kazan") is one reference; tags are words of their own."""
    words = arguments.split()
    tags = [word for word in words if _TAG.match(word)]
    rest = " ".join(word for word in words if not _TAG.match(word))
    return tags + ([rest] if rest else [])


def _mute_arguments(arguments: str) -> tuple[list[str], timedelta | None, str]:
    """(references, duration or None for until fixed, reason): the first word that is a duration
    ends the name, what follows is the reason."""
    words = arguments.split()
    for n, word in enumerate(words):
        if word.lower() in FIXED:
            return _references(" ".join(words[:n])), None, " ".join(words[n + 1 :])
        try:
            duration = parse_positive_duration(word)
        except (InvalidValue, ValueError):
            continue
        return _references(" ".join(words[:n])), duration, " ".join(words[n + 1 :])
    raise AdminError(
        "How long? /mute NAME 1h|1d|fixed [reason] (e.g. /mute Store 014 2h new supplier)", usage=True
    )


def _targets(context: Context, references: list[str]) -> list[Target]:
    if not references or references == [""]:
        raise AdminError("Which spreadsheets? Give a name, a URL, an id or a #tag", usage=True)
    names = [ref for ref in references if not _TAG.match(ref)]
    tags = [_TAG.match(ref).group(1) for ref in references if _TAG.match(ref)]
    return resolve_all(context.sheets, names, tags)


def _names(sheets: Sequence[Target]) -> str:
    return _first_few([sheet_link(sheet.id, sheet.name) for sheet in sheets])


def _first_few(shown: list[str], few: int = 5) -> str:
    """A reply names a few spreadsheets and counts the rest: it must stay a line on a phone."""
    return ", ".join(shown[:few]) + (f" and {len(shown) - few} more" if len(shown) > few else "")


def _record(state: State, sid: str, command: Command, what: str, now: datetime) -> None:
    incident = state.incidents.get(sid)
    if incident is not None and incident.is_open:
        state.incidents[sid] = incident.with_action(Action(now, command.person.shown, what))


def verdict_line(state: State, sid: str, name: str, now: datetime) -> str:
    """A read's verdict in a line, as `sheets` shows it: for an answer to /check and *Check again*."""
    record = state.health.get(sid)
    if record is None:
        return f"{sheet_link(sid, name)}: not read yet."
    shown = {"ok": "✅ ok", "warn": "🟡 warns", "fail": "🔴 failing", "error": "🔴 cannot be read"}
    why = why_bad(sid, record, state.dlq.get(sid)) if record.health != "ok" else ""
    read = f" (read {utc_text(record.last_checked_at)})" if record.last_checked_at else ""
    said = f"{sheet_link(sid, name)} {shown.get(record.health, record.health)}{read}"
    return f"{said}: {why}" if why else said
