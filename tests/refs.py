"""References as people read them: a result's or finding's cells in A1 text, to compare with it."""

from __future__ import annotations

from collections.abc import Iterable


def a1(refs: Iterable[object]) -> tuple[str, ...]:
    """("Stock!F7", "Stock!1:1") for cells and ranges kept as typed references."""
    return tuple(str(ref) for ref in refs)
