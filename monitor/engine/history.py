"""What a spreadsheet's reads leave for later judgements: its metric history, its last headers, and
the ranges it reads for other spreadsheets' cross-sheet checks. One document per spreadsheet
(``history/<sheet id>``), only for spreadsheets with such checks or such ranges.

* **Bounded.** A change check keeps a point only when its value changed (the value in force between
  two points is the earlier one's), only as far back as its ``over`` plus the one point in force then
  (with no ``over``, the last value alone), and at most ``HISTORY_POINTS`` spread evenly over it (the
  value ``over`` ago is then known within ``over / HISTORY_POINTS``). Key lists are capped at
  ``HISTORY_KEYS``; a longer one is kept as a problem to tell, not as keys.
* **Buckets.** An anomaly check keeps one value per bucket (an hour or a day on the spreadsheet's
  clock: the last read's in it) for its seasonality's span, and which buckets no baseline may use
  (``monitor.checks.buckets``): at most a few hundred numbers per check, whatever the reads.
* **Only reads add points.** A round that judges a spreadsheet again without reading it (Drive said it
  did not change) adds nothing: its values are the last read's, so a point would repeat the last one,
  and a change check's finding stands as its read left it (``monitor.engine.rejudge``). A failed
  read adds nothing either.
* **Either side of a cross-sheet check.** The dependent's read judges it against what the other
  spreadsheet's last read lent. When the other's read finds that side changed, an aggregate check is
  judged again at once (``rejudged_cross``) from the one number its last read kept (``own``), without
  a read; a keys check keeps no side of its own (hundreds of keys per spreadsheet would make the
  state grow with every dependent), so its spreadsheet is marked changed and the next round reads it
  (``keys_dependents``): a change of a catalogue costs a read of each spreadsheet checked against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from types import MappingProxyType
from typing import Any

from monitor.checks import (
    NOT_READ,
    Buckets,
    CheckResult,
    CrossSheetCheck,
    OtherSide,
    Past,
    bucket_number,
    compare_cross,
    keys_of,
    kind_of,
    metric_of,
    with_reading,
    worst,
)
from monitor.checks.buckets import BUCKET_LENGTH
from monitor.config.defaults import HISTORY_KEYS, HISTORY_POINTS
from monitor.config.model import Lend
from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document
from monitor.engine.health import Finding, Health


@document
class Point:
    at: UtcTime
    value: float | None


@document
class Kept:
    """A range's value as a read found it: an aggregate, or distinct keys; ``problem`` when it could
    not be kept."""

    value: float | tuple[str, ...] | None = None
    problem: str | None = None


@document
class SheetHistory:
    read_at: UtcTime
    series: dict[str, tuple[Point, ...]] = field(default_factory=dict)  # per change check
    headers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per headers_changed check
    own: dict[str, Kept] = field(default_factory=dict)  # per aggregate cross-sheet check: this side
    lent: dict[str, Kept] = field(default_factory=dict)  # per Lend.key: the range other checks read
    buckets: dict[str, Buckets] = field(default_factory=dict)  # per anomaly check: a value per bucket


@dataclass(frozen=True, slots=True)
class Linked:
    """A plan's cross-sheet links: each check's other spreadsheet, and the ranges it lends. Never
    changed once made: plans with the same links share one."""

    others: Mapping[str, str] = field(default_factory=dict)  # check name -> other spreadsheet id
    lends: tuple[Lend, ...] = ()


NO_LINKS = Linked(MappingProxyType({}))  # a plan with no cross-sheet check and nothing to lend


def past_for(checks: Sequence[Any], links: Linked, history: Mapping[str, SheetHistory],
             own_id: str, names: Mapping[str, str], failing: Mapping[str, str]) -> Past:
    """What ``checks`` are judged against: this spreadsheet's history, and each cross-sheet check's
    other side as the other's last read lent it. ``names``: spreadsheet id -> name; ``failing``:
    spreadsheet id -> why its reads fail now (dead-lettered)."""
    mine = history.get(own_id)
    series = {name: tuple((p.at, p.value) for p in points) for name, points in mine.series.items()} \
        if mine else {}
    others = {check.name: other_side(check, links.others.get(check.name), history, names, failing)
              for check in checks if (kind := kind_of(check)) is not None and kind.other_side}
    return Past(series, dict(mine.headers) if mine else {}, others, dict(mine.buckets) if mine else {})


def other_side(check: CrossSheetCheck, other_id: str | None, history: Mapping[str, SheetHistory],
               names: Mapping[str, str], failing: Mapping[str, str]) -> OtherSide:
    name = names.get(other_id or "", check.other)
    if other_id is None:
        return OtherSide(name, problem="it is not in the config")
    if other_id in failing:
        return OtherSide(name, problem=f"it cannot be read ({failing[other_id]})")
    kept = history.get(other_id)
    lent = kept.lent.get(_lend_of(check).key) if kept else None
    if lent is None:
        return OtherSide(name, NOT_READ)
    if lent.problem is not None:
        return OtherSide(name, problem=lent.problem)
    return OtherSide(name, lent.value, kept.read_at)


def recorded(checks: Sequence[Any], links: Linked, before: SheetHistory | None,
             results: Sequence[CheckResult], value_ranges: Mapping[str, Any], now: datetime,
             zone: tzinfo = UTC) -> SheetHistory | None:
    """The history after a read that judged ``results`` over ``value_ranges``; None when the
    spreadsheet has nothing to keep. ``zone``: the spreadsheet's, whose clock numbers buckets."""
    observed = {result.check_name: result.observed for result in results}
    series: dict[str, tuple[Point, ...]] = {}
    headers: dict[str, tuple[str, ...]] = {}
    own: dict[str, Kept] = {}
    buckets: dict[str, Buckets] = {}
    for check in checks:
        kind = kind_of(check)
        keep = kind.keeps(check, observed.get(check.name), value_ranges.get(check.range)) if kind else None
        if keep is None:
            continue
        if keep.slot == "series":
            earlier = before.series.get(check.name, ()) if before else ()
            series[check.name] = kept_points(earlier, Point(now, keep.value), keep.over)
        elif keep.slot == "headers":
            headers[check.name] = keep.value
        elif keep.slot == "buckets":
            buckets[check.name] = _bucketed(before.buckets.get(check.name) if before else None, keep,
                                            now, zone, left_out=_left_out(check.name, results))
        else:
            own[check.name] = Kept(keep.value)
    lent = {lend.key: _kept(lend.what, value_ranges.get(lend.range)) for lend in links.lends}
    if not (series or headers or own or lent or buckets):
        return None
    return SheetHistory(now, series, headers, own, lent, buckets)


