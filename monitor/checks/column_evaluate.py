"""Evaluation of the column-aware checks (headers, missing, duplicates, invalid): pure, no I/O.

Each reads its table from the range's ValueRange (``columns.Table``). A column the check names
that is not in the header row fails the check with the resolver's words ("column 'Qty' not found
in Stock!1:1; found: ..."), whatever its levels: the data cannot be judged, and silence when a
column vanished is worse than an alert. Findings name the rows they counted, first ones first.

Counts are over the table's data rows (rows below the header row holding any value), those its row
filter (``where``) passes when it has one: "missing" counts blank cells and the check's
``missing_values``; "invalid" judges only values that are not missing, nor a formula's error code
(formula_errors tells those); "duplicates" counts rows whose key repeats an earlier row's, ignoring
rows whose key is wholly missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from monitor.core.wording import counted

from .cells import FORMULA_ERRORS, Cell, is_number
from .columns import Column, ColumnError, Table, normalized
from .conditions import format_number
from .formats import FORMATS
from .models import DuplicatesCheck, HeadersCheck, InvalidCheck, MissingCheck
from .rates import share
from .result import MAX_CELLS, CheckResult

if TYPE_CHECKING:  # at run time the models come through .models, which imports column_models itself
    from .column_models import _ColumnCheck

_SHOWN = 3  # rows a message names; the result's cells carry up to MAX_CELLS


# The last table read, kept for the next check: a profile's column checks share one table, and
# reading it once per check would cost as much as the checks themselves. One entry, replaced whole
# (so a worker thread sees either the old pair or the new one), holding its ValueRange alive.
_last_table: tuple[Any, int | None, Table] | None = None


def _table(check: Any, value_range: Any) -> Table:
    global _last_table
    last = _last_table
    if last is not None and last[0] is value_range and last[1] == check.header_row and value_range:
        return last[2]
    table = Table.read(value_range, check.header_row, check.range)
    _last_table = (value_range, check.header_row, table)
    return table


def _columns(check: _ColumnCheck, table: Table, names: Sequence[str]) -> list[Column]:
    """The columns ``names`` of ``table``, in the rows the check's filter passes (all without one).
    Raises ColumnError for a column, the filter's too, that the table does not hold."""
    columns = [table.column(name) for name in names]
    if check.where is None:
        return columns
    rows = check.where.rows_in(table)
    return [column.only(rows) for column in columns]


def _column_missing(check: Any, error: ColumnError) -> CheckResult:
    return CheckResult(check.name, check.kind, "fail", error.message, None, (error.ref,))


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else format_number(value) if is_number(value) else str(value)
    return text if len(text) <= 30 else text[:27] + "..."


def _more(shown: list[str], total: int) -> str:
    rest = total - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest > 0 else "")


def _judged(check: _ColumnCheck, count: int, total: int, what: str, offenders: Sequence[Cell],
            shown: list[str]) -> CheckResult:
    """The verdict of a count of rows against the check's levels, fail first; the rows are those its
    filter passes, when it has one, and the message says so after them."""
    refs = tuple(cell.ref for cell in offenders[:MAX_CELLS])
    rows = f"{count} of {total}"
    filtered = f" where {check.where}" if check.where is not None else ""
    if count == 0:
        none = f"{what} in none of {counted(total, 'row')}{filtered}"
        return CheckResult(check.name, check.kind, "ok", none, 0)
    summary = f"{what} in {rows} rows{filtered} ({share(count, total)}): {_more(shown, count)}"
    for status, rate in check.levels:
        if rate.holds(count, total):
            return CheckResult(check.name, check.kind, status, f"{summary} ({rate})", count, refs)
    return CheckResult(check.name, check.kind, "ok", summary, count, refs)


def _is_missing(value: Any, missing_texts: frozenset[str]) -> bool:
    if value is None:
        return True
    if value.__class__ is not str:
        return False
    return not value.strip() or (bool(missing_texts) and " ".join(value.split()).casefold() in missing_texts)


# --- missing -------------------------------------------------------------------------------------


def _missing(check: MissingCheck, value_range, now, tz, modified_time) -> CheckResult:
    table = _table(check, value_range)
    try:
        (column,) = _columns(check, table, (check.column,))
    except ColumnError as error:
        return _column_missing(check, error)
    texts = check.missing_texts
    missing = [column.cell(i) for i, value in enumerate(column.values)
               if value is None or value.__class__ is str and _is_missing(value, texts)]
    shown = [cell.ref for cell in missing[:_SHOWN]]
    return _judged(check, len(missing), len(column.rows), f"{column.label} missing", missing, shown)


