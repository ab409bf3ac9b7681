"""Many new problems at once (a first round of 750 spreadsheets, a template broken everywhere): one
short message instead of pages of lines.

A person reads it on a phone: what changed, how many fail now, the problems counted by kind, the
worst few by name, and where the whole list is (the status page at ``[report] url``, and
``sheet-monitor sheets``). Every problem is still remembered as told (the reminders and the digest
name them later, a few at a time), only not listed here one by one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from monitor.core.remedies import problem, problem_kind
from monitor.engine import unreadable
from monitor.engine.events import DeadLettered, Event, HealthChanged, ReadableAgain, SheetEvent
from monitor.engine.fleet import Fleet
from monitor.engine.health import FAIL, WARN
from monitor.notify.counts import counts_in_words
from monitor.notify.messages import esc, findings_text, listed, more_line, sheet_link
from monitor.notify.render import FAILING, WARNING, Item, headline
from monitor.notify.settings import AlertSettings

WORST_SHOWN = 5  # by name; the rest are counted by kind and listed where the message points
PROBLEMS = frozenset({FAILING, WARNING})
# A failing check's kind as a problem people recognise; kinds not here go by their own name.
_KIND_WORDS = {"formula_errors": "formula errors", "freshness": "stale data", "threshold": "out of bounds",
               "not_empty": "empty", "row_count": "row count", "headers": "headers", "missing": "blanks",
               "duplicates": "duplicates", "invalid": "invalid values", "change": "sudden change",
               "headers_changed": "headers changed", "cross_sheet": "cross-sheet mismatch",
               "import_access": "import refused"}
UNREADABLE = "cannot be read"  # a dead letter, or reads failing for too long


def is_flood(items: Sequence[Item], settings: AlertSettings) -> bool:
    """More new problems than one message should list one by one."""
    return sum(1 for item in items if item.category in PROBLEMS) > settings.flood_after


def flood_lines(pairs: Sequence[tuple[Event, Item]], fleet: Fleet, settings: AlertSettings
                ) -> tuple[list[str], list[str]]:
    """The short message's lines, from the ranked (event, line) pairs of an alert, and the
    spreadsheets it names (the worst few); its counts are the fleet's, so a round summary in the same
    message would say nothing more."""
    problems = sorted((event for event, item in pairs
                       if item.category in PROBLEMS and isinstance(event, SheetEvent)), key=_worst_first)
    lines = [f"<b>sheet-monitor: {headline(item for _, item in pairs)}</b>", counts_in_words(fleet.counts()),
             "", "By kind: " + _by_kind(problems), "", "Worst first:"]
    lines += listed(problems, WORST_SHOWN, _short_line, more_line(settings.report_url))
    others = [item.html for _, item in pairs if item.category not in PROBLEMS]
    if others:  # the few other things that happened (a breaker, Google degraded) stay listed
        lines += ["", *listed(others, settings.max_items, lambda html: html,
                              more_line(settings.report_url, of_sheets=False))]
    return lines, [event.spreadsheet_id for event in problems[:WORST_SHOWN]]


def _worst_first(event: SheetEvent) -> tuple[int, str]:
    """Cannot be read (access lost, deleted) before failing checks, failing before warning; by name."""
    health = event.current if isinstance(event, HealthChanged) else getattr(event, "health", FAIL)
    rank = 0 if isinstance(event, DeadLettered) else 2 if health == WARN else 1
    return rank, (event.name or event.spreadsheet_id).casefold()


def _kind_of(event: Event) -> str:
    findings = getattr(event, "findings", ())
    if isinstance(event, DeadLettered) or not findings or findings[0].kind == unreadable.KIND:
        return UNREADABLE
    return _KIND_WORDS.get(findings[0].kind, findings[0].kind.replace("_", " "))


def _by_kind(problems: Sequence[Event]) -> str:
    """'15 cannot be read (6 not shared, 5 not found, 4 tab or range missing) · 12 formula errors ·
    9 stale data': the most frequent first, the refusals of the unreadable ones inside their count."""
    counts = Counter(_kind_of(event) for event in problems)
    refusals = Counter(problem_kind(event.error) for event in problems if isinstance(event, DeadLettered))
    why = ", ".join(f"{count} {refusal}" for refusal, count in refusals.most_common())
    return " · ".join(f"{count} {esc(kind, 40)}" + (f" ({why})" if kind == UNREADABLE and why else "")
                      for kind, count in counts.most_common())


def _short_line(event: SheetEvent) -> str:
    """The spreadsheet, and its problem in a few words (its alert line also gives the fix and
    Google's words: the status page and `sheet-monitor sheets` show them)."""
    name = sheet_link(event.spreadsheet_id, event.name)
    if isinstance(event, DeadLettered):
        what = problem(event.error) or event.error.message
        return f"🔴 {name} cannot be read: {esc(what)}"
    found = findings_text(getattr(event, "findings", ()), limit=1, spreadsheet_id=event.spreadsheet_id)
    health = event.current if isinstance(event, HealthChanged) else getattr(event, "health", None)
    if isinstance(event, ReadableAgain) or health == FAIL:
        return f"🔴 {name} is failing: {found}"
    if health == WARN:
        return f"🟡 {name} warns: {found}"
    return f"🔴 {name} cannot be read{': ' + found if found else ''}"
