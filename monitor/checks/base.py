"""What every check model shares: its name, severity and owner, its range and row filter, its
default name, its sentences' fallback and its written (TOML) form.

Each kind's model (``monitor.checks.kinds``) builds on ``CheckBase``. The config validates the checks
an admin wrote into those models (its error messages come from the ``InvalidValue`` their validators
raise); evaluation takes them as they are; the sandbox's dataset builds them and writes them back as
TOML (``as_written``). A check is frozen and hashable; its conditions are already parsed
``Condition`` objects.

A check without a ``name`` is named "<kind> [aggregate] <range or source>", e.g. "threshold min
Stock!F2:F": unique in most configs, and results are kept per name.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from monitor.core.a1 import A1Error, A1Range, parse_a1
from monitor.core.invalid_value import InvalidValue

from . import explain
from .fields import OwnerText
from .where import RowFilter

Severity = Literal["fail", "warn"]


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


class CheckBase(BaseModel):
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

    def conditions(self) -> str:
        """Its conditions in short, for a table's column ("fail p95 > 100; warn p95 > 50"), before
        ``explain.condition_text`` adds what a severity of "warn" means. This fallback names each
        ``fail`` / ``warn`` condition after the kind, or the kind alone."""
        return self._named_conditions(self.kind)

    def _named_conditions(self, what: str) -> str:
        """"fail <what> <condition>; warn <what> <condition>", or the kind without either."""
        return "; ".join(f"{status} {what} {condition}" for status, condition
                         in (("fail", getattr(self, "fail", None)), ("warn", getattr(self, "warn", None)))
                         if condition is not None) or self.kind

    def as_written(self) -> dict[str, Any]:
        """The check as an admin writes it in TOML: ``kind`` first, then only the parameters that
        differ from their defaults, and ``name`` only when it is not the default name."""
        written = self.model_dump(mode="json", exclude_defaults=True, exclude={"name", "kind"})
        if self.name != default_name(self.kind, getattr(self, "aggregate", None),
                                     getattr(self, "range", None) or getattr(self, "source", None),
                                     getattr(self, "percentile", None)):
            written["name"] = self.name
        return {"kind": self.kind, **written}
