"""``[[maintenance]]`` tables: when spreadsheets are under maintenance (silenced, still read), and why.

A window is one-off (``start`` and ``end``) or recurring (``every`` a weekday or every day at a time,
``for`` how long), on the clock of ``[alerts] timezone``. It covers the spreadsheets it names
(``sheets``: ids or names), those with one of its ``tags``, or, naming neither, every spreadsheet:
resolved here into spreadsheet ids once, so nothing after the loader resolves a name again.
:meth:`MaintenanceWindow.occurrence_at` is pure: ``now`` comes in.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from monitor.core.durations import format_duration
from monitor.core.invalid_value import InvalidValue
from monitor.core.zones import latest_slot

from .fields import Duration
from .issues import Loc
from .reworded import choices_fix


class Listed(Protocol):
    """A configured spreadsheet as a window finds it, by id, name or tag: a ``model.Sheet`` (named so
    here, the model that holds the windows would be imported back)."""

    id: str
    name: str
    tags: tuple[str, ...]


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
EVERY_DAY = "day"
MAX_REASON = 200  # a line of a message: the reason is said when the window begins
_EVERY_RE = re.compile(r"\s*([A-Za-z]+)\s+([01]?\d|2[0-3]):([0-5]\d)\s*")
_SCHEDULE_FIX = ('write start = "2026-03-08 02:00" and end = "2026-03-08 04:00" (once), or '
                 'every = "sunday 02:00" (or "day 02:00") and for = "2h" (each week, or each day)')


@dataclass(frozen=True, slots=True)
class MaintenanceWindow:
    """One ``[[maintenance]]`` table, resolved: what it covers, why, and when (once, or recurring)."""

    key: str  # stable while the table is unchanged: names each occurrence (monitor.engine.maintenance)
    reason: str
    spreadsheet_ids: tuple[str, ...] | None  # None: every configured spreadsheet
    tags: tuple[str, ...]  # as written: said when it begins ("tag #moscow")
    origin: str  # "monitor.toml:42"
    timezone: str = "UTC"  # [alerts] timezone: the clock ``every`` is read on
    start: datetime | None = None  # a one-off window, aware UTC
    end: datetime | None = None
    weekday: int | None = None  # a recurring one: 0 Monday .. 6 Sunday; None: every day
    at: time | None = None  # a recurring one's start on the clock of ``timezone``
    length: timedelta | None = None  # a recurring one's ``for``

    def also_covering(self, sheets: Sequence[Listed]) -> MaintenanceWindow:
        """The window over ``sheets`` too, those of them that carry one of its tags: a folder's
        spreadsheets, listed by a run after the config was read. Its key stays: it is the same window."""
        if self.spreadsheet_ids is None or not self.tags:
            return self
        tagged = tuple(sheet.id for sheet in sheets if set(sheet.tags) & set(self.tags)
                       and sheet.id not in self.spreadsheet_ids)
        return replace(self, spreadsheet_ids=self.spreadsheet_ids + tagged) if tagged else self

    def occurrence_at(self, now: datetime) -> tuple[datetime, datetime] | None:
        """(start, end) of the occurrence in force at ``now`` (start <= now < end), None if none is.

        A recurring window begins at ``at`` on the clock of ``timezone`` (a time a DST jump skips
        begins that far after the jump, a time that happens twice begins the first time) and lasts
        ``length`` of real time, whatever the clock does meanwhile.
        """
        if self.start is not None and self.end is not None:
            return (self.start, self.end) if self.start <= now < self.end else None
        if self.at is None or self.length is None:
            return None
        begins = latest_slot(now, self.at, ZoneInfo(self.timezone), self.weekday)
        ends = begins + self.length
        return (begins, ends) if now < ends else None


@dataclass(frozen=True, slots=True)
class Covered:
    ids: tuple[str, ...] | None  # None: every configured spreadsheet


class MaintenanceTable(BaseModel):
    """A ``[[maintenance]]`` table as written; ``sheets`` and ``tags`` are resolved by the loader."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: datetime | None = None
    end: datetime | None = None
    every: tuple[int | None, time] | None = None  # (weekday or None for every day, time of day)
    for_: Duration | None = Field(default=None, alias="for")
    sheets: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    reason: str = Field(description='why, for the team: reason = "moving the servers"')

    @field_validator("start", "end", mode="before", json_schema_input_type=str)
    @classmethod
    def _moment(cls, value: object, info: ValidationInfo) -> datetime:
        """A TOML date-time (with or without an offset) or the same as a string; without an offset
        it is a time on the clock of [alerts] timezone (the loader's ``timezone`` context)."""
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.strip())
            except ValueError:
                value = None
        if isinstance(value, date) and not isinstance(value, datetime):
            raise InvalidValue(f"{info.field_name} has a date but no time",
                               f'write e.g. {info.field_name} = "2026-03-08 02:00"')
        if not isinstance(value, datetime):
            raise InvalidValue(f"{info.field_name} is not a date and time",
                               f'write e.g. {info.field_name} = "2026-03-08 02:00" (on the clock of '
                               "[alerts] timezone), or with an offset, \"2026-03-08T02:00+03:00\"")
        if value.tzinfo is None:
            # fold=0: a time that happens twice (autumn) is its first; one skipped is after the jump.
            value = value.replace(tzinfo=ZoneInfo((info.context or {}).get("timezone", "UTC")))
        return value.astimezone(UTC)

    @field_validator("every", mode="before", json_schema_input_type=str)
    @classmethod
    def _every(cls, value: object) -> tuple[int | None, time]:
        match = _EVERY_RE.fullmatch(value) if isinstance(value, str) else None
        day = match.group(1).lower() if match else ""
        if not match or (day != EVERY_DAY and day not in WEEKDAYS):
            raise InvalidValue(f"bad every {value!r}",
                               'write a weekday or "day", then the time (24-hour, on the clock of '
                               '[alerts] timezone): every = "sunday 02:00" or every = "day 23:30"')
        weekday = None if day == EVERY_DAY else WEEKDAYS.index(day)
        return weekday, time(int(match.group(2)), int(match.group(3)))

    @field_validator("sheets", "tags", mode="before", json_schema_input_type=str | list[str])
    @classmethod
    def _names(cls, value: object, info: ValidationInfo) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            example = '["Store 014", "1AbC..."]' if info.field_name == "sheets" else '["moscow"]'
            raise InvalidValue(f"{info.field_name} must be a list of non-empty strings",
                               f"write {info.field_name} = {example}")
        return tuple(v.strip() for v in value)

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        if not value.strip() or len(value) > MAX_REASON:
            raise InvalidValue(f"a reason must be 1 to {MAX_REASON} characters",
                               'write why, as the team will read it: reason = "moving the servers"')
        return value.strip()

    def schedule_problems(self) -> list[tuple[Loc, str, str]]:
        """What is wrong with the schedule as a whole, each at the key to change: (key, problem, fix)."""
        once = {"start": self.start, "end": self.end}
        recurring = {"every": self.every, "for": self.for_}
        written = [key for key, value in (*once.items(), *recurring.items()) if value is not None]
        if not written:
            return [((), "a maintenance window has no schedule", _SCHEDULE_FIX)]
        if any(key in once for key in written) and any(key in recurring for key in written):
            return [((written[-1],), "a window is either once (start, end) or recurring (every, for), "
                     "not both", _SCHEDULE_FIX)]
        kind = once if written[0] in once else recurring
        missing = [key for key, value in kind.items() if value is None]
        if missing:
            return [((written[0],), f"{' and '.join(kind)} go together: {missing[0]} is missing",
                     _SCHEDULE_FIX)]
        if self.start is not None and self.end is not None and self.end <= self.start:
            return [(("end",), "end is not after start", "write an end later than the start")]
        if self.every is not None and self.for_ is not None:
            period = timedelta(days=1 if self.every[0] is None else 7)
            if self.for_ >= period:
                # An occurrence would not end before the next began: a silence that never ends.
                return [(("for",), f"for ({format_duration(self.for_)}) is not shorter than the time "
                         f"between two occurrences ({format_duration(period)})",
                         "shorten it; to silence a spreadsheet for good, use `sheet-monitor mute`")]
        return []

    def resolve(self, sheets: Sequence[Listed], report: Callable[[Loc, str, str], None],
                folder_tags: Sequence[str] = ()) -> Covered | None:
        """What the window covers among ``sheets``; None when its schedule is wrong or a name or a tag
        matches none of them nor a folder (each reported at its own key: a window that silently
        covers nothing is a typo)."""
        problems = self.schedule_problems()
        for where, problem, fix in problems:
            report(where, problem, fix)
        covered = cover(self.sheets, self.tags, sheets, report, folder_tags)
        return None if problems else covered

    def window(self, spreadsheet_ids: tuple[str, ...] | None, origin: str,
               timezone: str) -> MaintenanceWindow:
        """The resolved window, its key made of what it says (schedule, what it covers, reason)."""
        weekday, at = self.every if self.every is not None else (None, None)
        said: dict[str, Any] = {"start": self.start, "end": self.end, "weekday": weekday, "at": at,
                                "for": self.for_, "timezone": timezone if at else None,
                                "sheets": spreadsheet_ids, "tags": self.tags, "reason": self.reason}
        payload = json.dumps(said, default=str, sort_keys=True)
        key = "cfg-" + hashlib.sha256(payload.encode()).hexdigest()[:10]
        return MaintenanceWindow(key, self.reason, spreadsheet_ids, self.tags, origin, timezone, self.start,
                                 self.end, weekday, at, self.for_)


