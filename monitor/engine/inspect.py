"""Inspecting one spreadsheet: read everything its checks need, then judge them.

The one place that does it, for the run and for `sheet-monitor check ID` alike: one
``values:batchGet`` for every range of the spreadsheet's checks (plus one Drive request when a
freshness check looks at the file's modified time; when the caller does not know the spreadsheet's
time zone, the values come from one ``spreadsheets.get`` with grid data that gives the zone too, still
one request: see ``monitor.engine.zone_refresh``), then the checks, evaluated over what Google returned, with
dates read in the spreadsheet's own zone. Reading and judging are separate steps
because the run holds a task's lease only while the requests are in flight.

Values show an error cell only by its code, and #N/A or #REF! may be IMPORTRANGE or GOOGLEFINANCE
still computing, or IMPORTRANGE refused its source (``monitor.checks.imports``). A read that shows
such a code is therefore not judged: it fails as *loading*, and the retry, due at once (nothing
was computing yet as far as anyone knows: the plain read cannot tell), reads *with details*
(``detailed``): one ``spreadsheets.get`` of the same ranges whose grid data carries each error's
type and message and each cell's formula, still one request. A detailed read judges refused
imports as a finding of their own, and reads again while an external function may be computing,
until its last try, when what it shows is judged as it is. The same answer gives each cell's formula:
`check ID`, which always reads with details, finds in them values that move without an edit
(``volatile_formulas``: NOW(), IMPORTRANGE), which change detection would see late.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Generic, Protocol, TypeVar

from monitor.checks import (
    Check,
    CheckResult,
    Past,
    ValuesStillLoading,
    VolatileCell,
    evaluate_all,
    volatile_cells,
)
from monitor.checks.cells import ReadRange, read_ranges
from monitor.checks.imports import CellError, ambiguous_cell, import_findings, may_be_computing
from monitor.config import Config, Sheet
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.core.zones import zone_named
from monitor.engine.health import Tab
from monitor.engine.history import NO_LINKS, Linked
from monitor.engine.zone_refresh import needs_time_zone

# Seconds: less than this left of the budget is no time for one more request to Google.
_LEAST_EXPLAIN_SECONDS = 0.5

T = TypeVar("T")
U = TypeVar("U")


class Encoded(Generic[T]):
    """An answer as Google sent it, its JSON, and how it is decoded. A reader made to defer gives
    these for the values it reads: a read in flight then holds the bytes until the run judges it,
    one at a time on the run's own thread, rather than the parsed values, several times their size
    (64 answers waiting to be judged were ~20 MB at 5,000 spreadsheets). ``decoded()`` raises
    ``SheetReadError`` for an answer that is not what was asked, as the reader would have."""

    __slots__ = ("payload", "decode")

    def __init__(self, payload: bytes, decode: Callable[[bytes], T]) -> None:
        self.payload = payload
        self.decode = decode

    def decoded(self) -> T:
        return self.decode(self.payload)

    def then(self, step: Callable[[T], U]) -> Encoded[U]:
        """The same answer, ``step`` applied to what it decodes to."""
        decode = self.decode
        return Encoded(self.payload, lambda payload: step(decode(payload)))


def mapped(answer: T | Encoded[T], step: Callable[[T], U]) -> U | Encoded[U]:
    """``step`` of ``answer``: now if it is decoded, else once it is."""
    return answer.then(step) if isinstance(answer, Encoded) else step(answer)


@dataclass(frozen=True, slots=True)
class SheetPlan:
    """One configured spreadsheet as inspecting it needs it."""

    id: str
    name: str
    checks: tuple[Check, ...]
    ranges: tuple[str, ...]  # every range its checks read, fetched in one batchGet
    needs_modified_time: bool = False  # a freshness check on the file's modifiedTime (one Drive request)
    fingerprint: str = ""  # of its checks: a last read judged by other checks does not count
    # Read at least this often when Drive reports no change, or every round (monitor.engine.change_detection).
    max_age: timedelta = timedelta(hours=1)
    always_read: bool = False
    tags: tuple[str, ...] = ()  # the config's, for the events about it
    links: Linked = NO_LINKS  # its cross-sheet checks' other spreadsheets, the ranges it lends

    @classmethod
    def of(cls, sheet: Sheet, config: Config, shared: dict[tuple, Linked] | None = None) -> SheetPlan:
        """``shared``: the links already made for other plans, by what they hold (see plans_of)."""
        # No zone here: dates are read in the spreadsheet's own (read from Google, kept in its
        # health record); the config's [alerts] timezone is the digest's alone.
        key = (sheet.others, sheet.lends)
        links = shared.get(key) if shared is not None else None
        if links is None:
            links = Linked(dict(sheet.others), sheet.lends) if key != ((), ()) else NO_LINKS
            if shared is not None:
                shared[key] = links
        return cls(sheet.id, sheet.name, sheet.checks, sheet.ranges, sheet.needs_modified_time,
                   sheet.fingerprint, sheet.max_age or config.run.max_age, sheet.always_read, sheet.tags,
                   links)

    @property
    def needs_time_zone(self) -> bool:
        return needs_time_zone(self.checks)


def plans_of(config: Config) -> list[SheetPlan]:
    """Every configured spreadsheet's plan. Plans with the same links share one ``Linked`` (a
    profile's cross-sheet check names the same other spreadsheet for all its spreadsheets): at
    20,000 spreadsheets a copy each was ~5 MB of a run's memory."""
    shared: dict[tuple, Linked] = {}
    return [SheetPlan.of(sheet, config, shared) for sheet in config.sheets]


