"""Events -> grouped HTML messages for people: alerts, reminders, round summaries, the daily digest.

Pure: every function takes ``now`` and plain data, and nothing here knows how a message travels
(``monitor.telegram`` sends, ``monitor.outbox`` keeps them until sent). Every name and value from a
spreadsheet, the config or Google goes through ``html.escape``; the only markup is ours.

The alert state is one plain dict stored by the caller in the state file::

    {"alerted": {spreadsheet_id: {"at": iso, "name": str}},   # alerted or reminded, still bad
     "last_digest_at": iso | None, "summarized_round": round id | None,
     "round": {"id": round id, "changes": int},                # alert-worthy events this round
     "reads_since_digest": int, "counted_run": run id}         # Google reads, for the digest

Messages are at most ``max_length`` characters of HTML source (Telegram counts the text after
parsing, which is never longer, so the source bound is the safe one).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from urllib.parse import quote
from zoneinfo import ZoneInfo

from monitor.core.durations import format_duration
from monitor.core.timefmt import format_utc, parse_utc
from monitor.engine.health import BAD, ERROR, FAIL, OK, UNKNOWN, WARN
from monitor.state import events as ev

TELEGRAM_MAX_LENGTH = 4096
SHEET_URL = "https://docs.google.com/spreadsheets/d/{}"
SUMMARY_MODES = ("on_change", "every_round", "off")
_MAX_TEXT = 300  # one finding's message or one error's text, before escaping: keeps lines short
_MAX_NAME = 150
_MAX_CELLS = 5  # cell references shown per finding; the rest become "+N"


@dataclass(frozen=True)
class AlertSettings:
    """What the CLI fills in from the config's [alerts] table; defaults with their reason."""

    max_items: int = 25  # a grouped message lists this many items, then "+K more": readable on a phone
    reminder_every: timedelta = timedelta(hours=4)  # slow enough not to be muted by the team
    summary: str = "on_change"  # after a round: on_change | every_round | off
    digest_at: time | None = time(9, 0)  # local time of the daily digest; None: no digest
    timezone: str = "UTC"  # IANA name the digest time is read in; stored times stay UTC
    max_length: int = TELEGRAM_MAX_LENGTH

    def __post_init__(self) -> None:
        if self.summary not in SUMMARY_MODES:
            raise ValueError(f"summary must be one of {SUMMARY_MODES}, not {self.summary!r}")
        if self.max_items < 1 or self.max_length < 200:
            raise ValueError("max_items must be >= 1 and max_length >= 200")
        ZoneInfo(self.timezone)  # raises for an unknown zone, at config time rather than at 9:00

    @classmethod
    def from_config(cls, alerts_config: object, **overrides: object) -> AlertSettings:
        """From ``Config.alerts`` (monitor.config.AlertsConfig: summary, digest_at, timezone,
        reminder_every); the config has already validated every value."""
        return cls(
            summary=alerts_config.summary,
            digest_at=alerts_config.digest_at,
            timezone=alerts_config.timezone,
            reminder_every=alerts_config.reminder_every,
            **overrides,
        )


@dataclass(frozen=True)
class Message:
    """One message; ``key`` is stable for the same content, so a second enqueue is a no-op."""

    key: str
    text: str  # Telegram HTML


@dataclass(frozen=True)
class _Item:
    rank: int  # lower first: what needs a human most goes on top
    category: str  # counted in the headline
    html: str
    spreadsheet_id: str | None = field(default=None, compare=False)


# ---- escaping and small renderers --------------------------------------------------------------


def esc(value: object, limit: int = _MAX_TEXT) -> str:
    """Escape any value for Telegram HTML, shortened first so an escape is never cut in half."""
    text = "" if value is None else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=True)


def sheet_url(spreadsheet_id: str) -> str:
    """The spreadsheet's address in Google Sheets (the id quoted: it comes from a config or state)."""
    return SHEET_URL.format(quote(spreadsheet_id, safe=""))


