"""Checks proposed from the surveys of spreadsheets of one template, each with what it saw.

Every bound is taken from what today's values show and never tighter than they pass, over every
spreadsheet of the template: a proposal judged on the spreadsheets it came from raises no finding.
What today's data would fail (formula errors already there) is proposed switched off, saying why.

Per tab: formula errors over its used range. Per table (a tab with a header row): its headers by the
header row; that it has rows, and loses no more than 30 % of them from one read to the next; each
column filled in every row must stay filled; the first column whose values never repeat is a key
(no duplicates); the freshest date column must keep being updated (a freshness check, warned at
four times today's age, at least a day); a column of numbers stays numbers within bounds: a negative
or ten times the largest fails, under the smallest or over twice the largest warns.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from functools import reduce
from typing import Any

from monitor.checks.conditions import format_number
from monitor.core.a1 import column_letters, quote_sheet_name
from monitor.core.durations import format_duration
from monitor.core.wording import counted

from .survey import MISSING_WORDS, ColumnSurvey, SheetSurvey, TabSurvey

ROWS_LOST = 30  # percent of a table's rows lost between two reads that fails its change check
FRESH_MARGIN = 4  # a freshness check warns at this many times the newest date's age today ...
LEAST_WARN_AGE = timedelta(days=1)  # ... and never under a day: a daily sheet is two hours old at times
# Ages a freshness check is written with: round figures people read at a glance.
AGES = tuple(timedelta(hours=h) for h in (1, 2, 6, 12)) + tuple(
    timedelta(days=d) for d in (1, 2, 3, 7, 14, 30, 90, 180, 365))
HARD_FACTOR = 10  # a number ten times the largest seen is a unit mix-up (grams for kilograms)
USUAL_FACTOR = 2  # over twice the largest seen is worth a look


@dataclass(frozen=True)
class Suggested:
    """One proposed check as the config writes it, and what was seen that proposes it."""

    check: dict[str, Any]
    saw: str
    enabled: bool = True  # False: written commented out, as today's data would fail it


@dataclass(frozen=True)
class Proposal:
    profile: str
    sheets: tuple[tuple[str, str], ...]  # (id, title) of the spreadsheets it came from
    checks: tuple[Suggested, ...]
    notes: tuple[str, ...] = field(default=())  # what was seen and proposes nothing


def propose(group: Sequence[SheetSurvey], profile: str) -> Proposal:
    """The checks for spreadsheets of one template (``survey.templates``), as profile ``profile``."""
    checks: list[Suggested] = []
    notes: list[str] = []
    for tab in _merged(group):
        checks.extend(_tab_checks(tab, notes))
    return Proposal(profile, tuple((one.id, one.title) for one in group), tuple(checks), tuple(notes))


def propose_all(groups: Sequence[Sequence[SheetSurvey]], profile: str) -> list[Proposal]:
    """A proposal per template (the first named ``profile``, the next ``profile_2``...), and where a
    template's key values are all found in a key of a spreadsheet alone in its template (a catalogue,
    a list of accounts), a cross-sheet check that they stay so."""
    names = [profile if number == 1 else f"{profile}_{number}" for number in range(1, len(groups) + 1)]
    proposals = [propose(group, name) for group, name in zip(groups, names, strict=True)]
    merged = [_merged(group) for group in groups]
    titles = Counter(one.title for group in groups for one in group)
    for position in range(len(groups)):
        found = [_reference(tab, key, groups, merged, position, titles)
                 for tab in merged[position] if (key := _key_of(tab)) is not None and key.keys]
        if any(found):
            proposals[position] = replace(proposals[position],
                                          checks=proposals[position].checks + tuple(c for c in found if c))
    return proposals


def _merged(group: Sequence[SheetSurvey]) -> list[TabSurvey]:
    return [reduce(TabSurvey.merged, same) for same in zip(*(one.tabs for one in group), strict=True)]


def _key_of(tab: TabSurvey) -> ColumnSurvey | None:
    return next((column for column in tab.columns if _is_key(column)), None)


def _reference(tab: TabSurvey, key: ColumnSurvey, groups: Sequence[Sequence[SheetSurvey]],
               merged: Sequence[Sequence[TabSurvey]], position: int, titles: Counter) -> Suggested | None:
    """A cross-sheet check of ``key`` against the first spreadsheet alone in its template holding a
    key with every one of its values (and more, or ``key``'s template has several spreadsheets)."""
    for other, (group, tabs) in enumerate(zip(groups, merged, strict=True)):
        if other == position or len(group) != 1:
            continue
        for their_tab in tabs:
            for column in their_tab.columns:
                if not (_is_key(column) and column.keys and key.keys <= column.keys):
                    continue
                if len(groups[position]) == 1 and key.keys == column.keys:
                    continue  # two lists of the same keys: neither is the other's reference
                (reference,) = group
                named = reference.title if titles[reference.title] == 1 else reference.id
                check = {"kind": "cross_sheet", "range": _column_range(tab, key), "other": named,
                         "other_range": _column_range(their_tab, column), "match": "keys"}
                return Suggested(check, f"every {key.header!r} of {tab.title!r} is a {column.header!r} of "
                                        f"{reference.title!r} ({their_tab.title!r}): a value it lacks fails")
    return None


def _column_range(tab: TabSurvey, column: ColumnSurvey) -> str:
    return _range(tab.title, column.index, tab.header_row + 1, column.index)


def _tab_checks(tab: TabSurvey, notes: list[str]) -> list[Suggested]:
    if tab.width == 0:
        notes.append(f"tab {tab.title!r} is empty: nothing to check")
        return []
    found = [_formula_errors(tab)]
    if tab.header_row is None:
        notes.append(f"tab {tab.title!r} has no header row (a first row of distinct texts over at "
                     "least two rows): only its formula errors are checked")
        return found
    return found + _table_checks(tab, notes)


def _formula_errors(tab: TabSurvey) -> Suggested:
    used = _range(tab.title, 0, 1, tab.width - 1)
    check = {"kind": "formula_errors", "range": used}
    if not tab.errors:
        return Suggested(check, f"tab {tab.title!r} uses {used}, no formula error in it today")
    cells = ", ".join(tab.error_cells) + (" ..." if tab.errors > len(tab.error_cells) else "")
    return Suggested(check, f"tab {tab.title!r}: {counted(tab.errors, 'cell')} show a formula error "
                            f"today ({cells}); fix them, then switch this check on", enabled=False)


def _table_checks(tab: TabSurvey, notes: list[str]) -> list[Suggested]:
    last = max(tab.width, tab.first_column + len(tab.columns)) - 1
    table = _range(tab.title, tab.first_column, tab.header_row, last)
    rows = _range(tab.title, tab.first_column, tab.header_row + 1, last)
    located = {"range": table, "header_row": tab.header_row}
    heads = ", ".join(tab.headers)
    checks = [
        Suggested({"kind": "headers", **located, "required": list(tab.headers)},
                  f"row {tab.header_row} of {tab.title!r} holds the headers {heads}: each must stay, "
                  "found by its text wherever its column moves"),
        Suggested({"kind": "not_empty", "range": rows},
                  f"{tab.title!r} has {counted(tab.table_rows, 'row')} below its header (the fewest of "
                  "any spreadsheet): it must not be emptied"),
        Suggested({"kind": "change", "range": rows, "fail": f"< -{ROWS_LOST}"},
                  f"fail when a read finds {tab.title!r} lost more than {ROWS_LOST} % of its rows "
                  "since the read before (a filter or a sort gone wrong)"),
    ]
    key = _key_of(tab)
    if key is not None:
        checks.append(Suggested({"kind": "duplicates", **located, "column": key.header},
                                f"column {key.header!r} holds no value twice: a key"))
    for column in tab.columns:
        checks.extend(_column_checks(tab, column, located, notes))
    checks.extend(_freshness(tab, notes))
    return checks


def _column_checks(tab: TabSurvey, column: ColumnSurvey, located: dict, notes: list[str]) -> list[Suggested]:
    found = []
    if column.complete:
        check = {"kind": "missing", **located, "column": column.header}
        words = ""
        if not column.missing_words:
            check["missing_values"] = list(MISSING_WORDS)
            words = ' (or "-", "n/a")'
        found.append(Suggested(check, f"column {column.header!r} has a value in every row: a blank{words} "
                                      "fails"))
    else:
        notes.append(f"column {column.header!r} of {tab.title!r} is blank in some rows: no missing check")
    if column.kinds == {"number"}:
        found.extend(_bounds(tab, column, located))
    return found


def _is_key(column: ColumnSurvey) -> bool:
    return column.complete and column.unique and column.kinds in ({"text"}, {"number"})


def _bounds(tab: TabSurvey, column: ColumnSurvey, located: dict) -> list[Suggested]:
    """A column of numbers: ``invalid`` checks that fail on text, a sign it never has, or ten times its
    largest value, and warn under its smallest or over twice its largest (rounded to round figures).
    Named with their tab: two tabs may have a column of one header, and a name is a check's own."""
    low, high = column.low, column.high
    seen = f"column {column.header!r} holds numbers from {format_number(low)} to {format_number(high)}"
    hard_low = 0 if low >= 0 else -_round_up(HARD_FACTOR * -low)
    hard_high = _round_up(HARD_FACTOR * high) if high > 0 else 0
    hard = {"kind": "invalid", "name": f"{column.header} bounds ({tab.title})", **located,
            "column": column.header, "min": hard_low, "max": hard_high}
    found = [Suggested(hard, f"{seen}: text, a number under {format_number(hard_low)} or over "
                             f"{format_number(hard_high)} ({HARD_FACTOR} x the largest) fails")]
    usual_low = _round_down(low) if low > 0 else -_round_up(USUAL_FACTOR * -low) if low < 0 else None
    usual_high = _round_up(USUAL_FACTOR * high) if high > 0 else None
    rules = {}
    if usual_low is not None and usual_low > hard_low:
        rules["min"] = usual_low
    if usual_high is not None and usual_high < hard_high:
        rules["max"] = usual_high
    if rules:
        usual = {"kind": "invalid", "name": f"{column.header} usual range ({tab.title})", **located,
                 "column": column.header, **rules, "severity": "warn"}
        said = " or ".join(f"{'under' if rule == 'min' else 'over'} {format_number(bound)}"
                           for rule, bound in rules.items())
        found.append(Suggested(usual, f"{seen}: a number {said} warns"))
    return found


def _freshness(tab: TabSurvey, notes: list[str]) -> list[Suggested]:
    """The freshest date column of the table must go on being updated; none for dates ahead of now
    (a due date is no log of updates) or older than the longest age written."""
    dated = [column for column in tab.columns
             if column.kinds == {"date"} and column.oldest_newest is not None]
    if not dated:
        return []
    column = min(dated, key=lambda c: c.oldest_newest)
    for other in dated:
        if other is not column:
            notes.append(f"column {other.header!r} of {tab.title!r} holds dates too; {column.header!r} "
                         "is fresher and has the freshness check")
    age = column.oldest_newest
    warn = _age_at_least(max(FRESH_MARGIN * age, LEAST_WARN_AGE))
    if age < timedelta(0) or warn is None:
        where = "ahead of now" if age < timedelta(0) else f"{_age_text(age)} old"
        notes.append(f"column {column.header!r} of {tab.title!r} holds dates, newest {where}: "
                     "no freshness check")
        return []
    check: dict[str, Any] = {"kind": "freshness", "range": _column_range(tab, column),
                             "warn": f"> {_age(warn)}"}
    fail = _age_at_least(3 * warn)
    if fail is not None:
        check["fail"] = f"> {_age(fail)}"
    said = f"warn > {_age(warn)}" + (f", fail > {_age(fail)}" if fail is not None else "")
    return [Suggested(check, f"column {column.header!r} holds dates, newest {_age_text(age)} ago: "
                             f"freshness {said}")]


def _range(title: str, first: int, row: int, last: int) -> str:
    """``Tab!A1:H``: from ``row`` down, columns ``first`` to ``last`` (0-based), rows left open."""
    return f"{quote_sheet_name(title)}!{column_letters(first + 1)}{row}:{column_letters(last + 1)}"


def _age_at_least(age: timedelta) -> timedelta | None:
    return next((written for written in AGES if written >= age), None)


def _age(age: timedelta) -> str:
    return format_duration(age)


def _age_text(age: timedelta) -> str:
    """An age as a person reads it: "2 h", "3 d", "25 min"."""
    minutes = age.total_seconds() / 60
    if minutes < 90:
        return f"{max(round(minutes), 1)} min"
    hours = minutes / 60
    return f"{round(hours)} h" if hours < 48 else f"{round(hours / 24)} d"


def _round_up(x: float) -> int | float:
    """The least round figure (1, 2 or 5 times a power of ten) at or above ``x`` > 0."""
    power = 10.0 ** math.floor(math.log10(x))
    for step in (1, 2, 5, 10):
        if step * power >= x * (1 - 1e-12):
            return _plain(step * power)
    raise AssertionError("unreachable: 10 x power >= x")


def _round_down(x: float) -> int | float:
    """The greatest round figure (1, 2 or 5 times a power of ten) at or below ``x`` > 0."""
    power = 10.0 ** math.floor(math.log10(x))
    for step in (5, 2, 1):
        if step * power <= x * (1 + 1e-12):
            return _plain(step * power)
    return _plain(power)


def _plain(x: float) -> int | float:
    return int(round(x)) if x >= 1 else float(f"{x:.12g}")
