"""The outcome of one check, and a spreadsheet's health from its checks' outcomes: ``Health``, the
one word for a verdict from a check's result to the state, the messages and the status page."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from monitor.core.a1 import Ref

if TYPE_CHECKING:
    from .cells import Cell
    from .conditions import Condition



class Health(StrEnum):
    """A verdict. A check's result is ok, warn or fail; a spreadsheet's health is the worst of its
    results', or error when it could not be read, or unknown before its first. Stored as these words."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    ERROR = "error"  # could not be read (it is in the DLQ)
    UNKNOWN = "unknown"  # never checked


Status = Literal[Health.OK, Health.WARN, Health.FAIL]  # what one check's result can be
MAX_CELLS = 10  # offending cell references kept per result; the message says how many in total

_RANK = {Health.OK: 0, Health.WARN: 1, Health.FAIL: 2}


@dataclass(frozen=True)
class CheckResult:
    """``observed`` is JSON-friendly: a number, a count, an ISO-8601 UTC time, or None.

    ``cells`` holds up to MAX_CELLS of the offending cells (``CellRef``: tab, row, column), in sheet
    order, or the range a finding is about (the header row a column was looked for in); they become
    A1 text only where someone reads them.
    """

    check_name: str
    kind: str
    status: Status
    message: str
    observed: Any = None
    cells: tuple[Ref, ...] = ()
    owner: str | None = None  # the check's own owner, who answers for this result

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Health(self.status))  # "warn" given: Health.WARN kept

    @property
    def is_finding(self) -> bool:
        return self.status is not Health.OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "check_name": self.check_name,
            "kind": self.kind,
            "status": self.status.value,
            "message": self.message,
            "observed": self.observed,
            "cells": [str(cell) for cell in self.cells],
            "owner": self.owner,
        }


def result_of(check: Any, status: Status, message: str, observed: Any,
              offenders: Sequence[Cell] = ()) -> CheckResult:
    """A check's result naming up to MAX_CELLS of the cells that make its finding."""
    return CheckResult(check.name, check.kind, status, message, observed,
                       tuple(cell.at for cell in offenders[:MAX_CELLS]))


def most_severe(warn: Condition | None, fail: Condition | None) -> Status:
    """The level a check with these conditions reports what it cannot judge at (an aggregate gone
    undefined): silence when the data vanished is worse than a noisy alert."""
    return Health.FAIL if fail is not None or warn is None else Health.WARN


def worst(statuses: Iterable[Status]) -> Status:
    return max(statuses, key=_RANK.__getitem__, default=Health.OK)


def health_of(results: Iterable[CheckResult]) -> Status:
    """FAIL if any check failed, else WARN if any warned, else OK (also for no checks)."""
    return worst(r.status for r in results)
