"""The check kinds, one module each, and the registry evaluation, the config and the engine look a
check's kind up in.

Each kind's module holds its pydantic model (with its sentences: ``explain()``, ``conditions()``), its
evaluation and what a read leaves for later judgements, as one ``Kind`` (``monitor.checks.kind``).
Adding a kind is writing its module and listing its ``KIND`` below, in the order the config's
messages list the kinds ("add kind = one of: ...").
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce
from operator import or_
from typing import Any

from ..kind import Kind
from . import (
    anomaly,
    change,
    cross_sheet,
    duplicates,
    formula_errors,
    freshness,
    headers,
    headers_changed,
    invalid,
    missing,
    not_empty,
    row_count,
    threshold,
)

REGISTRY: Mapping[str, Kind] = {kind.name: kind for kind in (
    formula_errors.KIND,
    not_empty.KIND,
    row_count.KIND,
    threshold.KIND,
    freshness.KIND,
    headers.KIND,
    missing.KIND,
    duplicates.KIND,
    invalid.KIND,
    change.KIND,
    headers_changed.KIND,
    cross_sheet.KIND,
    anomaly.KIND,
)}
BY_MODEL: Mapping[type, Kind] = {kind.model: kind for kind in REGISTRY.values()}

CHECK_KINDS: Mapping[str, type] = {name: kind.model for name, kind in REGISTRY.items()}
KINDS: tuple[str, ...] = tuple(REGISTRY)
# Any check model: the union the config's models hold (``Profile.checks``), built from the registry.
Check: Any = reduce(or_, CHECK_KINDS.values())


def kind_of(check: object) -> Kind | None:
    """The kind of a check model; None for anything else (a model of no registered kind included)."""
    return BY_MODEL.get(type(check))
