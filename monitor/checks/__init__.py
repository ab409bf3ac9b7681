"""Pure check evaluation over the cell values Google returned: no I/O.

Public API::

    evaluate(check, value_range, now, tz, modified_time=None) -> CheckResult
    evaluate_all(checks, value_ranges, now, tz, modified_time=None) -> list[CheckResult]
    ranges_of(checks) -> the ranges to request in one batchGet (deduplicated, in order)
    health_of(results) -> "ok" | "warn" | "fail"
    ValuesStillLoading   raised when a cell still shows "Loading..." (retry; never a finding)

Check specs (or any object/dict with the same attribute names): FormulaErrorsCheck, NotEmptyCheck,
RowCountCheck, ThresholdCheck, FreshnessCheck. Conditions: ``conditions``; durations:
``monitor.core.durations``. Date handling: ``dates``.
"""

from .cells import ValuesStillLoading
from .conditions import Condition, parse_age_condition, parse_condition
from .evaluate import FORMULA_ERRORS, evaluate, evaluate_all, format_age, ranges_of
from .result import MAX_CELLS, CheckResult, health_of
from .specs import (
    AGGREGATES,
    KINDS,
    FormulaErrorsCheck,
    FreshnessCheck,
    NotEmptyCheck,
    RowCountCheck,
    ThresholdCheck,
)

__all__ = [
    "AGGREGATES",
    "FORMULA_ERRORS",
    "KINDS",
    "MAX_CELLS",
    "CheckResult",
    "Condition",
    "FormulaErrorsCheck",
    "FreshnessCheck",
    "NotEmptyCheck",
    "RowCountCheck",
    "ThresholdCheck",
    "ValuesStillLoading",
    "evaluate",
    "evaluate_all",
    "format_age",
    "health_of",
    "parse_age_condition",
    "parse_condition",
    "ranges_of",
]
