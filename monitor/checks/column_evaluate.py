"""What the column checks' evaluations share (their kinds are in ``monitor.checks.kinds``): the
table read once for all of a profile's column checks, the columns in the rows a filter passes, and a
count of rows judged against the check's levels. Pure, no I/O.

Each reads its table from the range's ValueRange (``columns.Table``). A column the check names
that is not in the header row fails the check with the resolver's words ("column 'Qty' not found
in Stock!1:1; found: ..."), whatever its levels: the data cannot be judged, and silence when a
column vanished is worse than an alert. Findings name the rows they counted, first ones first.

Counts are over the table's data rows (rows below the header row holding any value), those its row
filter (``where``) passes when it has one; a value is missing when blank or one of the check's
``missing_values``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from monitor.core.wording import counted

from .cells import Cell
from .column_models import ColumnCheck
from .columns import Column, ColumnError, Table
from .rates import share
from .result import MAX_CELLS, CheckResult, Health

SHOWN = 3  # rows a message names; the result's cells carry up to MAX_CELLS


# The last table read, kept for the next check: a profile's column checks share one table, and
# reading it once per check would cost as much as the checks themselves. One entry, replaced whole
# (so a worker thread sees either the old pair or the new one), holding its ValueRange alive.
_last_table: tuple[Any, int | None, Table] | None = None


def table_of(check: Any, value_range: Any) -> Table:
    global _last_table
    last = _last_table
    if last is not None and last[0] is value_range and last[1] == check.header_row and value_range:
        return last[2]
    table = Table.read(value_range, check.header_row, check.range)
    _last_table = (value_range, check.header_row, table)
    return table


def columns_in_rows(check: ColumnCheck, table: Table, names: Sequence[str]) -> list[Column]:
    """The columns ``names`` of ``table``, in the rows the check's filter passes (all without one).
    Raises ColumnError for a column, the filter's too, that the table does not hold."""
    columns = [table.column(name) for name in names]
    if check.where is None:
        return columns
    rows = check.where.rows_in(table)
    return [column.only(rows) for column in columns]


def column_not_found(check: Any, error: ColumnError) -> CheckResult:
    cells = (error.where,) if error.where is not None else ()
    return CheckResult(check.name, check.kind, Health.FAIL, error.message, None, cells)


def _more(shown: list[str], total: int) -> str:
    rest = total - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest > 0 else "")


def judged(check: ColumnCheck, count: int, total: int, what: str, offenders: Sequence[Cell],
          shown: list[str]) -> CheckResult:
    """The verdict of a count of rows against the check's levels, fail first; the rows are those its
    filter passes, when it has one, and the message says so after them."""
    refs = tuple(cell.at for cell in offenders[:MAX_CELLS])
    rows = f"{count} of {total}"
    filtered = f" where {check.where}" if check.where is not None else ""
    if count == 0:
        none = f"{what} in none of {counted(total, 'row')}{filtered}"
        return CheckResult(check.name, check.kind, Health.OK, none, 0)
    summary = f"{what} in {rows} rows{filtered} ({share(count, total)}): {_more(shown, count)}"
    for status, rate in check.levels:
        if rate.holds(count, total):
            return CheckResult(check.name, check.kind, status, f"{summary} ({rate})", count, refs)
    return CheckResult(check.name, check.kind, Health.OK, summary, count, refs)


def is_missing(value: Any, missing_texts: frozenset[str]) -> bool:
    if value is None:
        return True
    if value.__class__ is not str:
        return False
    return not value.strip() or (bool(missing_texts) and " ".join(value.split()).casefold() in missing_texts)