def sheet_link(spreadsheet_id: str, name: str | None) -> str:
    url = sheet_url(spreadsheet_id)
    return f'<a href="{html.escape(url, quote=True)}">{esc(name or spreadsheet_id, _MAX_NAME)}</a>'


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "an unknown time"
    return format_duration(timedelta(seconds=max(seconds, 0)))


def findings_text(findings: Iterable[dict], limit: int = 2) -> str:
    """'check: message (Sheet!A1, Sheet!B2 +3)' for the first ``limit`` findings, then '+N more'."""
    findings = list(findings)
    parts = []
    for finding in findings[:limit]:
        text = f"{esc(finding.get('check'), 80)}: {esc(finding.get('message'))}"
        cells = list(finding.get("cells") or [])
        # The checks' messages already name their first cells; list them only when they do not.
        if cells and cells[0] not in str(finding.get("message") or ""):
            shown = ", ".join(esc(cell, 60) for cell in cells[:_MAX_CELLS])
            more = f" +{len(cells) - _MAX_CELLS}" if len(cells) > _MAX_CELLS else ""
            text += f" ({shown}{more})"
        parts.append(text)
    if len(findings) > limit:
        parts.append(f"+{len(findings) - limit} more findings")
    return "; ".join(parts)


def _error_text(error: dict) -> str:
    head = " ".join(
        esc(part, 40)
        for part in (error.get("error_class"), error.get("http_status"))
        if part is not None
    )
    message = esc(error.get("message"))
    bad_range = error.get("range")
    # Google's 400 already names the range ("Unable to parse range: X"); say it only when it does not.
    where = f" at {esc(bad_range, 80)}" if bad_range and bad_range not in str(error.get("message")) else ""
    return f"{head}: {message}{where}" if head else f"{message}{where}"


def _utc_text(iso: str | None) -> str:
    return parse_utc(iso).strftime("%Y-%m-%d %H:%M UTC") if iso else "an unknown time"


# ---- one run's events -> one grouped message ---------------------------------------------------


