"""What a check kind is: its model, how a read judges it, what it leaves for later judgements.

Each kind's module in ``monitor.checks.kinds`` defines one ``Kind``, and the registry there lists
them; evaluation, the config and the engine's history look a check's kind up by its type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any, Literal

from .base import CheckBase
from .buckets import BucketSize
from .past import Past
from .result import CheckResult

ValueRange = Mapping[str, Any]

# check, its range's values (its row filter applied), now, the spreadsheet's zone as handed in (a
# tzinfo, an IANA name or None: ``dates.zone``), the file's modifiedTime, and what it is judged against.
Judge = Callable[[Any, ValueRange | None, datetime, tzinfo | str | None, datetime | str | None, Past],
                 CheckResult]


@dataclass(frozen=True)
class Keep:
    """What a read leaves in its spreadsheet's history for one check (``monitor.engine.history``
    stores it, bounded): a point of a ``series`` (kept only ``over`` back), the ``headers`` it found,
    its ``own`` side of a comparison with another spreadsheet (judged again when the other changes),
    or the value of its bucket of ``buckets`` (one value an ``every`` on the spreadsheet's clock, kept
    ``over`` back: ``monitor.checks.buckets``)."""

    slot: Literal["series", "headers", "own", "buckets"]
    value: Any
    over: timedelta | None = None
    every: BucketSize | None = None


def keeps_nothing(check: Any, observed: Any, value_range: ValueRange | None) -> Keep | None:
    return None


@dataclass(frozen=True)
class Kind:
    """``model``: the pydantic model (its ``explain()`` and ``conditions()`` are the kind's words).
    ``judge``: its evaluation. ``keeps``: what a read leaves for the next one, from the check, its
    result's ``observed`` and its range's values. ``other_side``: judged against another
    spreadsheet's range, which ``Past.others`` hands in."""

    model: type[CheckBase]
    judge: Judge
    keeps: Callable[[Any, Any, ValueRange | None], Keep | None] = keeps_nothing
    other_side: bool = False

    @property
    def name(self) -> str:
        return self.model.model_fields["kind"].default