def cover(names: Sequence[str], tags: Sequence[str], sheets: Sequence[Listed],
          report: Callable[[Loc, str, str], None], folder_tags: Sequence[str] = ()) -> Covered | None:
    """The spreadsheets of ``sheets`` named (by id or name) or tagged so, in the config's order; None
    when a name or a tag matches none (reported at ``("sheets", i)`` or ``("tags", i)``). A tag of a
    ``[[folders]]`` folder (``folder_tags``) matches the folder's spreadsheets, which a run lists:
    :meth:`MaintenanceWindow.also_covering` adds them then."""
    if not names and not tags:
        return Covered(None)
    by_name: dict[str, list[str]] = {}
    for sheet in sheets:
        by_name.setdefault(sheet.name, []).append(sheet.id)
    ids = {sheet.id for sheet in sheets}
    chosen: set[str] = set()
    ok = True
    for index, ref in enumerate(names):
        named = [ref] if ref in ids else by_name.get(ref, [])
        if len(named) > 1:
            report(("sheets", index), f"{ref!r} is the name of {len(named)} spreadsheets "
                   f"({', '.join(named)})", "write the id of the one meant, or each of their ids")
        elif not named:
            report(("sheets", index), f"no configured spreadsheet is {ref!r}",
                   choices_fix(ref, tuple(by_name), what="spreadsheet name") + " (or write its id)")
        ok = ok and len(named) == 1
        chosen.update(named)
    known_tags = tuple(dict.fromkeys([*(tag for sheet in sheets for tag in sheet.tags), *folder_tags]))
    for index, tag in enumerate(tags):
        if tag not in known_tags:
            report(("tags", index), f"no configured spreadsheet has the tag {tag!r}",
                   choices_fix(tag, known_tags, what="tag"))
            ok = False
    chosen.update(sheet.id for sheet in sheets if set(sheet.tags) & set(tags))
    return Covered(tuple(sheet.id for sheet in sheets if sheet.id in chosen)) if ok else None
