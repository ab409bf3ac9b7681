"""``not_empty``: fails when the range holds fewer non-empty rows than ``min_rows`` (one by default).

Rows are sheet rows holding at least one non-empty cell, whatever the major dimension.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from monitor.core.wording import counted

from .. import explain
from ..base import CheckBase
from ..cells import values_of
from ..fields import A1Text, WhereField
from ..kind import Kind
from ..result import CheckResult, Health, result_of


class NotEmptyCheck(CheckBase):
    kind: Literal["not_empty"] = "not_empty"
    range: A1Text
    min_rows: int = Field(default=1, ge=1)
    where: WhereField | None = None

    @model_validator(mode="after")
    def _filter(self) -> NotEmptyCheck:
        self._check_where()
        return self

    def explain(self) -> str:
        rows = "has no non-empty row" if self.min_rows == 1 else \
            f"has fewer than {self.min_rows} non-empty rows"
        return explain.sentence(self, [(self.severity, f"{explain.scope(self)} {rows}")])

    def conditions(self) -> str:
        return f"fail rows < {self.min_rows}"


def non_empty_rows(value_range) -> int:
    """The sheet rows of the range holding a value (``row_count`` counts them too)."""
    return len(set(values_of(value_range).rows))


def judge(check: NotEmptyCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    min_rows = check.min_rows
    rows = non_empty_rows(value_range)
    found = counted(rows, "non-empty row")
    if rows >= min_rows:
        return result_of(check, Health.OK, found, rows)
    if rows == 0:
        return result_of(check, Health.FAIL, "no non-empty rows" + _needed(min_rows), rows)
    return result_of(check, Health.FAIL, f"only {found}{_needed(min_rows)}", rows)


def _needed(min_rows: int) -> str:
    return f" (at least {min_rows} required)"


KIND = Kind(NotEmptyCheck, judge)
