"""Checks: the one check model and pure evaluation over the cell values Google returned (no I/O).

Public API::

    FormulaErrorsCheck, NotEmptyCheck, RowCountCheck, ThresholdCheck, FreshnessCheck   the models
    HeadersCheck, MissingCheck, DuplicatesCheck, InvalidCheck   column checks (``column_models``)
    Table, ColumnError   a table read in one ValueRange, its columns by header or letter (``columns``)
    Check                the union of those; CHECK_KINDS maps each ``kind`` to its model
    evaluate(check, value_range, now, tz, modified_time=None) -> CheckResult
    evaluate_all(checks, value_ranges, now, tz, modified_time=None) -> list[CheckResult]
    judge_age(check, newest, cell, now, tz) -> a freshness check's result from its newest moment alone
    ranges_of(checks) -> the ranges to request in one batchGet (deduplicated, in order)
    needs_modified_time(checks) -> whether one Drive request for the file's modifiedTime is needed
    health_of(results) -> "ok" | "warn" | "fail"
    ValuesStillLoading   raised when a cell still shows "Loading..." (retry; never a finding)
    volatile_cells(formula_ranges) -> the cells whose formulas move without an edit (NOW(), IMPORTRANGE)

Models: ``models`` (field types in ``fields``). Conditions: ``conditions``; durations are
``monitor.core.durations``. Date handling: ``dates``.
"""

from .cells import ValuesStillLoading
from .columns import ColumnError, Table
from .conditions import Condition, parse_age_condition, parse_condition
from .evaluate import (
    FORMULA_ERRORS,
    evaluate,
    evaluate_all,
    format_age,
    judge_age,
    needs_modified_time,
    ranges_of,
)
from .models import (
    AGGREGATES,
    CHECK_KINDS,
    KINDS,
    ChangeCheck,
    Check,
    CrossSheetCheck,
    DuplicatesCheck,
    FormulaErrorsCheck,
    FreshnessCheck,
    HeadersChangedCheck,
    HeadersCheck,
    InvalidCheck,
    MissingCheck,
    NotEmptyCheck,
    RowCountCheck,
    ThresholdCheck,
)
from .past import OtherSide, Past, compare_cross, keys_of, metric_of
from .result import MAX_CELLS, CheckResult, health_of, worst
from .volatile import VOLATILE_FUNCTIONS, VolatileCell, volatile_cells, volatile_functions

__all__ = [
    "OtherSide", "Past", "compare_cross", "keys_of", "metric_of",
    "ChangeCheck", "CrossSheetCheck", "HeadersChangedCheck",
    "AGGREGATES",
    "CHECK_KINDS",
    "FORMULA_ERRORS",
    "KINDS",
    "MAX_CELLS",
    "Check",
    "ColumnError",
    "DuplicatesCheck",
    "HeadersCheck",
    "InvalidCheck",
    "MissingCheck",
    "Table",
    "CheckResult",
    "Condition",
    "FormulaErrorsCheck",
    "FreshnessCheck",
    "NotEmptyCheck",
    "RowCountCheck",
    "ThresholdCheck",
    "VOLATILE_FUNCTIONS",
    "ValuesStillLoading",
    "VolatileCell",
    "evaluate",
    "judge_age",
    "evaluate_all",
    "format_age",
    "health_of",
    "worst",
    "needs_modified_time",
    "parse_age_condition",
    "parse_condition",
    "ranges_of",
    "volatile_cells",
    "volatile_functions",
]