# --- duplicates ----------------------------------------------------------------------------------


def _duplicates(check: DuplicatesCheck, value_range, now, tz, modified_time) -> CheckResult:
    table = _table(check, value_range)
    try:
        columns = _columns(check, table, check.key_columns)
    except ColumnError as error:
        return _column_missing(check, error)
    texts = check.missing_texts
    first_seen: dict[Any, int] = {}
    repeats: list[tuple[int, int]] = []  # (index of the repeating row, index of the first one)
    for index, key in _keys(columns, texts):
        first = first_seen.setdefault(key, index)
        if first != index:
            repeats.append((index, first))
    lead = columns[0]
    pairs = [(lead.cell(again), lead.cell(first)) for again, first in repeats[:MAX_CELLS]]
    one_column = len(columns) == 1
    shown = [_repeat_text(cell, earlier, one_column) for cell, earlier in pairs[:_SHOWN]]
    label = " + ".join(column.label for column in columns)
    return _judged(check, len(repeats), len(lead.rows), f"{label} repeated", [cell for cell, _ in pairs],
                   shown)


def _keys(columns: list[Column], texts: frozenset[str]) -> Iterator[tuple[int, Any]]:
    """(index, key) of each data row whose key is not wholly missing: a row without its key is the
    missing check's finding, not a duplicate."""
    if len(columns) == 1:  # the usual key, one column: its values are the keys, no tuple per row
        for index, value in enumerate(columns[0].values):
            if not (value is None or value.__class__ is str and _is_missing(value, texts)):
                yield index, _key(value)
        return
    for index, values in enumerate(zip(*(column.values for column in columns), strict=True)):
        if not all(value is None or value.__class__ is str and _is_missing(value, texts) for value in values):
            yield index, tuple(map(_key, values))


def _key(value: Any) -> Any:
    """How a duplicate key compares: text trimmed ("A-1 " is "A-1"), numbers by value (5 is 5.0)."""
    return value.strip() if value.__class__ is str else value


def _key_text(value: Any) -> str:
    """How keys compare: numbers as a spreadsheet shows them (5 and 5.0 are one), text trimmed."""
    if is_number(value):
        return format_number(value)
    return "" if value is None else " ".join(str(value).split())


def _repeat_text(cell: Cell, earlier: Cell, one_column: bool) -> str:
    if one_column:  # "Stock!A14 = A9": the same column, so the earlier cell needs no tab
        return f"{cell.ref} = {earlier.ref.removeprefix(cell.prefix)}"
    return f"row {cell.row} = row {earlier.row}"


# --- invalid -------------------------------------------------------------------------------------


def _invalid(check: InvalidCheck, value_range, now, tz, modified_time) -> CheckResult:
    table = _table(check, value_range)
    try:
        (column,) = _columns(check, table, (check.column,))
    except ColumnError as error:
        return _column_missing(check, error)
    rules = _rules(check)
    texts = check.missing_texts
    offenders: list[Cell] = []
    count = 0
    shown: list[str] = []
    for index, value in enumerate(column.values):
        if value is None or value.__class__ is str and (_is_missing(value, texts) or _shows_error(value)):
            continue
        for test, reason in rules:
            if not test(value):
                count += 1
                if len(offenders) < MAX_CELLS:
                    offenders.append(column.cell(index))
                if len(shown) < _SHOWN:
                    shown.append(f"{offenders[-1].ref} {_show(value)} ({reason})")
                break
    return _judged(check, count, len(column.rows), f"{column.label} invalid", offenders, shown)


def _shows_error(text: str) -> bool:
    # A cell showing #N/A or #REF! is formula_errors' finding (and the import check's): judged here
    # too, it would be told twice, as a value breaking every rule.
    return "#" in text and text.strip() in FORMULA_ERRORS


Rule = tuple[Callable[[Any], bool], str]


def _numeric(value: Any) -> bool:
    # is_number, spelled for the loop over every value: bools are ints but not quantities.
    return (value.__class__ is int or value.__class__ is float) or (
        isinstance(value, int | float) and not isinstance(value, bool))


