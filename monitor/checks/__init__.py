"""Checks: the one check model and pure evaluation over the cell values Google returned (no I/O).

Public API::

    FormulaErrorsCheck, NotEmptyCheck, RowCountCheck, ThresholdCheck, FreshnessCheck   the models
    HeadersCheck, MissingCheck, DuplicatesCheck, InvalidCheck   column checks (``column_models``)
    Table, ColumnError   a table read in one ValueRange, its columns by header or letter (``columns``)
    ChangeCheck, HeadersChangedCheck, CrossSheetCheck, AnomalyCheck   checks judged against ``Past``
    Buckets, bucket_number, with_reading   an anomaly check's history, one value per bucket
    Check                the union of those; CHECK_KINDS maps each ``kind`` to its model
    REGISTRY, kind_of(check) -> each kind's ``Kind``: model, evaluation, what a read keeps (``Keep``)
    evaluate(check, value_range, now, tz, modified_time=None) -> CheckResult
    evaluate_all(checks, value_ranges, now, tz, modified_time=None) -> list[CheckResult]
    judge_age(check, newest, cell, now, tz) -> a freshness check's result from its newest moment alone
    ranges_of(checks) -> the ranges to request in one batchGet (deduplicated, in order)
    needs_modified_time(checks) -> whether one Drive request for the file's modifiedTime is needed
    health_of(results) -> Health.OK | Health.WARN | Health.FAIL
    ValuesStillLoading   raised when a cell still shows "Loading..." (retry; never a finding)
    volatile_cells(formula_ranges) -> the cells whose formulas move without an edit (NOW(), IMPORTRANGE)

Each kind is one module of ``kinds`` (its model, evaluation, sentences and what it keeps), found
through the registry there (``REGISTRY``, ``kind_of``). Shared by the models: ``base`` (and field
types in ``fields``, the column checks' bases in ``column_models``). Conditions: ``conditions``;
durations are ``monitor.core.durations``. Date handling: ``dates``. Aggregates: ``aggregates``.
"""

from .aggregates import AGGREGATES, keys_of, metric_of
from .buckets import Buckets, bucket_number, with_reading
from .cells import FORMULA_ERRORS, ValuesStillLoading
from .columns import ColumnError, Table
from .conditions import Condition, parse_age_condition, parse_condition
from .evaluate import evaluate, evaluate_all, format_age, needs_modified_time, ranges_of
from .kind import Keep, Kind
from .kinds import CHECK_KINDS, KINDS, REGISTRY, Check, kind_of
from .kinds.anomaly import AnomalyCheck, banded, still_learning
from .kinds.change import ChangeCheck
from .kinds.cross_sheet import CrossSheetCheck, compare_cross
from .kinds.duplicates import DuplicatesCheck
from .kinds.formula_errors import FormulaErrorsCheck
from .kinds.freshness import FreshnessCheck, judge_age
from .kinds.headers import HeadersCheck
from .kinds.headers_changed import HeadersChangedCheck
from .kinds.invalid import InvalidCheck
from .kinds.missing import MissingCheck
from .kinds.not_empty import NotEmptyCheck
from .kinds.row_count import RowCountCheck
from .kinds.threshold import ThresholdCheck
from .past import NOT_READ, OtherSide, Past
from .result import MAX_CELLS, CheckResult, Health, health_of, worst
from .volatile import VOLATILE_FUNCTIONS, VolatileCell, volatile_cells, volatile_functions

__all__ = [
    "NOT_READ", "OtherSide", "Past", "compare_cross", "keys_of", "metric_of",
    "Keep", "Kind", "REGISTRY", "kind_of",
    "ChangeCheck", "CrossSheetCheck", "HeadersChangedCheck", "AnomalyCheck",
    "Buckets", "bucket_number", "with_reading", "still_learning", "banded",
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
    "Health",
    "health_of",
    "worst",
    "needs_modified_time",
    "parse_age_condition",
    "parse_condition",
    "ranges_of",
    "volatile_cells",
    "volatile_functions",
]
