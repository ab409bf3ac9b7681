"""``row_count``: fails when the range holds fewer than ``min`` or more than ``max`` non-empty rows."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from monitor.core.invalid_value import InvalidValue
from monitor.core.wording import counted

from .. import explain
from ..base import CheckBase
from ..fields import A1Text, WhereField
from ..kind import Kind
from ..result import CheckResult, result_of
from .not_empty import non_empty_rows


class RowCountCheck(CheckBase):
    kind: Literal["row_count"] = "row_count"
    range: A1Text
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)
    where: WhereField | None = None

    def explain(self) -> str:
        rows = self._bounds_text("fewer than ", "more than ")
        return explain.sentence(self, [(self.severity, f"{explain.scope(self)} has {rows} non-empty rows")])

    def conditions(self) -> str:
        return "fail " + self._bounds_text("rows < ", "rows > ")

    def _bounds_text(self, below: str, above: str) -> str:
        bounds = [f"{below}{self.min}" if self.min is not None else "",
                  f"{above}{self.max}" if self.max is not None else ""]
        return " or ".join(bound for bound in bounds if bound)

    @model_validator(mode="after")
    def _bounds(self) -> RowCountCheck:
        self._check_where()
        if self.min is None and self.max is None:
            raise InvalidValue("row_count needs a bound", "add min = N, max = N or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise InvalidValue(f"min ({self.min}) is greater than max ({self.max})", "swap them")
        return self


def judge(check: RowCountCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    low, high = check.min, check.max
    rows = non_empty_rows(value_range)
    if low is not None and rows < low:
        return result_of(check, "fail", f"{counted(rows, 'row')} < min {low}", rows)
    if high is not None and rows > high:
        return result_of(check, "fail", f"{counted(rows, 'row')} > max {high}", rows)
    return result_of(check, "ok", counted(rows, "row"), rows)


KIND = Kind(RowCountCheck, judge)
