"""What checks kept over time or across spreadsheets are judged against, handed in: evaluation stays
pure.

The caller (``monitor.engine.history``) hands in ``Past``: a change check's series of earlier points,
a header row's earlier headers, an anomaly check's buckets, the other side of a cross-sheet check as
its spreadsheet's last read found it. Each result's ``observed`` is then the new point to keep; what
each kind keeps is its ``Kind.keeps`` (``monitor.checks.kinds``), and keeping it, bounded, is the
engine's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .buckets import Buckets

NOT_READ = object()  # an OtherSide's value before the other spreadsheet's first read


@dataclass(frozen=True)
class OtherSide:
    """The other spreadsheet's range as its last read found it: ``value`` (an aggregate, or the sorted
    distinct keys; ``NOT_READ`` before its first read), or ``problem`` when it cannot be read now."""

    spreadsheet: str  # its name, as messages show it
    value: Any = None
    read_at: datetime | None = None
    problem: str | None = None


@dataclass(frozen=True)
class Past:
    """What a spreadsheet's checks are judged against, by check name."""

    series: Mapping[str, tuple[tuple[datetime, Any], ...]] = field(default_factory=dict)
    headers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    others: Mapping[str, OtherSide] = field(default_factory=dict)
    buckets: Mapping[str, Buckets] = field(default_factory=dict)


NO_PAST = Past()
