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
from datetime import UTC, datetime, timedelta
from typing import TypeVar
from urllib.parse import quote

from monitor.core.durations import format_duration
from monitor.core.errors import ErrorInfo
from monitor.engine.health import Finding
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


# ---- escaping and small renderers --------------------------------------------------------------


def esc(value: object, limit: int = MAX_TEXT) -> str:
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
    return f'<a href="{html.escape(url, quote=True)}">{esc(name or spreadsheet_id, MAX_NAME)}</a>'


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "an unknown time"
    return format_duration(timedelta(seconds=max(seconds, 0)))


def utc_text(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else "an unknown time"


def findings_text(findings: Sequence[Finding], limit: int = 2) -> str:
    """'check: message (Sheet!A1, Sheet!B2 +3)' for the first ``limit`` findings, then '+N more'."""
    parts = []
    for finding in findings[:limit]:
        text = f"{esc(finding.check, 80)}: {esc(finding.message)}"
        cells = finding.cells
        # The checks' messages already name their first cells; list them only when they do not.
        if cells and cells[0] not in finding.message:
            shown = ", ".join(esc(cell, 60) for cell in cells[:MAX_CELLS])
            more = f" +{len(cells) - MAX_CELLS}" if len(cells) > MAX_CELLS else ""
            text += f" ({shown}{more})"
        parts.append(text)
    if len(findings) > limit:
        parts.append(f"+{len(findings) - limit} more findings")
    return "; ".join(parts)


def error_text(error: ErrorInfo) -> str:
    """'permanent 404: Requested entity was not found at Sheet1!A1'."""
    head = " ".join(esc(part, 40) for part in (error.error_class, error.http_status) if part is not None)
    message = esc(error.message)
    # Google's 400 already names the range ("Unable to parse range: X"); say it only when it does not.
    where = f" at {esc(error.range, 80)}" if error.range and error.range not in error.message else ""
    return f"{head}: {message}{where}" if head else f"{message}{where}"


def listed(items: Sequence[T], max_items: int, line: Callable[[T], str]) -> list[str]:
    """The lines of the first ``max_items`` items, then "+K more" for the rest: a list stays
    readable on a phone (and the rest are never rendered)."""
    shown = [line(item) for item in items[:max_items]]
    if len(items) > max_items:
        shown.append(f"+{len(items) - max_items} more")
    return shown


def fingerprint(data: object) -> str:
    """A short stable hash of JSON-able data: the same content gives the same message key."""
    text = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---- splitting -----------------------------------------------------------------------------------


def messages_for(key: str, text: str, limit: int = TELEGRAM_MAX_LENGTH) -> list[Message]:
    """``text`` as one message under ``key``, or as numbered pieces ("key#2/3") when too long."""
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