def _item(event: dict) -> _Item | None:
    """The line an event contributes, or None for events people need not hear about."""
    kind, details = event["kind"], event.get("details") or {}
    sid = event.get("spreadsheet_id")
    link = sheet_link(sid, event.get("name")) if sid else ""
    if kind == ev.HEALTH_CHANGED:
        to, previous = details.get("to"), details.get("from")
        found = findings_text(details.get("findings") or [])
        if to in BAD:
            verb = "is failing" if to == FAIL else "could not be checked"
            return _Item(10, "failing", f"🔴 {link} {verb}{': ' + found if found else ''}", sid)
        if previous in BAD:
            after = f"after {duration_text(details.get('down_for_seconds'))}"
            still = f", still warns: {found}" if to == WARN and found else ""
            return _Item(50, "recovered", f"✅ {link} recovered {after}{still}", sid)
        if to == WARN:
            return _Item(20, "warning", f"🟡 {link} warns: {found}", sid)
        if to == OK and previous == WARN:
            return _Item(50, "recovered", f"✅ {link} is ok again", sid)
        return None
    if kind == ev.DEAD_LETTERED:
        attempts = details.get("attempts")
        tries = f" after {esc(attempts)} attempt{'s' * (attempts != 1)}" if attempts else ""
        text = f"🔴 {link} could not be read{tries}: {_error_text(details.get('error') or {})}"
        return _Item(10, "failing", text, sid)
    if kind == ev.RECOVERED:
        if details.get("api"):
            since = f" (degraded since {_utc_text(details.get('degraded_since'))})"
            return _Item(50, "recovered", f"✅ Google API answers again{since}", None)
        after = f"after {duration_text(details.get('down_for_seconds'))}"
        found = findings_text(details.get("findings") or [])
        if details.get("health") == FAIL:  # readable again, but its checks fail: still bad
            text = f"🔴 {link} can be read again {after} but is failing: {found}"
            return _Item(10, "failing", text, sid)
        warns = f", still warns: {found}" if details.get("health") == WARN and found else ""
        return _Item(50, "recovered", f"✅ {link} can be read again {after}{warns}", sid)
    if kind == ev.BREAKER_OPENED:
        failures = details.get("consecutive_failures")
        probe = details.get("probe_at")
        text = f"⏸ {link}: checks paused after {esc(failures)} failures in a row"
        if probe:
            text += f", next try {_utc_text(probe)}"
        return _Item(30, "paused", text, sid)
    if kind == ev.BREAKER_CLOSED:
        down = details.get("down_seconds")
        return _Item(50, "resumed", f"▶ {link}: checks resumed after {duration_text(down)}", sid)
    if kind == ev.API_DEGRADED:
        text = (
            f"🟠 Google API degraded: {esc(details.get('failing_in_a_row'))} spreadsheets failed "
            "in a row; the run stopped early and the next one probes first"
        )
        return _Item(0, "API degraded", text)
    if kind == ev.FALLING_BEHIND:
        text = (
            f"🐢 Falling behind: the round started {_utc_text(details.get('round_started_at'))} "
            f"has {esc(details.get('done'))} of {esc(details.get('total'))} spreadsheets done"
        )
        return _Item(1, "falling behind", text)
    if kind == ev.CRASH_RECOVERED:
        text = (
            f"♻️ The previous run died mid-round: {esc(details.get('reclaimed'))} tasks taken "
            f"over, {esc(details.get('poisoned'))} given up as poison"
        )
        return _Item(2, "crash recovered", text)
    if kind == ev.STATE_RESTORED:
        return _Item(2, "state restored", "♻️ The state file was unreadable; the last good copy was used")
    if kind == ev.DELIVERY_HALTED:
        # Enqueued behind the messages held by the halt (the outbox keeps order), so it arrives
        # after them and says why they came late.
        return _Item(
            3,
            "delivery halted",
            f"📵 Telegram refused messages since {_utc_text(details.get('since'))}: "
            f"{esc(details.get('description'), 200)}; the messages held meanwhile came late, above this one",
        )
    if kind == ev.CONFIG_PROBLEM:
        what = esc(details.get("message") or details.get("range") or "see the logs")
        return _Item(15, "config problem", f"⚙️ {link}: config problem: {what}", sid)
    return None


def _collapse(events: Iterable[dict], muted: frozenset[str]) -> list[dict]:
    """One event per spreadsheet and topic (the latest wins), system events once per kind."""
    latest: dict[tuple, dict] = {}
    for event in events:
        sid = event.get("spreadsheet_id")
        if sid is not None and sid in muted:
            continue  # muted spreadsheets alert nobody
        kind = event["kind"]
        if sid is None:
            key: tuple = ("system", kind)
        elif kind in (ev.BREAKER_OPENED, ev.BREAKER_CLOSED):
            key = ("breaker", sid)
        else:
            key = ("sheet", sid)
        latest.pop(key, None)  # re-insert so the order follows the latest event
        latest[key] = event
    return list(latest.values())


def alert_items(events: Iterable[dict], muted: frozenset[str] = frozenset()) -> list[_Item]:
    items = [item for event in _collapse(events, muted) if (item := _item(event)) is not None]
    return sorted(items, key=lambda item: item.rank)  # stable: same rank keeps event order


def compose(
    events: Iterable[dict],
    sheets_health: Mapping[str, object],
    now: datetime,
    settings: AlertSettings,
    muted: Iterable[str] = (),
) -> list[Message]:
    """One run's events as ONE grouped message (split only when longer than ``max_length``).

    Headline with counts and how many spreadsheets are failing now, then the first ``max_items``
    items, then "+K more". Events of muted spreadsheets are dropped. No alert-worthy event: [].
    """
    events = list(events)
    muted = frozenset(muted)
    items = alert_items(events, muted)
    if not items:
        return []
    counts: dict[str, int] = {}
    for item in items:
        counts[item.category] = counts.get(item.category, 0) + 1
    headline = ", ".join(f"{count} {category}" for category, count in counts.items())
    failing_now = sum(
        1 for sid, record in sheets_health.items() if sid not in muted and _health(record) in BAD
    )
    lines = [f"<b>sheet-monitor: {headline}</b>", f"Failing now: {failing_now}", ""]
    lines += [item.html for item in items[: settings.max_items]]
    if len(items) > settings.max_items:
        lines.append(f"+{len(items) - settings.max_items} more")
    key = "alert:" + _fingerprint([(e["kind"], e.get("at"), e.get("spreadsheet_id")) for e in events])
    return messages_for(key, "\n".join(lines), settings.max_length)


