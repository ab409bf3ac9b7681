"""What a check asks for: one small frozen dataclass per kind, with the config's parameter names.

Evaluation reads checks through ``spec_value`` so it also accepts any object with these attributes
(e.g. the config's own models) or a plain dict such as ``{"kind": "threshold", "range": ...}``.
Conditions may be given as strings ("< 5", "> 2h") or as already-parsed ``Condition`` objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .conditions import Condition

KINDS = ("formula_errors", "not_empty", "row_count", "threshold", "freshness")
AGGREGATES = ("min", "max", "sum", "count", "value")
FRESHNESS_SOURCES = ("range", "modified_time")

ConditionLike = Condition | str | None


@dataclass(frozen=True)
class FormulaErrorsCheck:
    kind: ClassVar[str] = "formula_errors"
    range: str
    name: str | None = None


@dataclass(frozen=True)
class NotEmptyCheck:
    kind: ClassVar[str] = "not_empty"
    range: str
    min_rows: int = 1
    name: str | None = None


@dataclass(frozen=True)
class RowCountCheck:
    kind: ClassVar[str] = "row_count"
    range: str
    min: int | None = None
    max: int | None = None
    name: str | None = None


@dataclass(frozen=True)
class ThresholdCheck:
    kind: ClassVar[str] = "threshold"
    range: str
    aggregate: str = "value"
    warn: ConditionLike = None
    fail: ConditionLike = None
    name: str | None = None


@dataclass(frozen=True)
class FreshnessCheck:
    """``source="range"``: newest date in ``range``; ``"modified_time"``: the file's modifiedTime."""

    kind: ClassVar[str] = "freshness"
    range: str | None = None
    warn: ConditionLike = None
    fail: ConditionLike = None
    source: str = "range"
    name: str | None = None


def spec_value(check: Any, key: str, default: Any = None) -> Any:
    """``check.key`` for objects, ``check[key]`` for mappings; ``default`` when absent or None."""
    value = check.get(key) if isinstance(check, Mapping) else getattr(check, key, None)
    return default if value is None else value


def check_name(check: Any) -> str:
    """The check's ``name``, else "<kind> <range>" (or "<kind> modified_time")."""
    name = spec_value(check, "name")
    if name:
        return str(name)
    kind = spec_value(check, "kind", "check")
    where = spec_value(check, "range") or spec_value(check, "source", "")
    return f"{kind} {where}".strip()
