"""Check evaluation: pure functions from a check and the values Google returned to a CheckResult.

``evaluate(check, value_range, now, tz)`` judges one check by its kind's ``judge`` (the registry:
``monitor.checks.kinds``, where each kind says its own rules); ``evaluate_all`` judges a
spreadsheet's checks against its one batchGet answer. Neither does I/O. Both raise
``ValuesStillLoading`` when a cell still shows "Loading...", so the caller retries the read instead
of reporting anything.

Empty cells (absent, ``""`` or whitespace) are ignored everywhere. Numbers are JSON numbers only:
under UNFORMATTED_VALUE a string such as "5" is text the user typed, and booleans are not numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, tzinfo
from typing import Any

from .cells import only_rows, read_ranges, values_of
from .kinds import BY_MODEL, REGISTRY, Check
from .kinds.freshness import FreshnessCheck
from .past import NO_PAST, Past
from .result import CheckResult, Health, Status

ValueRange = Mapping[str, Any]


def evaluate(
    check: Check,
    value_range: ValueRange | None,
    now: datetime,
    tz: tzinfo | str | None = None,
    modified_time: datetime | None = None,
    past: Past | None = None,
    others: Mapping[str, ValueRange] | None = None,
) -> CheckResult:
    """Judge one check against the ValueRange Google returned for its range.

    ``check`` is one of the check models (``models``), already validated. ``now`` must be aware.
    ``tz`` is the spreadsheet's time zone (a tzinfo or an IANA name; None means UTC): date serials
    and date strings without an offset are read in it, and a freshness message shows the newest
    moment on its clock, with the offset ("2026-01-05 14:30 UTC+3"). ``modified_time`` (aware:
    the reader reads Drive's RFC 3339 text) is needed only by freshness checks with
    ``source="modified_time"``. ``past``: what checks kept over time or across spreadsheets are
    judged against (``monitor.checks.past``; none: a first read). ``others`` maps the ranges of a
    row filter (``where_ranges``) to their ValueRanges; a check with a filter judges only the rows
    that pass. A check of ``severity = "warn"`` warns where it would fail; its ``owner`` goes with
    its result. Raises
    ValuesStillLoading; TypeError for anything that is not a check model; ValueError for a naive
    ``now`` or a missing ``modified_time``.
    """
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    where = getattr(check, "row_filter", None)  # anything but a check model is refused below
    if where is not None and not check.filters_in_table and check.a1 is not None:
        rows = set(values_of(value_range).rows)
        value_range = only_rows(value_range, where.passing_rows(check.a1, rows, others or {}))
    kind = BY_MODEL.get(type(check))  # kind_of, inlined: a round judges every check it reads
    if kind is None:
        raise TypeError(f"not a check model: {type(check).__name__} (build one of "
                        f"{', '.join(kind.model.__name__ for kind in REGISTRY.values())})")
    result = kind.judge(check, value_range, now, tz, modified_time, past or NO_PAST)
    if where is None and check.severity == "fail" and check.owner is None:
        return result  # the common case, kept cheap: a round judges every check of every spreadsheet
    # A column check says its filter after the rows it counts (column_evaluate), or not at all when
    # a column is not there.
    filtered = where is not None and not check.filters_in_table
    message = f"{result.message} in rows where {where}" if filtered else result.message
    told_as_warning = check.severity == "warn" and result.status is Health.FAIL
    status: Status = Health.WARN if told_as_warning else result.status
    return replace(result, status=status, message=message, owner=check.owner)


def evaluate_all(
    checks: Sequence[Check],
    value_ranges: Mapping[str, ValueRange] | Sequence[ValueRange],
    now: datetime,
    tz: tzinfo | str | None = None,
    modified_time: datetime | None = None,
    past: Past | None = None,
) -> list[CheckResult]:
    """Judge every check of one spreadsheet, in order.

    ``value_ranges`` is either the batchGet's ``valueRanges`` list for the ranges
    ``ranges_of(checks)`` requested, in that order, or a mapping from each check's ``range`` *as
    written in the config* to its ValueRange (Google echoes ranges differently, so never key by the
    echo). If any range still shows "Loading...", ValuesStillLoading is raised and nothing returned.
    """
    if not isinstance(value_ranges, Mapping):
        requested = ranges_of(checks)
        if len(value_ranges) != len(requested):
            raise ValueError(
                f"{len(requested)} ranges requested (ranges_of(checks)) but "
                f"{len(value_ranges)} value ranges given"
            )
        value_ranges = dict(zip(requested, value_ranges, strict=True))
    value_ranges = read_ranges(value_ranges)  # as they are when the read made them ReadRanges already

    def values_for(check: Check) -> ValueRange | None:
        if check.range is None:
            return None
        for text in (check.range, *check.where_ranges):
            if text not in value_ranges:
                raise KeyError(f"no values were read for range {text!r} of {check.name!r}")
        return value_ranges[check.range]

    return [evaluate(check, values_for(check), now, tz, modified_time, past, value_ranges)
            for check in checks]


def ranges_of(checks: Sequence[Check]) -> tuple[str, ...]:
    """The ranges to read for ``checks``, each once, in first-use order: one batchGet's ``ranges``.

    Freshness checks on the file's modified time read no range (their ``range`` is None); a row
    filter reads its columns over the check's rows, after the check's own range.
    """
    return tuple(dict.fromkeys(text for check in checks if check.range is not None
                               for text in (check.range, *check.where_ranges)))


def needs_modified_time(checks: Sequence[Check]) -> bool:
    """True if a freshness check asks for the file's modified time (one Drive request)."""
    return any(isinstance(c, FreshnessCheck) and c.source == "modified_time" for c in checks)


def format_age(seconds: float) -> str:
    """A short age for a table's column: "45s", "12m", "5h 12m", "2d", "2d 3h" (two largest units).
    Messages say it in words (``monitor.core.durations.human_duration``)."""
    total = int(seconds)
    units = ((86400, "d"), (3600, "h"), (60, "m"), (1, "s"))
    for index, (size, unit) in enumerate(units):
        if total >= size or unit == "s":
            text = f"{total // size}{unit}"
            if index + 1 < len(units):
                next_size, next_unit = units[index + 1]
                rest = (total % size) // next_size
                if rest:
                    text += f" {rest}{next_unit}"
            return text
    raise AssertionError("unreachable")