def _rules(check: InvalidCheck) -> list[Rule]:
    """Each rule as (test, what a value breaking it is), in the order findings explain them."""
    rules: list[Rule] = []
    if check.valid_values:
        allowed = frozenset(_key_text(value) for value in check.valid_values)
        # Most values are written exactly as listed (5, "active"): a set test, before the spelling.
        written = frozenset(check.valid_values)
        rules.append((lambda v: v in written or _key_text(v) in allowed, "not a valid value"))
    if check.format == "number":
        rules.append((_numeric, "not a number"))
    elif check.format is not None:
        test, noun = FORMATS[check.format]
        rules.append((test, f"not {noun}"))
    if check.regex is not None:
        pattern = re.compile(check.regex)
        rules.append((lambda v: pattern.fullmatch(_key_text(v)) is not None, "does not match regex"))
    if check.min is not None or check.max is not None:
        rules.append((_numeric, "not a number"))
    if check.min is not None:
        low = check.min
        rules.append((lambda v: v >= low, f"below min {format_number(low)}"))
    if check.max is not None:
        high = check.max
        rules.append((lambda v: v <= high, f"above max {format_number(high)}"))
    if check.min_length is not None:
        shortest = check.min_length
        rules.append((lambda v: len(_key_text(v)) >= shortest, f"shorter than {shortest}"))
    if check.max_length is not None:
        longest = check.max_length
        rules.append((lambda v: len(_key_text(v)) <= longest, f"longer than {longest}"))
    return rules


# --- headers -------------------------------------------------------------------------------------


def _headers(check: HeadersCheck, value_range, now, tz, modified_time) -> CheckResult:
    table = _table(check, value_range)
    found = {normalized(cell.value): cell for cell in reversed(table.headers)}  # the first one wins
    problems: list[str] = []
    cells: list[str] = []
    absent = [name for name in (*check.required, *check.order, *(h for h, _ in check.positions))
              if normalized(name) not in found]
    if absent:
        listed = ", ".join(str(cell.value).strip() for cell in table.headers) or "nothing"
        problems.append(f"{counted(len(dict.fromkeys(absent)), 'column')} missing from the header row "
                        f"({table.header_ref}): {', '.join(dict.fromkeys(absent))}; found: {listed}")
    named = {normalized(name) for name in (*check.required, *check.order, *(h for h, _ in check.positions))}
    for twice in _written_twice(table, named):
        # The checks by header cannot tell which one is meant, so a header the check names is unique.
        problems.append(f"column {str(twice[0].value).strip()!r} appears {len(twice)} times "
                        f"({', '.join(cell.ref for cell in twice)})")
        cells.extend(cell.ref for cell in twice)
    for name in check.forbidden:
        if (cell := found.get(normalized(name))) is not None:
            problems.append(f"forbidden column {name!r} at {cell.ref}")
            cells.append(cell.ref)
    present = [found[normalized(name)] for name in check.order if normalized(name) in found]
    if [cell.col for cell in present] != sorted(cell.col for cell in present):
        actual = sorted(present, key=lambda cell: cell.col)
        problems.append(f"columns out of order: expected {', '.join(check.order)}; found "
                        f"{', '.join(str(cell.value).strip() for cell in actual)}")
        cells.extend(cell.ref for cell in actual)
    for name, letter in check.positions:
        cell = found.get(normalized(name))
        if cell is not None and cell.ref.removeprefix(cell.prefix).rstrip("0123456789") != letter:
            problems.append(f"{name!r} is at {cell.ref}, expected in column {letter}")
            cells.append(cell.ref)
    if not problems:
        shown = ", ".join(str(cell.value).strip() for cell in table.headers)
        return CheckResult(check.name, check.kind, "ok", f"headers as expected: {shown}",
                           len(table.headers))
    refs = tuple(dict.fromkeys([*cells, table.header_ref]))[:MAX_CELLS]
    return CheckResult(check.name, check.kind, "fail", "; ".join(problems), len(table.headers), refs)


def _written_twice(table: Table, named: set[str]) -> list[list[Cell]]:
    """The header cells of each header in ``named`` that the header row holds more than once."""
    by_name: dict[str, list[Cell]] = {}
    for cell in table.headers:
        if (key := normalized(cell.value)) in named:
            by_name.setdefault(key, []).append(cell)
    return [cells for cells in by_name.values() if len(cells) > 1]


COLUMN_EVALUATORS: dict[type, Callable[..., CheckResult]] = {
    HeadersCheck: _headers,
    MissingCheck: _missing,
    DuplicatesCheck: _duplicates,
    InvalidCheck: _invalid,
}

