"""``freshness``: ``now`` minus the newest date in the range (or the file's modifiedTime, ``source =
"modified_time"``) against its age conditions. A range without any date is reported at the check's
most severe level, as an undefined aggregate is. What counts as a date: ``monitor.checks.dates``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from typing import Literal

from pydantic import model_validator

from monitor.core.a1 import CellRef
from monitor.core.durations import human_duration
from monitor.core.invalid_value import InvalidValue
from monitor.core.timefmt import format_utc
from monitor.core.wording import counted
from monitor.core.zones import wall_clock

from .. import explain
from ..base import CheckBase
from ..cells import Values, refs_text, values_of
from ..conditions import Condition
from ..dates import MAX_SERIAL, date_of, zone
from ..fields import A1Text, AgeConditionField
from ..kind import Kind
from ..result import MAX_CELLS, CheckResult, Health, Status, most_severe, result_of


class FreshnessCheck(CheckBase):
    """Age conditions are ``Condition`` objects over seconds; ``warn_age``/``fail_age`` as timedelta.

    ``source="range"``: the newest date in ``range``; ``"modified_time"``: the file's modifiedTime,
    and then ``range`` is None (so a check reads a range iff its ``range`` is set).
    """

    kind: Literal["freshness"] = "freshness"
    range: A1Text | None = None
    source: Literal["range", "modified_time"] = "range"
    warn: AgeConditionField | None = None
    fail: AgeConditionField | None = None

    @model_validator(mode="after")
    def _source_and_conditions(self) -> FreshnessCheck:
        if self.source == "range" and self.range is None:
            raise InvalidValue("freshness needs a range or source = \"modified_time\"",
                               'add range = "Tab!E2:E" (dates) or source = "modified_time"')
        if self.source == "modified_time" and self.range is not None:
            raise InvalidValue('a freshness check on source = "modified_time" takes no range',
                               "remove range, or remove source to read dates from the range")
        if self.warn is None and self.fail is None:
            raise InvalidValue("freshness needs an age", 'add warn = "> 2h", fail = "> 1d" or both')
        return self

    def explain(self) -> str:
        levels = ((Health.FAIL, self.fail), (Health.WARN, self.warn))
        return explain.sentence(self, [(status, _clause(self, condition))
                                       for status, condition in levels if condition is not None])

    def conditions(self) -> str:
        return self._named_conditions("age")

    @property
    def warn_age(self) -> timedelta | None:
        return timedelta(seconds=self.warn.value) if self.warn else None

    @property
    def fail_age(self) -> timedelta | None:
        return timedelta(seconds=self.fail.value) if self.fail else None


def _clause(check: FreshnessCheck, condition: Condition) -> str:
    age = condition.label.split(" ", 1)[1]
    older = "older than" if condition.op == ">" else "at least as old as"
    if check.source == "modified_time":
        return f"the file was last modified {'more than' if condition.op == '>' else 'at least'} {age} ago"
    return f"the newest date in {explain.scope(check)} is {older} {age}"


def judge(check: FreshnessCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    if check.source == "modified_time":
        if modified_time is None:
            raise ValueError(f"{check.name!r} needs the file's modifiedTime")
        return judge_age(check, _aware(modified_time), None, now, tz)
    found = values_of(value_range)
    newest, newest_index = _newest_date(found, zone(tz))
    if newest_index is None:
        return _undefined_date(check, found, most_severe(check.warn, check.fail))
    return judge_age(check, newest, found.cell(newest_index).at, now, tz)


def judge_age(check: FreshnessCheck, newest: datetime, cell: CellRef | None, now: datetime,
              tz: tzinfo | str | None = None) -> CheckResult:
    """A freshness check's result once its newest moment is known (the newest date, found in
    ``cell``, or the file's modified time when ``cell`` is None). It depends on ``now`` alone, so a
    spreadsheet that has not changed is re-judged from the moment its last read found."""
    tz = zone(tz)
    what = "last modified" if check.source == "modified_time" else "newest date"
    age = (now - newest).total_seconds()
    local = wall_clock(newest, tz)  # with its offset: which zone a date was read in is never a guess
    shown = (
        f"{what} {local} is {human_duration(age)} old" if age >= 0
        else f"{what} {local} is {human_duration(-age)} in the future"
    )
    observed = format_utc(newest)
    refs = (cell,) if cell else ()
    for status, condition in ((Health.FAIL, check.fail), (Health.WARN, check.warn)):
        if condition is not None and condition.holds(age):
            return CheckResult(check.name, check.kind, status, f"{shown} ({condition})", observed, refs)
    return CheckResult(check.name, check.kind, Health.OK, shown, observed)


def _newest_date(found: Values, tz: tzinfo) -> tuple[datetime | None, int | None]:
    """The newest moment among ``found``'s values and its index, the first in reading order on a tie.

    Equal to ``max`` over every value's ``date_of``, but serial numbers (nearly every date the monitor
    reads) order like their moments, so only the largest one, compared at ``from_serial``'s millisecond
    precision, is turned into a datetime; texts are read as dates only when the range holds some.
    """
    values, numeric = found.values, found.numeric
    dated: list[tuple[datetime, int]] = []
    serials = [index for index in numeric if 1 <= values[index] <= MAX_SERIAL]
    if serials:
        best_ms = round(max(values[index] for index in serials) * 86_400_000)
        first = next(index for index in serials if round(values[index] * 86_400_000) == best_ms)
        dated.append((date_of(values[first], tz), first))
    if len(numeric) < len(values):
        numbers = set(numeric)
        dated.extend((moment, index) for index, value in enumerate(values)
                     if index not in numbers and (moment := date_of(value, tz)) is not None)
        dated.sort(key=lambda pair: pair[1])  # back in reading order, for ties
    if not dated:
        return None, None
    return max(dated, key=lambda pair: pair[0])


def _undefined_date(check: FreshnessCheck, found: Values, status: Status) -> CheckResult:
    if not found:
        return result_of(check, status, "no dates: the range is empty", None)
    cells = found.cells(range(min(len(found), MAX_CELLS)))
    message = f"no dates: {counted(len(found), 'cell')} hold no date ({refs_text(cells, len(found))})"
    return result_of(check, status, message, None, cells)


def _aware(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("modified_time must be aware (Drive reports UTC)")
    return moment


KIND = Kind(FreshnessCheck, judge)