class SheetReader(Protocol):
    """What inspecting needs from the Sheets adapter (``monitor.google.GspreadReader`` implements it).

    All raise ``SheetReadError`` (already classified), never a library's exception. A reader made to
    defer answers ``read``, ``read_detailed`` and ``read_with_zone`` with what they return as an
    :class:`Encoded` of it (see there)."""

    def read(
        self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float
    ) -> list[dict]: ...

    def read_detailed(
        self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float
    ) -> tuple[list[dict], tuple[CellError, ...], list[dict]]:
        """The same ValueRanges as :meth:`read`, in one request, every error cell's details, and the
        same ranges as formulas (as ``valueRenderOption=FORMULA`` renders them)."""
        ...

    def read_with_zone(
        self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float,
        detailed: bool = False,
    ) -> tuple[tuple[list[dict], tuple[CellError, ...], list[dict]], ZoneAnswer]:
        """What :meth:`read` gives (or :meth:`read_detailed` when ``detailed``; not detailed, no
        error details and no formulas) and the spreadsheet's time zone and tabs, in one request."""
        ...

    def modified_time(self, spreadsheet_id: str, credential: str, timeout: float) -> datetime:
        """The file's Drive ``modifiedTime``, aware."""
        ...

    def time_zone(self, spreadsheet_id: str, credential: str, timeout: float) -> ZoneAnswer: ...

    def tab_titles(self, spreadsheet_id: str, credential: str, timeout: float) -> tuple[str, ...] | None:
        """The spreadsheet's tab titles (None when they cannot be had): one Sheets read."""
        ...


@dataclass(frozen=True)
class ZoneAnswer:
    """A spreadsheet's time zone as Google names it, and its tabs, which the same request gives."""

    time_zone: str
    tabs: tuple[Tab, ...] = ()


@dataclass(frozen=True)
class SheetData:
    """What Google returned for a plan, parsed once: each requested range's ValueRange as a
    ``ReadRange`` (its values sorted out once, for its checks, the look for computing imports and its
    history alike), the file's modifiedTime, and the spreadsheet's time zone when this read asked."""

    value_ranges: Mapping[str, ReadRange | None]
    modified_time: datetime | None = None
    cell_errors: tuple[CellError, ...] | None = None  # a detailed read's error cells; None: not asked
    formula_ranges: tuple[Mapping[str, Any], ...] | None = None  # a detailed read's ranges as formulas
    time_zone: str | None = None  # the spreadsheet's, when this read asked for it
    tabs: tuple[Tab, ...] = ()  # its tabs, when this read asked for its time zone


