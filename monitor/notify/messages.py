"""The pieces every message is made of: escaping, links, findings and errors as text, lists cut at
``max_items``, and splitting a long message into Telegram-sized pieces.

Every name and value from a spreadsheet, the config or Google goes through :func:`esc`; the only
markup is ours. Messages are at most ``max_length`` characters of HTML source (Telegram counts the
text after parsing, which is never longer, so the source bound is the safe one).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar
from urllib.parse import quote

from monitor.core.a1 import Ref, sheet_prefix
from monitor.core.durations import human_duration
from monitor.core.errors import ErrorInfo
from monitor.core.zones import wall_clock
from monitor.engine.health import Finding
from monitor.notify.documents import Keyboard
from monitor.notify.settings import TELEGRAM_MAX_LENGTH

SHEET_URL = "https://docs.google.com/spreadsheets/d/{}"
MAX_TEXT = 300  # one finding's message or one error's text, before escaping: keeps lines short
MAX_NAME = 150
MAX_CELLS = 5  # cell references shown per finding; the rest become "+N"

T = TypeVar("T")


@dataclass(frozen=True)
class Message:
    """One message; ``key`` is stable for the same content, so a second enqueue is a no-op."""

    key: str
    text: str  # Telegram HTML
    keyboard: Keyboard = ()  # the buttons under it (monitor.notify.buttons)


# ---- escaping and small renderers --------------------------------------------------------------


def esc(value: object, limit: int = MAX_TEXT) -> str:
    """Escape any value for Telegram HTML, shortened first (to whole sentences, or words: see
    :func:`sentences`) so an escape is never cut in half."""
    text = "" if value is None else str(value)
    return html.escape(sentences(text, limit), quote=True)


def sentences(text: str, limit: int) -> str:
    """``text`` when it fits in ``limit`` characters, else its whole sentences that do, then "…": a
    message never ends in the middle of a sentence (or of a command it tells someone to type). A
    first sentence longer than ``limit`` is cut at a space."""
    if len(text) <= limit:
        return text
    room = limit - 1  # the "…"
    ends = [match.end() for match in _SENTENCE_END.finditer(text) if match.end() <= room]
    if ends:
        return text[: ends[-1]].rstrip() + " …"
    cut = text.rfind(" ", 0, room)
    return text[: cut if cut > 0 else room].rstrip() + "…"


_SENTENCE_END = re.compile(r"[.!?;](?=\s)")


def sheet_url(spreadsheet_id: str) -> str:
    """The spreadsheet's address in Google Sheets (the id quoted: it comes from a config or state)."""
    return SHEET_URL.format(quote(spreadsheet_id, safe=""))


def tab_url(spreadsheet_id: str, gid: int, cell: str | None = None) -> str:
    """The address that opens the tab ``gid`` (its ``sheetId``) at ``cell``, as the Sheets UI's own
    "Get link to this cell" writes it: ``/edit#gid=123&range=H214``."""
    where = f"&range={quote(cell, safe='')}" if cell else ""
    return f"{sheet_url(spreadsheet_id)}/edit#gid={gid}{where}"


def sheet_link(spreadsheet_id: str, name: str | None) -> str:
    return link(sheet_url(spreadsheet_id), esc(name or spreadsheet_id, MAX_NAME))


def link(url: str, html_text: str) -> str:
    return f'<a href="{html.escape(url, quote=True)}">{html_text}</a>'


def duration_text(seconds: float | None) -> str:
    """How long, in words: "2 hours and 5 minutes" (``monitor.core.durations.human_duration``)."""
    if seconds is None:
        return "an unknown time"
    return human_duration(max(seconds, 0))


def utc_text(moment: datetime | None) -> str:
    """A moment as every message shows one: "2026-03-02 12:00 UTC" (a spreadsheet's own dates are
    shown on its clock the same way, "2026-03-02 15:00 UTC+3": ``monitor.core.zones.wall_clock``)."""
    return wall_clock(moment, UTC) if moment else "an unknown time"


def since_text(moment: datetime | None, now: datetime) -> str:
    """"2026-03-02 12:00 UTC (2 hours ago)"."""
    if moment is None:
        return "an unknown time"
    return f"{utc_text(moment)} ({duration_text((now - moment).total_seconds())} ago)"


# ---- findings: the tab and the problem in words ---------------------------------------------------


def findings_text(findings: Sequence[Finding], limit: int = 2, spreadsheet_id: str | None = None) -> str:
    """"Stock: 3 cells show #REF! (H214, H215, H216)" for the first ``limit`` findings, then "+N more
    problems". The tab leads, as people find it in the spreadsheet; a check the admin named is named
    after it. With the tab's id known (the finding's ``gid``) and ``spreadsheet_id``, the tab links
    to its first bad cell."""
    parts = [_finding_text(finding, spreadsheet_id) for finding in findings[:limit]]
    if len(findings) > limit:
        parts.append(f"+{len(findings) - limit} more problems")
    return "; ".join(parts)