def _health(record: object) -> str:
    return record.get("health", UNKNOWN) if isinstance(record, dict) else getattr(record, "health", UNKNOWN)


def _fingerprint(data: object) -> str:
    text = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---- alert memory and reminders -----------------------------------------------------------------


def note_alerts(alert_state: dict, events: Iterable[dict], now: datetime, muted: Iterable[str] = ()) -> int:
    """Remember which spreadsheets people were told are bad (and forget recovered ones), and count
    this round's alert-worthy events. Returns how many alert-worthy events there were."""
    alerted = alert_state.setdefault("alerted", {})
    worthy = 0
    for event in _collapse(events, frozenset(muted)):
        item = _item(event)
        if item is None:
            continue
        worthy += 1
        sid = event.get("spreadsheet_id")
        if sid is None or item.category in ("paused", "resumed"):
            continue
        if item.category in ("failing", "config problem"):
            alerted[sid] = {"at": format_utc(now), "name": event.get("name") or sid}
        elif item.category == "recovered":
            alerted.pop(sid, None)
    return worthy


def due_reminders(
    sheets: Mapping[str, object],
    alert_state: dict,
    now: datetime,
    every: timedelta,
    muted: Iterable[str] = (),
) -> list[str]:
    """Spreadsheets still failing whose last alert or reminder is at least ``every`` old, sorted.

    A failing spreadsheet people were never told about (alert state lost, or unmuted while bad)
    counts from when it went bad, so it is reminded at most once per ``every`` too.
    """
    alerted = alert_state.get("alerted", {})
    muted = frozenset(muted)
    due = []
    for sid, record in sheets.items():
        if sid in muted or _health(record) not in BAD:
            continue
        last = (alerted.get(sid) or {}).get("at") or _field(record, "down_since") or _field(record, "since")
        if last is None or now - parse_utc(last) >= every:
            due.append(sid)
    return sorted(due)


def mark_reminded(
    alert_state: dict, spreadsheet_ids: Iterable[str], names: Mapping[str, str], now: datetime
) -> None:
    alerted = alert_state.setdefault("alerted", {})
    for sid in spreadsheet_ids:
        alerted[sid] = {
            "at": format_utc(now),
            "name": names.get(sid) or (alerted.get(sid) or {}).get("name") or sid,
        }


def forget_healthy(alert_state: dict, sheets: Mapping[str, object]) -> None:
    """Forget spreadsheets no longer bad or no longer configured (keeps the memory bounded)."""
    alerted = alert_state.setdefault("alerted", {})
    for sid in [sid for sid in alerted if sid not in sheets or _health(sheets[sid]) not in BAD]:
        del alerted[sid]


def _field(record: object, name: str) -> str | None:
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


def _failing_line(sid: str, record: object, names: Mapping[str, str], now: datetime) -> str:
    since = _field(record, "down_since") or _field(record, "since")
    how_long = f" for {duration_text((now - parse_utc(since)).total_seconds())}" if since else ""
    found = findings_text(_field(record, "findings") or [], limit=1)
    verb = "failing" if _health(record) == FAIL else "not readable"
    return f"🔴 {sheet_link(sid, names.get(sid))} {verb}{how_long}{': ' + found if found else ''}"


