"""``duplicates``: counts the rows whose key (one column, or several together) repeats an earlier
row's, against the check's levels. Keys compare trimmed, numbers by value; a row whose key is wholly
missing is the missing check's finding, not a duplicate."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import field_validator, model_validator

from monitor.core.invalid_value import InvalidValue

from .. import column_explain
from ..cells import Cell
from ..column_evaluate import SHOWN, column_not_found, columns_in_rows, is_missing, judged, table_of
from ..column_models import ColumnCheck, header_names
from ..columns import Column, ColumnError
from ..kind import Kind
from ..result import MAX_CELLS, CheckResult


class DuplicatesCheck(ColumnCheck):
    """Rows whose key (one column, or several together) repeats an earlier row's key."""

    kind: Literal["duplicates"] = "duplicates"
    column: str | None = None
    columns: tuple[str, ...] = ()

    @field_validator("columns", mode="before", json_schema_input_type=str | list[str])
    @classmethod
    def _key_columns(cls, value: object) -> tuple[str, ...]:
        return header_names(value, "columns")

    @model_validator(mode="after")
    def _one_key(self) -> DuplicatesCheck:
        if (self.column is None) == (not self.columns):
            raise InvalidValue("duplicates needs its key: column or columns, not both",
                               'write column = "SKU", or columns = ["SKU", "Warehouse"] for a key of several')
        for name in self.key_columns:
            self._check_column(name, "column")
        return self

    @property
    def key_columns(self) -> tuple[str, ...]:
        return (self.column,) if self.column is not None else self.columns

    def explain(self) -> str:
        key = " + ".join(self.key_columns)
        return column_explain.levels_sentence(self, f"{key} of {self.range} repeats an earlier row's")


def judge(check: DuplicatesCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    table = table_of(check, value_range)
    try:
        columns = columns_in_rows(check, table, check.key_columns)
    except ColumnError as error:
        return column_not_found(check, error)
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
    shown = [_repeat_text(cell, earlier, one_column) for cell, earlier in pairs[:SHOWN]]
    label = " + ".join(column.label for column in columns)
    return judged(check, len(repeats), len(lead.rows), f"{label} repeated", [cell for cell, _ in pairs],
                   shown)


def _keys(columns: list[Column], texts: frozenset[str]) -> Iterator[tuple[int, Any]]:
    """(index, key) of each data row whose key is not wholly missing: a row without its key is the
    missing check's finding, not a duplicate."""
    if len(columns) == 1:  # the usual key, one column: its values are the keys, no tuple per row
        for index, value in enumerate(columns[0].values):
            if not (value is None or value.__class__ is str and is_missing(value, texts)):
                yield index, _key(value)
        return
    for index, values in enumerate(zip(*(column.values for column in columns), strict=True)):
        if not all(value is None or value.__class__ is str and is_missing(value, texts) for value in values):
            yield index, tuple(map(_key, values))


def _key(value: Any) -> Any:
    """How a duplicate key compares: text trimmed ("A-1 " is "A-1"), numbers by value (5 is 5.0)."""
    return value.strip() if value.__class__ is str else value


def _repeat_text(cell: Cell, earlier: Cell, one_column: bool) -> str:
    if one_column:  # "Stock!A14 = A9": the same column, so the earlier cell needs no tab
        return f"{cell.ref} = {earlier.at.local}"
    return f"row {cell.row} = row {earlier.row}"


KIND = Kind(DuplicatesCheck, judge)