def _bucketed(earlier: Buckets | None, keep: Any, now: datetime, zone: tzinfo, left_out: bool) -> Buckets:
    """A check's buckets with this read's value in its bucket, kept ``keep.over`` back."""
    span = keep.over // BUCKET_LENGTH[keep.every]
    return with_reading(earlier, bucket_number(now, zone, keep.every), keep.value, span, left_out)


def _left_out(name: str, results: Sequence[CheckResult]) -> bool:
    """Whether a read's value must stay out of later baselines: its own check found it unusual, or its
    spreadsheet fails (an incident: its values are not what is normal)."""
    return any(result.status != "ok" for result in results if result.check_name == name) \
        or worst(result.status for result in results) == "fail"


def kept_points(points: tuple[Point, ...], new: Point, over: timedelta | None) -> tuple[Point, ...]:
    """``points`` with ``new``, bounded (see the module doc)."""
    if points and points[-1].value == new.value:
        return points  # the value held: the last point already says so
    if over is None:
        return (new,)
    cutoff = new.at - over
    older = [p for p in points if p.at <= cutoff]
    kept = [*older[-1:], *(p for p in points if p.at > cutoff), new]
    if len(kept) <= HISTORY_POINTS:
        return tuple(kept)
    # The last point of each slot of a grid fixed in time (not anchored at the newest point, which
    # moves each read and would thin the same points again and again): the value in force at each
    # slot's end is exact, within it off by at most a slot. Slots of over / (points - 2): the slots of
    # ``over`` and the point in force before them fit the bound.
    slot = over.total_seconds() / (HISTORY_POINTS - 2)
    last_of_slot = {int(point.at.timestamp() // slot): point for point in kept[1:]}
    return (kept[0], *last_of_slot.values())


def _kept(what: str, value_range: Any) -> Kept:
    """A lent range's value to keep: an aggregate, or its distinct keys, sorted."""
    if what != "keys":
        return Kept(metric_of(what, value_range))
    distinct = sorted(dict.fromkeys(keys_of(value_range).values))
    if len(distinct) > HISTORY_KEYS:
        return Kept(problem=f"more than {HISTORY_KEYS:,} keys, too many to keep: compare a narrower range")
    return Kept(tuple(distinct))


def _lend_of(check: CrossSheetCheck) -> Lend:
    return Lend(check.other_range, "keys" if check.match == "keys" else check.aggregate)


def rejudged_cross(checks: Sequence[Any], findings: tuple[Finding, ...], mine: SheetHistory, past: Past
                   ) -> tuple[Health, tuple[Finding, ...]]:
    """A dependent's verdict and findings once its cross-sheet checks are judged again against
    ``past`` (the other side just read), from the side its last read kept; its other checks' findings
    stand as that read left them."""
    redone: dict[str, CheckResult] = {}
    for check in checks:
        kept = mine.own.get(check.name) if isinstance(check, CrossSheetCheck) else None
        if kept is not None and kept.problem is None:
            redone[check.name] = compare_cross(check, kept.value, past.others.get(check.name))
    standing = {finding.check: finding for finding in findings}
    after: list[Finding] = []
    for check in checks:
        if check.name in redone:
            if redone[check.name].is_finding:
                after.append(Finding.of(redone[check.name], check))
        elif check.name in standing:
            after.append(standing[check.name])
    return worst(finding.status for finding in after), tuple(after)


def depends_on(links: Linked, spreadsheet_id: str) -> bool:
    return spreadsheet_id in links.others.values()


def compares_keys_with(checks: Sequence[Any], links: Linked, spreadsheet_id: str) -> bool:
    """Whether a keys check of these compares with ``spreadsheet_id`` (its read is due when that
    spreadsheet's keys change)."""
    return any(isinstance(check, CrossSheetCheck) and check.match == "keys"
               and links.others.get(check.name) == spreadsheet_id for check in checks)