def compose_reminder(
    spreadsheet_ids: list[str],
    sheets: Mapping[str, object],
    names: Mapping[str, str],
    now: datetime,
    settings: AlertSettings,
) -> list[Message]:
    if not spreadsheet_ids:
        return []
    lines = [f"<b>sheet-monitor reminder: {len(spreadsheet_ids)} still failing</b>", ""]
    lines += [_failing_line(sid, sheets[sid], names, now) for sid in spreadsheet_ids[: settings.max_items]]
    if len(spreadsheet_ids) > settings.max_items:
        lines.append(f"+{len(spreadsheet_ids) - settings.max_items} more")
    return messages_for(f"reminder:{format_utc(now)}", "\n".join(lines), settings.max_length)


# ---- round summaries and the daily digest ------------------------------------------------------


@dataclass(frozen=True)
class Overview:
    """What a summary or digest reports besides the failing list; the caller gathers it."""

    sheets: Mapping[str, object]
    names: Mapping[str, str]
    dlq_size: int = 0
    open_breakers: int = 0
    muted: frozenset[str] = frozenset()
    reads: int | None = None  # read requests to Google since the last digest, when known


def _counts_lines(overview: Overview) -> list[str]:
    counts = {OK: 0, WARN: 0, FAIL: 0, ERROR: 0, UNKNOWN: 0}
    for sid, record in overview.sheets.items():
        if sid not in overview.muted:
            counts[_health(record)] = counts.get(_health(record), 0) + 1
    lines = [
        f"ok {counts[OK]} · warn {counts[WARN]} · fail {counts[FAIL]} · error {counts[ERROR]}"
        + (f" · not yet checked {counts[UNKNOWN]}" if counts[UNKNOWN] else ""),
        f"dead letters {overview.dlq_size} · breakers open {overview.open_breakers}"
        + (f" · muted {len(overview.muted)}" if overview.muted else ""),
    ]
    if overview.reads is not None:
        lines.append(f"read requests since the last digest {overview.reads}")
    return lines


def _failing_ids(overview: Overview) -> list[str]:
    """Bad and unmuted spreadsheets, longest-failing first."""
    bad = [sid for sid, r in overview.sheets.items() if sid not in overview.muted and _health(r) in BAD]
    return sorted(bad, key=lambda sid: (_field(overview.sheets[sid], "down_since") or "", sid))


def summary_due(mode: str, round_complete: bool, round_id: str | None, alert_state: dict) -> bool:
    """A summary after a completed round not yet summarised: always (every_round), or only when the
    round had alert-worthy events (on_change)."""
    if mode == "off" or not round_complete or round_id is None:
        return False
    if alert_state.get("summarized_round") == round_id:
        return False
    if mode == "every_round":
        return True
    tracked = alert_state.get("round") or {}
    return tracked.get("id") == round_id and tracked.get("changes", 0) > 0


def compose_summary(
    round_id: str, overview: Overview, now: datetime, settings: AlertSettings
) -> list[Message]:
    failing = _failing_ids(overview)
    lines = [
        f"<b>sheet-monitor: round finished</b> ({esc(round_id, 40)})",
        *_counts_lines(overview),
    ]
    if failing:
        lines += ["", f"Failing now ({len(failing)}):"]
        lines += [
            _failing_line(sid, overview.sheets[sid], overview.names, now)
            for sid in failing[: settings.max_items]
        ]
        if len(failing) > settings.max_items:
            lines.append(f"+{len(failing) - settings.max_items} more")
    return messages_for(f"summary:{round_id}", "\n".join(lines), settings.max_length)


def digest_slot(now: datetime, digest_at: time, tz: str) -> datetime:
    """The latest scheduled digest moment at or before ``now``, in UTC.

    The wall-clock time is read in ``tz`` on each local date. A time skipped by a DST jump (02:30
    on a spring-forward night) happens at the same distance after the jump (03:30); a time that
    occurs twice (autumn) counts once, at its first occurrence (``fold=0``).
    """
    zone = ZoneInfo(tz)
    local_now = now.astimezone(zone)
    for days_back in (0, 1, 2):  # 2: a DST shift can push yesterday's slot past "now" by an hour
        day = local_now.date() - timedelta(days=days_back)
        slot = datetime.combine(day, digest_at.replace(tzinfo=None), tzinfo=zone).astimezone(UTC)
        if slot <= now:
            return slot
    raise AssertionError("unreachable: a slot two days back is always in the past")