# What one request answered, in the shape a SheetData is made from: the values, the error cells'
# details and the formulas (None when not asked), the zone and tabs (ZoneAnswer("") when not asked).
_Answer = tuple[list[dict], tuple[CellError, ...] | None, list[dict] | None, ZoneAnswer]
_NO_ZONE = ZoneAnswer("")


def read(plan: SheetPlan, reader: SheetReader, credential: str, timeout: Callable[[], float], *,
         fetch_zone: bool = False, detailed: bool = False, explain: bool = True) -> SheetData:
    """Every request ``plan`` needs, and its spreadsheet's time zone when ``fetch_zone``, asked in the
    request that reads the values (one ``spreadsheets.get`` with grid data, one read of quota), or
    alone when the plan reads no range; ``timeout()`` is asked as each request starts (the budget
    shrinks). ``detailed``: the values come with every error cell's details (see the module doc).
    ``explain``: a range Google refuses is explained by the spreadsheet's tab titles, one request
    more (:func:`explaining_requests`), for which the caller keeps room in the quota; without it the
    refusal is told as Google worded it."""
    data = fetch(plan, reader, credential, timeout, fetch_zone=fetch_zone, detailed=detailed, explain=explain)
    return data.decoded() if isinstance(data, Encoded) else data


def fetch(plan: SheetPlan, reader: SheetReader, credential: str, timeout: Callable[[], float], *,
          fetch_zone: bool = False, detailed: bool = False, explain: bool = True
          ) -> SheetData | Encoded[SheetData]:
    """:func:`read`'s requests, their answer left :class:`Encoded` when the reader defers it."""
    answer: _Answer | Encoded[_Answer] = ([], None, None, _NO_ZONE)
    try:
        if fetch_zone and not plan.ranges:
            answer = ([], None, None, reader.time_zone(plan.id, credential, timeout()))
        elif fetch_zone:
            got = reader.read_with_zone(plan.id, plan.ranges, credential, timeout(), detailed=detailed)
            answer = mapped(got, _detailed_with_zone if detailed else _with_zone)
        elif plan.ranges and detailed:
            answer = mapped(reader.read_detailed(plan.id, plan.ranges, credential, timeout()),
                            lambda got: (*got, _NO_ZONE))
        elif plan.ranges:
            answer = mapped(reader.read(plan.id, plan.ranges, credential, timeout()),
                            lambda values: (values, None, None, _NO_ZONE))
    except SheetReadError as error:
        if explain and error.http_status == 400 and error.range:
            _explain_refused_range(error, plan, reader, credential, timeout())
        raise
    modified = reader.modified_time(plan.id, credential, timeout()) if plan.needs_modified_time else None

    def sheet_data(got: _Answer) -> SheetData:
        values, errors, formulas, zone = got
        return SheetData(read_ranges(dict(zip(plan.ranges, values, strict=True))), modified, errors,
                         None if formulas is None else tuple(formulas), zone.time_zone or None, zone.tabs)

    return mapped(answer, sheet_data)


def _with_zone(got: tuple[tuple[list[dict], Any, Any], ZoneAnswer]) -> _Answer:
    """A read with the zone, not detailed: judged as a batchGet's values are (a code that may be
    computing is read again, with details)."""
    (values, _, _), zone = got
    return values, None, None, zone


def _detailed_with_zone(got: tuple[tuple[list[dict], tuple[CellError, ...], list[dict]], ZoneAnswer]
                        ) -> _Answer:
    (values, errors, formulas), zone = got
    return values, errors, formulas, zone


def _explain_refused_range(error: SheetReadError, plan: SheetPlan, reader: SheetReader, credential: str,
                           timeout: float) -> None:
    """Give a refused range's error the tabs the spreadsheet has (was one renamed?), when the budget
    leaves time for one more request; counted in ``extra_requests`` whatever its answer, as Google
    counts a request on arrival."""
    if timeout < _LEAST_EXPLAIN_SECONDS:
        return
    error.extra_requests += 1
    error.tabs = reader.tab_titles(plan.id, credential, timeout)


