"""The check models: what a check asks for, validated once, used by every part that needs a check.

The config validates the checks an admin wrote into these models (its error messages come from the
``InvalidValue`` their validators raise); evaluation (``evaluate``) takes them as they are; the
sandbox's dataset builds them and writes them back as TOML (``as_written``). A check is frozen and
hashable; its conditions are already parsed ``Condition`` objects.

A check without a ``name`` is named "<kind> [aggregate] <range or source>", e.g. "threshold min
Stock!F2:F": unique in most configs, and results are kept per name.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from functools import lru_cache
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from monitor.core.a1 import A1Error, A1Range, parse_a1
from monitor.core.invalid import InvalidValue

from . import explain
from .fields import A1Text, AgeConditionField, ConditionField, DurationField, OwnerText, WhereField
from .where import RowFilter

Severity = Literal["fail", "warn"]

Aggregate = Literal["min", "max", "sum", "count", "value", "avg", "distinct", "percentile"]
AGGREGATES: tuple[str, ...] = get_args(Aggregate)


def default_name(kind: object, aggregate: object = None, where: object = None,
                 percentile: object = None) -> str:
    """The name of a check written without one: "<kind> [aggregate] <range or source>"; a
    percentile names its level ("threshold p95 Stock!F2:F")."""
    if aggregate == "percentile" and isinstance(percentile, int | float):
        aggregate = explain.percentile_label(percentile)
    return " ".join(str(part) for part in (kind, aggregate, where) if part)


@lru_cache(maxsize=1024)
def _filter_ranges(where: RowFilter, a1: A1Range) -> tuple[str, ...]:
    # Asked for each check of each spreadsheet judged; a profile's few filters and ranges repeat.
    return where.ranges(a1)


class _CheckBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    # "warn": a failure of this check is told as a warning (a check worth knowing, not waking for).
    severity: Severity = "fail"
    owner: OwnerText | None = None  # who answers for its findings, instead of the spreadsheet's owner
    # A table check finds its filter's columns in the table it reads (columns.Table), by header;
    # a check of a plain range reads them by letter as ranges of their own (where_ranges).
    filters_in_table: ClassVar[bool] = False

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("name"):
            # Built from Python, a check may omit ``kind``: its model's own kind names it then.
            kind = data.get("kind") or cls.model_fields["kind"].default
            aggregate = cls.model_fields.get("aggregate")  # a defaulted one names the check as well
            aggregate = data.get("aggregate") or (None if aggregate is None or aggregate.is_required()
                                                  else aggregate.default)
            data = {**data, "name": default_name(kind, aggregate,
                                                 data.get("range") or data.get("source"),
                                                 data.get("percentile"))}
        return data

    @property
    def a1(self) -> A1Range | None:
        """The parsed range (None for a freshness check on the file's modified time, and for a named
        range on its tab, ``Stock!Quantities``, whose cells only the spreadsheet knows; a bare name
        reads as the tab it may also be)."""
        text = getattr(self, "range", None)
        try:
            return parse_a1(text) if text else None
        except A1Error:  # validated: a named range on its tab
            return None

    @property
    def row_filter(self) -> RowFilter | None:
        """Its ``where``; None for a kind that takes none. A look in the fields, as getattr missing on
        a pydantic model costs microseconds (it raises inside), and a round asks for every check."""
        return self.__dict__.get("where")

    @property
    def where_ranges(self) -> tuple[str, ...]:
        """The ranges its row filter reads (its columns over the check's rows), in the same batchGet."""
        where = self.row_filter
        if where is None or self.filters_in_table or self.a1 is None:
            return ()
        return _filter_ranges(where, self.a1)

    def _check_where(self) -> None:
        """A check of a plain range reads its filter's columns by letter over its own rows."""
        where = getattr(self, "where", None)
        if where is None:
            return
        if self.a1 is None:
            raise InvalidValue(f"where needs the rows of a range of cells, and {self.range!r} is a named "
                               "range", 'write the range as cells, e.g. "Stock!F2:F", or remove where')
        if headers := where.not_letters():
            raise InvalidValue(f"where names {', '.join(map(repr, headers))}, but {self.range} has no "
                               "header row to find it in",
                               "name the column by its letter in capitals, e.g. \"C = 'active'\"")

    def explain(self) -> str:
        """What the check does, in one sentence ("fails when Stock!F2:F has a value below 0"). Each
        kind says it from its own conditions; this is the plain fallback of a kind that does not."""
        where = getattr(self, "range", None) or getattr(self, "source", None) or "the spreadsheet"
        return explain.sentence(self, [("fail", f"its {self.kind} check of {where} does not pass")])

    def as_written(self) -> dict[str, Any]:
        """The check as an admin writes it in TOML: ``kind`` first, then only the parameters that
        differ from their defaults, and ``name`` only when it is not the default name."""
        written = self.model_dump(mode="json", exclude_defaults=True, exclude={"name", "kind"})
        if self.name != default_name(self.kind, getattr(self, "aggregate", None),
                                     getattr(self, "range", None) or getattr(self, "source", None),
                                     getattr(self, "percentile", None)):
            written["name"] = self.name
        return {"kind": self.kind, **written}


class FormulaErrorsCheck(_CheckBase):
    kind: Literal["formula_errors"] = "formula_errors"
    range: A1Text

    def explain(self) -> str:
        return explain.sentence(self, [(self.severity, f"a cell of {self.range} shows a formula error "
                                                       "(#REF!, #N/A, #DIV/0!, #VALUE!...)")])


class NotEmptyCheck(_CheckBase):
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


class RowCountCheck(_CheckBase):
    kind: Literal["row_count"] = "row_count"
    range: A1Text
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)
    where: WhereField | None = None

    def explain(self) -> str:
        bounds = [f"fewer than {self.min}" if self.min is not None else "",
                  f"more than {self.max}" if self.max is not None else ""]
        rows = " or ".join(bound for bound in bounds if bound)
        return explain.sentence(self, [(self.severity, f"{explain.scope(self)} has {rows} non-empty rows")])

    @model_validator(mode="after")
    def _bounds(self) -> RowCountCheck:
        self._check_where()
        if self.min is None and self.max is None:
            raise InvalidValue("row_count needs a bound", "add min = N, max = N or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise InvalidValue(f"min ({self.min}) is greater than max ({self.max})", "swap them")
        return self


class ThresholdCheck(_CheckBase):
    kind: Literal["threshold"] = "threshold"
    range: A1Text
    aggregate: Aggregate
    percentile: float | None = Field(default=None, gt=0, le=100)  # with aggregate = "percentile"
    where: WhereField | None = None
    warn: ConditionField | None = None
    fail: ConditionField | None = None

    @model_validator(mode="after")
    def _some_condition(self) -> ThresholdCheck:
        if self.warn is None and self.fail is None:
            raise InvalidValue("threshold needs a condition", 'add warn = "< 5", fail = "< 0" or both')
        if self.aggregate == "percentile" and self.percentile is None:
            raise InvalidValue('aggregate = "percentile" needs its level',
                               "add percentile = 95 (a number above 0, up to 100; 50 is the median)")
        if self.aggregate != "percentile" and self.percentile is not None:
            raise InvalidValue(f"percentile is set but aggregate is {self.aggregate!r}",
                               'write aggregate = "percentile", or remove percentile')
        self._check_where()
        return self

    @property
    def label(self) -> str:
        """The aggregate as messages show it: "min", "avg", "p95"."""
        if self.percentile is not None:
            return explain.percentile_label(self.percentile)
        return self.aggregate

    def explain(self) -> str:
        return explain.sentence(self, [(status, explain.threshold_clause(self, condition))
                                       for status, condition in (("fail", self.fail), ("warn", self.warn))
                                       if condition is not None])


class FreshnessCheck(_CheckBase):
    """Age conditions are ``Condition`` objects over seconds; ``warn_age``/``fail_age`` as timedelta.

    ``source="range"``: the newest date in ``range``; ``"modified_time"``: the file's modifiedTime,
    and then ``range`` is None (so a check reads a range iff its ``range`` is set).
    """

    kind: Literal["freshness"] = "freshness"
    range: A1Text | None = None
    source: Literal["range", "modified_time"] = "range"
    warn: AgeConditionField | None = None
    fail: AgeConditionField | None = None

    @model_validator(mode="after")
    def _source_and_conditions(self) -> FreshnessCheck:
        if self.source == "range" and self.range is None:
            raise InvalidValue("freshness needs a range or source = \"modified_time\"",
                               'add range = "Tab!E2:E" (dates) or source = "modified_time"')
        if self.source == "modified_time" and self.range is not None:
            raise InvalidValue('a freshness check on source = "modified_time" takes no range',
                               "remove range, or remove source to read dates from the range")
        if self.warn is None and self.fail is None:
            raise InvalidValue("freshness needs an age", 'add warn = "> 2h", fail = "> 1d" or both')
        return self

    def explain(self) -> str:
        return explain.sentence(self, [(status, explain.age_clause(self, condition))
                                       for status, condition in (("fail", self.fail), ("warn", self.warn))
                                       if condition is not None])

    @property
    def warn_age(self) -> timedelta | None:
        return timedelta(seconds=self.warn.value) if self.warn else None

    @property
    def fail_age(self) -> timedelta | None:
        return timedelta(seconds=self.fail.value) if self.fail else None


# The column checks build on _CheckBase, so they are imported once it exists; the package imports
# them from here (never column_models first), which keeps this order whatever module loads first.
from .column_models import DuplicatesCheck, HeadersCheck, InvalidCheck, MissingCheck  # noqa: E402

Check = FormulaErrorsCheck | NotEmptyCheck | RowCountCheck | ThresholdCheck | FreshnessCheck
Check = Check | HeadersCheck | MissingCheck | DuplicatesCheck | InvalidCheck
# The longest ``over`` a change check may look back: a month compares month-end closes; further back
# the history a spreadsheet keeps (its points spread over ``over``) would say little of a day.
LONGEST_OVER = timedelta(days=31)
# Non-empty rows and the threshold's aggregates, but a percentile, which needs its level besides.
Metric = Literal["row_count", "min", "max", "sum", "count", "value", "avg", "distinct"]


class ChangeCheck(_CheckBase):
    """A metric of ``range`` compared with its value at the previous read, or ``over`` ago; ``warn``
    and ``fail`` hold for the change in percent of the earlier value ("< -30": dropped by more than
    30 %); ``only_grows``: any decrease fails. The history is kept in the state between runs."""

    kind: Literal["change"] = "change"
    range: A1Text
    aggregate: Metric = "row_count"
    over: DurationField | None = None
    warn: ConditionField | None = None
    fail: ConditionField | None = None
    only_grows: bool = False

    @model_validator(mode="after")
    def _some_condition(self) -> ChangeCheck:
        if self.warn is None and self.fail is None and not self.only_grows:
            raise InvalidValue("change needs a condition",
                               'add fail = "< -30" (dropped by more than 30 %), warn = "> 50", '
                               "or only_grows = true")
        if self.over is not None and not timedelta(0) < self.over <= LONGEST_OVER:
            raise InvalidValue(f"over must be between 1s and {LONGEST_OVER.days}d",
                               'write a duration such as over = "24h", or remove over to compare '
                               "with the previous read")
        return self


class HeadersChangedCheck(_CheckBase):
    """The header row ``range`` compared with the one the previous read found."""

    kind: Literal["headers_changed"] = "headers_changed"
    range: A1Text
    level: Literal["warn", "fail"] = "warn"


class CrossSheetCheck(_CheckBase):
    """``range`` of this spreadsheet agrees with ``other_range`` of ``other`` (its id or its name in
    the config; it must be monitored too, and its range is read in its own batchGet). ``match =
    "aggregate"``: both aggregates differ by at most ``tolerance``; ``"keys"``: every value of
    ``range`` is among the values of ``other_range``."""

    kind: Literal["cross_sheet"] = "cross_sheet"
    range: A1Text
    other: str = Field(min_length=1)
    other_range: A1Text
    match: Literal["aggregate", "keys"] = "aggregate"
    aggregate: Metric = "sum"
    tolerance: float = Field(default=0, ge=0)
    level: Literal["warn", "fail"] = "fail"


Check = Check | ChangeCheck | HeadersChangedCheck | CrossSheetCheck  # kept over time or across sheets
CHECK_KINDS: Mapping[str, type[Check]] = {
    "formula_errors": FormulaErrorsCheck,
    "not_empty": NotEmptyCheck,
    "row_count": RowCountCheck,
    "threshold": ThresholdCheck,
    "freshness": FreshnessCheck,
    **{kind.model_fields["kind"].default: kind for kind in (HeadersCheck, MissingCheck, DuplicatesCheck,
                                                            InvalidCheck)},
    "change": ChangeCheck, "headers_changed": HeadersChangedCheck, "cross_sheet": CrossSheetCheck,
}
KINDS: tuple[str, ...] = tuple(CHECK_KINDS)
