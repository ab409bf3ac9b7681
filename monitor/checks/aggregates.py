"""The aggregates a check computes over a range: their names, and the metric a change or cross-sheet
check measures (non-empty rows, or one of the threshold's aggregates) and the keys it compares.

The threshold computes its own (``kinds.threshold``: a percentile, and which cells make a finding);
``metric_of`` must agree with it, value for value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from .cells import Values, is_number, values_of
from .conditions import format_number

ValueRange = Mapping[str, Any]

Aggregate = Literal["min", "max", "sum", "count", "value", "avg", "distinct", "percentile"]
AGGREGATES: tuple[str, ...] = get_args(Aggregate)
# Non-empty rows and the threshold's aggregates, but a percentile, which needs its level besides.
Metric = Literal["row_count", "min", "max", "sum", "count", "value", "avg", "distinct"]


def metric_of(aggregate: str, value_range: ValueRange | None) -> float | None:
    """Non-empty rows, or the threshold's aggregate over the range (None: undefined, as there)."""
    found = values_of(value_range)
    values = found.values
    if aggregate == "row_count":
        return len(set(found.rows))
    if aggregate == "count":
        return len(values)
    if aggregate == "distinct":
        return len({value.strip() if isinstance(value, str) else value for value in values})
    numbers = [values[index] for index in found.numeric]
    if aggregate == "avg":
        return sum(numbers) / len(numbers) if numbers else None
    if aggregate == "value":
        return values[0] if values and is_number(values[0]) else None
    if aggregate == "sum":
        return sum(numbers) if numbers or len(numbers) == len(values) else None
    if aggregate in ("min", "max"):
        return (min if aggregate == "min" else max)(numbers) if numbers else None
    # An aggregate added to the threshold's list must be computed here as the threshold computes it.
    raise ValueError(f"no metric {aggregate!r} for change and cross-sheet checks")


def keys_of(value_range: ValueRange | None) -> Values:
    """The non-empty values of a key range, as text (a key 42 and "42" are one key), where each sits."""
    found = values_of(value_range)
    return found.replaced([_key(value) for value in found.values])


def _key(value: Any) -> str:
    return format_number(value) if is_number(value) else str(value).strip()


def shown_metric(value: float | None) -> str:
    """A metric as messages show it; "none" when undefined."""
    return "none" if value is None else format_number(value)