def sheets_requests(plan: SheetPlan) -> int:
    """The Sheets requests :func:`read` sends for ``plan``: one when it reads ranges (a batchGet, or
    with details or its zone one ``spreadsheets.get``), none otherwise. Each takes a slot of the read
    quota; Drive's request for the modified time counts against Drive's own."""
    return 1 if plan.ranges else 0


def explaining_requests(plan: SheetPlan) -> int:
    """The Sheets requests :func:`read` may send for ``plan`` beyond :func:`sheets_requests`, without
    a slot of their own: one when it reads ranges, as a range Google refuses is explained by the
    spreadsheet's tab titles (was one renamed?), asked at once."""
    return 1 if plan.ranges else 0


def zone_of(plan: SheetPlan, name: str | None) -> tzinfo:
    """The zone to judge ``plan``'s dates in, from the name Google gave (``properties.timeZone``).

    UTC for a plan that reads no dates (a modified time alone is shown in UTC). A name this system's
    time-zone database does not know is a PERMANENT ``SheetReadError``: judging dates in a guessed
    zone would be off by hours, silently. ValueError when the plan needs a zone and none was read (a
    caller's mistake)."""
    if name is None:
        if plan.needs_time_zone:
            raise ValueError(f"{plan.id}: dates cannot be judged before the spreadsheet's time zone is read")
        return UTC
    return known_zone(name)


def known_zone(name: str) -> tzinfo:
    """The zone Google names a spreadsheet's (``properties.timeZone``); a PERMANENT ``SheetReadError``
    when this system's time-zone database does not know it (see :func:`zone_of`)."""
    try:
        return zone_named(name)
    except ValueError:
        raise SheetReadError(
            ErrorClass.PERMANENT, None, None,
            f"the spreadsheet's time zone {name!r} (File > Settings) is unknown to this machine's "
            "time-zone database: update the tzdata package, or choose a listed zone") from None


def volatile_formulas(plan: SheetPlan, data: SheetData, change_detection: bool) -> list[VolatileCell] | None:
    """The cells of a detailed read's ranges whose formulas move without an edit (NOW(), IMPORTRANGE).
    None when it would not matter: every round reads the spreadsheet anyway (change detection is off,
    or it is ``always_read``), or the read was not detailed."""
    if not change_detection or plan.always_read or data.formula_ranges is None:
        return None
    return volatile_cells(data.formula_ranges)


def judge(plan: SheetPlan, data: SheetData, now: datetime, zone: tzinfo,
          last_try: bool = False, past: Past | None = None) -> list[CheckResult]:
    """Every check of ``plan`` over ``data``, dates read in ``zone`` (:func:`zone_of`), and refused
    imports first. Values not known yet (cells still showing "Loading...", a code an external function
    may show while it computes) are no finding but a failed read, raised as a LOADING
    ``SheetReadError`` so the read is retried (with details). ``last_try``: no retry is left, so what
    an external function shows is judged as it is. ``past``: what checks kept over time or across
    spreadsheets are judged against (``monitor.engine.history.past_for``)."""
    try:
        _known_or_raise(data, last_try)
        results = evaluate_all(plan.checks, data.value_ranges, now, zone, modified_time=data.modified_time,
                               past=past)
    except ValuesStillLoading as exc:
        raise SheetReadError(ErrorClass.LOADING, None, None, str(exc)) from None
    return [*import_findings(data.cell_errors or ()), *results]


def _known_or_raise(data: SheetData, last_try: bool) -> None:
    if data.cell_errors is None:
        # On the last try (after failures of another kind) what the read shows is all there is.
        ambiguous = None if last_try else ambiguous_cell(data.value_ranges)
        if ambiguous is not None:
            cell, code = ambiguous
            raise SheetReadError(ErrorClass.LOADING, None, None,
                                 f"{cell} shows {code}, which IMPORTRANGE and GOOGLEFINANCE also show "
                                 "while they compute; read it again with Google's details",
                                 details_needed=True)
        return
    computing = [error for error in data.cell_errors if may_be_computing(error)]
    if computing and not last_try:
        first = computing[0]
        raise SheetReadError(ErrorClass.LOADING, None, None,
                             f"{first.cell} shows {first.code} from {first.function}, which may still "
                             f"be computing ({first.message.strip()[:120]}); read it again later")