def _finding_text(finding: Finding, spreadsheet_id: str | None) -> str:
    tab = tab_of(finding)
    message = finding.message
    if tab is not None:  # on the tab's own line, "Stock!H214" is just "H214"
        message = message.replace(sheet_prefix(tab), "")
    cells = tuple(_on_line(cell, tab) for cell in finding.cells)
    text = esc(message)
    # The checks' messages already name their first cells; list them only when they do not.
    if cells and cells[0] not in message:
        shown = ", ".join(esc(cell, 60) for cell in cells[:MAX_CELLS])
        more = f" +{len(cells) - MAX_CELLS}" if len(cells) > MAX_CELLS else ""
        text += f" ({shown}{more})"
    lead = _tab_lead(tab, cells[0] if cells else None, finding.gid, spreadsheet_id)
    if not _is_default_name(finding) and finding.check.casefold() != (tab or "").casefold():
        named = f"“{esc(finding.check, 80)}”"
        lead = f"{lead}, {named}" if lead else named
    return f"{lead}: {text}" if lead else text


def _on_line(cell: Ref, tab: str | None) -> str:
    """A cell as its finding's line names it: alone on the line's own tab (a whole tab still by
    its name), else with its tab."""
    return cell.local if tab is not None and cell.sheet == tab and cell.local else str(cell)


def _tab_lead(tab: str | None, cell: str | None, gid: int | None, spreadsheet_id: str | None) -> str:
    """The line's tab, linked to ``cell`` (as the line names it) when the tab's id is known."""
    if tab is None:
        return ""
    if gid is None or spreadsheet_id is None:
        # Without the tab's id a link can open only the spreadsheet (its first tab), which the
        # spreadsheet's name already links to. The id comes with the time zone, which is asked only
        # for spreadsheets with a freshness check on a range: asking it for every spreadsheet would
        # cost a read each (monitor.engine.zone_refresh).
        return esc(tab, 80)
    return link(tab_url(spreadsheet_id, gid, cell), esc(tab, 80))


def tab_of(finding: Finding) -> str | None:
    """The tab a finding is on: its first cell's ("Stock!H214"), else its range's when the check was
    named after it ("not_empty Stock!A2:A"), as the line then says nothing else of where; None for
    a check of the file (its modified time) or one an admin named without a cell to go by."""
    if finding.cells and finding.cells[0].sheet is not None:
        return finding.cells[0].sheet
    return finding.tab if _is_default_name(finding) else None


def _is_default_name(finding: Finding) -> bool:
    # A check written without a name is named "<kind> [aggregate] <range or source>"
    # (``monitor.checks.base.default_name``): that name says nothing the line does not.
    return finding.check == finding.kind or finding.check.startswith(finding.kind + " ")


def error_text(error: ErrorInfo) -> str:
    """Google's words: '404: Requested entity was not found at Sheet1!A1'. (How the monitor classed
    the failure, "permanent" or "transient", is for its logs: the alert already says what it means.)"""
    head = esc(error.http_status, 40) if error.http_status is not None else ""
    message = esc(error.message)
    # Google's 400 already names the range ("Unable to parse range: X"); say it only when it does not.
    where = f" at {esc(error.range, 80)}" if error.range and error.range not in error.message else ""
    return f"{head}: {message}{where}" if head else f"{message}{where}"


def listed(items: Sequence[T], max_items: int, line: Callable[[T], str],
           more: Callable[[int], str] | None = None) -> list[str]:
    """The lines of the first ``max_items`` items, then "+K more" (or ``more(K)``) for the rest: a list
    stays readable on a phone (and the rest are never rendered)."""
    shown = [line(item) for item in items[:max_items]]
    hidden = len(items) - max_items
    if hidden > 0:
        shown.append(more(hidden) if more else f"+{hidden} more")
    return shown


def more_line(report_url: str | None, status: str | None = None, *, of_sheets: bool = True
              ) -> Callable[[int], str]:
    """'+42 more: see the status page or `sheet-monitor sheets`': where a person
    finds what a list of spreadsheets leaves out (the page linked when ``[report] url`` says where it
    is). ``of_sheets`` False: the list held other lines too (an alert's), which no page repeats."""
    command = "<code>sheet-monitor sheets" + (f" --status {status}" if status else "") + "</code>"
    page = link(report_url, "the status page") if report_url else None

    def more(hidden: int) -> str:
        if not of_sheets:
            where = f"{page} and {command} show" if page else f"{command} shows"
            return f"+{hidden} more ({where} where each spreadsheet stands)"
        if page:
            return f"+{hidden} more: see {page} or {command}"
        return f"+{hidden} more: {command} lists them all"

    return more


def fingerprint(data: object) -> str:
    """A short stable hash of JSON-able data: the same content gives the same message key."""
    text = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---- splitting -----------------------------------------------------------------------------------


def messages_for(key: str, text: str, limit: int = TELEGRAM_MAX_LENGTH, keyboard: Keyboard = ()
                 ) -> list[Message]:
    """``text`` as one message under ``key``, or as numbered pieces ("key#2/3") when too long; the
    buttons go under the last piece (under its whole text, as a reader meets them)."""
    parts = split_message(text, limit)
    if len(parts) == 1:
        return [Message(key, parts[0], keyboard)]
    return [Message(f"{key}#{n}/{len(parts)}", part, keyboard if n == len(parts) else ())
            for n, part in enumerate(parts, start=1)]


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
