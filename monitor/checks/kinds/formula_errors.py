"""``formula_errors``: fails when a cell of the range shows a formula error (#REF!, #N/A, ...)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from monitor.core.wording import counted

from .. import explain
from ..base import CheckBase
from ..cells import FORMULA_ERRORS, coded_cells, refs_text
from ..fields import A1Text
from ..kind import Kind
from ..result import CheckResult, Health, result_of


class FormulaErrorsCheck(CheckBase):
    kind: Literal["formula_errors"] = "formula_errors"
    range: A1Text

    def explain(self) -> str:
        return explain.sentence(self, [(self.severity, f"a cell of {self.range} shows a formula error "
                                                       "(#REF!, #N/A, #DIV/0!, #VALUE!...)")])

    def conditions(self) -> str:
        return "fail on any formula error"


def judge(check: FormulaErrorsCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    errors = coded_cells(value_range, _error_code)  # a whole tab's values: cells only for errors
    if not errors:
        return result_of(check, Health.OK, "no formula errors", 0)
    by_code = Counter(_error_code(c.value) for c in errors)
    cells = counted(len(errors), "cell")
    if len(by_code) == 1:
        (code,) = by_code
        verb = "shows" if len(errors) == 1 else "show"
        message = f"{cells} {verb} {code} ({refs_text(errors)})"
    else:
        counts = ", ".join(f"{code} ×{n}" for code, n in by_code.most_common())
        message = f"{cells} show formula errors: {counts} ({refs_text(errors)})"
    return result_of(check, Health.FAIL, message, len(errors), errors)


def _error_code(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() in FORMULA_ERRORS:
        return value.strip()
    return None


KIND = Kind(FormulaErrorsCheck, judge)
