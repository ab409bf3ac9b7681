"""``missing``: counts the table's rows whose ``column`` is blank or one of ``missing_values``, against
the check's levels (any row by default)."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from .. import column_explain
from ..column_evaluate import SHOWN, column_not_found, columns_in_rows, is_missing, judged, table_of
from ..column_models import ColumnCheck
from ..columns import ColumnError
from ..kind import Kind
from ..result import CheckResult


class MissingCheck(ColumnCheck):
    kind: Literal["missing"] = "missing"
    column: str

    def explain(self) -> str:
        subject = f"{self.column} of {self.range} is {_missing_words(self)}"
        return column_explain.levels_sentence(self, subject)

    @model_validator(mode="after")
    def _column_usable(self) -> MissingCheck:
        self._check_column(self.column, "column")
        return self


def _missing_words(check: MissingCheck) -> str:
    return column_explain.either(["blank", *(f'"{text}"' for text in check.missing_values)])


def judge(check: MissingCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    table = table_of(check, value_range)
    try:
        (column,) = columns_in_rows(check, table, (check.column,))
    except ColumnError as error:
        return column_not_found(check, error)
    texts = check.missing_texts
    missing = [column.cell(i) for i, value in enumerate(column.values)
               if value is None or value.__class__ is str and is_missing(value, texts)]
    shown = [cell.ref for cell in missing[:SHOWN]]
    return judged(check, len(missing), len(column.rows), f"{column.label} missing", missing, shown)


KIND = Kind(MissingCheck, judge)
