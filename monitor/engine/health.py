"""Per-spreadsheet health: the last verdict, since when, and which changes are worth an alert.

``health`` is the last real verdict (ok, warn, fail, error) or ``unknown`` before the first check.
Being skipped (breaker open, muted) is shown beside it, never instead of it, so that a spreadsheet
going error -> skipped -> error does not look like a recovery followed by a new failure. Records are
values: :func:`record_verdict` and :func:`record_skip` return a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import PlainSerializer, PlainValidator

from monitor.checks import CheckResult, Health
from monitor.core.a1 import A1Range, CellRef, Ref, parse_ref
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import Interned, document

OK, WARN, FAIL, ERROR, UNKNOWN = Health
SKIPPED = "skipped"  # shown instead of the health while the latest round skipped the spreadsheet
BAD = frozenset({FAIL, ERROR})
VERDICTS = (OK, WARN, FAIL, ERROR)
SkipReason = Literal["muted", "breaker_open"]


def _ref(value: Any) -> Ref:
    return value if isinstance(value, CellRef | A1Range) else parse_ref(value)


# A cell (or a range) kept in the state: its A1 text there, read back once as the value it was.
StoredRef = Annotated[Ref, PlainValidator(_ref), PlainSerializer(str, return_type=str)]


@document
class Finding:
    """A check that warned or failed, as people are told about it."""

    check: str
    kind: str
    status: Literal[Health.WARN, Health.FAIL]
    message: str
    cells: tuple[StoredRef, ...] = ()
    gid: int | None = None  # the ``sheetId`` of its first cell's tab, when known: a link opens that cell
    owner: str | None = None  # its check's own owner, named instead of the spreadsheet's
    tab: str | None = None  # the tab its check's range is on (None: the file's, or a named range's)

    def __post_init__(self) -> None:
        # Cells given as A1 text (an operator's tool, a test) are read once, here, as the rest are.
        if any(isinstance(cell, str) for cell in self.cells):
            object.__setattr__(self, "cells", tuple(_ref(cell) for cell in self.cells))

    @classmethod
    def of(cls, result: CheckResult, check: Any = None) -> Finding:
        """The finding of ``result``, which ``check`` (its check) judged."""
        return cls(result.check_name, result.kind, result.status, result.message, tuple(result.cells),
                   owner=result.owner, tab=range_tab(check))


def range_tab(check: Any) -> str | None:
    """The tab ``check``'s range names with its cells ("Stock!F2:F": Stock); None for a whole tab, a
    named range or no range."""
    a1 = getattr(check, "a1", None)
    return a1.sheet if a1 is not None and not a1.is_whole_sheet else None


@document
class Tab:
    """One tab of a spreadsheet: its title and its ``sheetId`` (the ``gid`` of a link to it)."""

    title: str
    gid: int


def located(findings: tuple[Finding, ...], tabs: tuple[Tab, ...]) -> tuple[Finding, ...]:
    """``findings`` with the id of each one's first cell's tab, where ``tabs`` knows it."""
    if not tabs:
        return findings
    ids = {tab.title: tab.gid for tab in tabs}
    return tuple(replace(finding, gid=ids.get(finding.cells[0].sheet)) if finding.cells else finding
                 for finding in findings)


@document
class Moment:
    """The newest moment a freshness check found at a read (``cell`` None: the file's modified time):
    all a later round needs to judge that check again without reading."""

    check: str
    at: UtcTime
    cell: StoredRef | None = None


@document
class Unreadable:
    """The reads of a spreadsheet failing since the last one that worked (``monitor.engine.unreadable``)."""

    since: UtcTime  # the first failed read of the streak
    tries: int  # failed reads in the streak
    failure: str  # the latest failure in a few words: "503 Service Unavailable"


# A spreadsheet keeps its verdict changes of the last ``keep`` (the status page's timeline), at most this
# many: a spreadsheet flapping every round would otherwise grow its record without bound. 48 is a
# change every 3.5 hours for a week; beyond it the oldest go, and the page starts its strip later.
VERDICT_CHANGES_KEPT = 48
# Its last reads' times (seconds, to the millisecond): the page shows the slow ones. A few are enough
# to tell a slow spreadsheet from a slow moment.
READ_TIMES_KEPT = 8
DEFAULT_KEEP = timedelta(days=7)  # [report] keep's default, for callers without a config (tests)


@document
class VerdictChange:
    """The health became ``health`` at ``at``."""

    at: UtcTime
    health: Health


@document
class SheetHealth:
    health: Health = UNKNOWN
    since: UtcTime | None = None  # when ``health`` last changed
    # When it was last judged: by a read, or again without one when that moved its verdict or findings
    # (an unchanged spreadsheet whose judgement stands is not rewritten each round: see read_at).
    last_checked_at: UtcTime | None = None
    skipped: SkipReason | None = None  # why the latest round skipped it, if it did
    findings: tuple[Finding, ...] = ()  # of the last check
    down_since: UtcTime | None = None  # first moment of the current bad episode (fail or error)
    # The last read that worked: when, which checks judged it (their fingerprint), and the moments its
    # freshness checks found. A spreadsheet Drive reports unchanged is judged again from these.
    read_at: UtcTime | None = None
    checks: Interned | None = None
    moments: tuple[Moment, ...] = ()
    # When Drive reported a change (or that it left our view) that no read has seen yet: cleared by
    # the next read that works. Marks are made as a round starts, when no read is in flight.
    changed_at: UtcTime | None = None
    # The spreadsheet's own time zone (``properties.timeZone``, as Google names it), in which its
    # dates are read, and from when a read asks for it again (``monitor.engine.zone_refresh``).
    time_zone: Interned | None = None
    zone_due: UtcTime | None = None
    # Its tabs' ids, asked with the time zone at no extra cost (the same request): links to a bad cell.
    tabs: tuple[Tab, ...] = ()
    # Its reads failing (transient, uncertain) since the last one that worked: after a while, that alone
    # makes it failing (``monitor.engine.unreadable``).
    unreadable: Unreadable | None = None
    # Its verdict changes within ``[report] keep`` (at most VERDICT_CHANGES_KEPT), oldest first, and
    # its last reads' times: the status page's history, kept in the record every read writes anyway.
    changes: tuple[VerdictChange, ...] = ()
    read_seconds: tuple[float, ...] = ()

    @property
    def shown(self) -> str:
        """What people are shown: a failing or unreadable verdict stands even while its breaker
        pauses the checks (it is no less failing); otherwise skipped while its breaker keeps it out
        of the round. A skip for a mute says nothing once the mute has ended (a mute in force is
        shown by ``monitor.engine.fleet.standing``): the last verdict stands."""
        if self.health in BAD or self.skipped != "breaker_open":
            return self.health
        return SKIPPED

    @property
    def change_unread(self) -> bool:
        """Drive reported a change that no read has seen since."""
        return self.changed_at is not None


@dataclass(frozen=True, slots=True)
class Change:
    """The health moved, or stayed with a new finding (``previous == current``)."""

    previous: Health
    current: Health
    down_for_seconds: float | None = None  # set when a bad episode ends


def record_verdict(
    record: SheetHealth | None, verdict: Health, now: datetime, findings: tuple[Finding, ...],
    keep: timedelta = DEFAULT_KEEP,
) -> tuple[SheetHealth, Change | None]:
    """A check's verdict -> the new record, and the change when the health moved or a new finding
    came with the same verdict (None otherwise). A move is added to the record's ``changes``, those
    older than ``keep`` dropped."""
    if verdict not in VERDICTS:
        raise ValueError(f"not a verdict: {verdict!r}")
    record = record or SheetHealth()
    checked = replace(record, last_checked_at=now, skipped=None, findings=findings)
    previous = record.health
    if verdict == previous:
        # The same verdict for another reason (a second check warns too) is news: people heard of
        # the first reason only. The same findings with other values (quantity 3, then 2) are not.
        return checked, Change(previous, verdict) if _new_findings(record.findings, findings) else None
    down_since, down_for = record.down_since, None
    if verdict in BAD and previous not in BAD:
        down_since = now
    elif verdict not in BAD and previous in BAD:
        if record.down_since:
            down_for = (now - record.down_since).total_seconds()
        down_since = None
    changed = replace(checked, health=verdict, since=now, down_since=down_since,
                      changes=_kept_changes(record.changes, VerdictChange(now, verdict), now - keep))
    return changed, Change(previous, verdict, down_for)


def _kept_changes(changes: tuple[VerdictChange, ...], new: VerdictChange, oldest: datetime
                  ) -> tuple[VerdictChange, ...]:
    kept = [change for change in changes if change.at >= oldest]
    # The last change before the window says what the health was when it began: kept, as its start.
    before = [change for change in changes if change.at < oldest][-1:]
    return (*before, *kept, new)[-VERDICT_CHANGES_KEPT:]


def record_read_time(record: SheetHealth, seconds: float) -> SheetHealth:
    """``record`` with ``seconds`` as its latest read's time."""
    return replace(record, read_seconds=(*record.read_seconds, round(seconds, 3))[-READ_TIMES_KEPT:])


def record_skip(record: SheetHealth | None, reason: SkipReason) -> SheetHealth:
    return replace(record or SheetHealth(), skipped=reason)


def is_alerting(change: Change) -> bool:
    """Changes people hear about: every change but a first check that found the spreadsheet ok
    (docs/operations.md, "What the team hears")."""
    return not (change.previous == UNKNOWN and change.current == OK)


def _new_findings(before: tuple[Finding, ...], after: tuple[Finding, ...]) -> bool:
    """Does ``after`` hold a check that was not warning or failing alike in ``before``?"""
    known = {(finding.check, finding.status) for finding in before}
    return any((finding.check, finding.status) not in known for finding in after)