def digest_due(now: datetime, last_digest_at: str | None, digest_at: time | None, tz: str) -> bool:
    """Is a digest owed? Yes when no digest was sent since the latest scheduled moment. After an
    outage of several days, one digest (not one per missed day). Pure: same inputs, same answer."""
    if digest_at is None:
        return False
    slot = digest_slot(now, digest_at, tz)
    return last_digest_at is None or parse_utc(last_digest_at) < slot


def compose_digest(overview: Overview, now: datetime, settings: AlertSettings) -> list[Message]:
    """The daily digest: what is still failing first (longest first), then the counts."""
    failing = _failing_ids(overview)
    local = now.astimezone(ZoneInfo(settings.timezone))
    lines = [
        f"<b>sheet-monitor daily digest</b> {local:%Y-%m-%d %H:%M} {esc(settings.timezone, 40)}",
        "",
    ]
    if failing:
        lines.append(f"Still failing ({len(failing)}):")
        lines += [
            _failing_line(sid, overview.sheets[sid], overview.names, now)
            for sid in failing[: settings.max_items]
        ]
        if len(failing) > settings.max_items:
            lines.append(f"+{len(failing) - settings.max_items} more")
    else:
        lines.append("Nothing is failing.")
    lines += ["", *_counts_lines(overview)]
    slot = digest_slot(now, settings.digest_at or time(0), settings.timezone)
    return messages_for(f"digest:{format_utc(slot)}", "\n".join(lines), settings.max_length)


# ---- splitting -----------------------------------------------------------------------------------


def messages_for(key: str, text: str, limit: int = TELEGRAM_MAX_LENGTH) -> list[Message]:
    parts = split_message(text, limit)
    if len(parts) == 1:
        return [Message(key, parts[0])]
    return [Message(f"{key}#{n}/{len(parts)}", part) for n, part in enumerate(parts, start=1)]


def split_message(text: str, limit: int = TELEGRAM_MAX_LENGTH) -> list[str]:
    """Pieces of at most ``limit`` characters, cut between lines; a line longer than ``limit`` is
    cut between tokens, never inside a tag or an entity, closing open tags and reopening them in
    the next piece so each piece is valid HTML on its own."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.split("\n"):
        for chunk in _cut_line(line, limit) if len(line) > limit else [line]:
            extra = len(chunk) + (1 if current else 0)
            if current and size + extra > limit:
                pieces.append("\n".join(current))
                current, size = [], 0
                extra = len(chunk)
            current.append(chunk)
            size += extra
    if current:
        pieces.append("\n".join(current))
    return [piece for piece in (p.strip("\n") for p in pieces) if piece.strip()] or [""]


_TOKEN = re.compile(r"<[^>]*>|&#?\w+;|.", re.DOTALL)
_TAG = re.compile(r"<(/?)([a-zA-Z0-9-]+)")


def _cut_line(line: str, limit: int) -> list[str]:
    chunks: list[str] = []
    current = ""
    open_tags: list[tuple[str, str]] = []  # (name, opening tag) of tags open at this point

    def closing() -> str:
        return "".join(f"</{name}>" for name, _ in reversed(open_tags))

    for token in _TOKEN.findall(line):
        if len(current) + len(token) + len(closing()) > limit and current:
            chunks.append(current + closing())
            current = "".join(tag for _, tag in open_tags)
        current += token
        tag = _TAG.match(token) if token.startswith("<") else None
        if tag:
            if tag.group(1):
                if open_tags and open_tags[-1][0] == tag.group(2).lower():
                    open_tags.pop()
            elif not token.endswith("/>"):
                open_tags.append((tag.group(2).lower(), token))
    if current:
        chunks.append(current)
    return chunks
