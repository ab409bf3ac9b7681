"""Error cells with Google's details: still computing, refused an import, or broken.

A read of values shows an error cell only by its code ("#N/A", "#REF!"). IMPORTRANGE, GOOGLEFINANCE
and the other functions that fetch data from outside the spreadsheet show the same codes while they
compute (a source being woken up: IMPORTRANGE "reloads when a document is first opened", Google's
IMPORTRANGE help), and IMPORTRANGE shows #REF! for good when it may not read its source ("You need
to connect these sheets", "You don't have permissions to access that sheet"). Only the grid data's
``errorValue`` (type and message) and the cell's formula tell these apart; a :class:`CellError`
carries them, and this module decides, purely, what each means:

* :func:`may_be_computing`: an external function's #N/A or #REF! other than a refusal. The read is
  worth repeating: the value is not known yet, so it is never a finding while retries remain.
* :func:`refused_import`: IMPORTRANGE may not read its source. A finding of its own
  (:func:`import_findings`): retrying cannot help, a person must grant access.
* anything else is an ordinary formula error, which ``formula_errors`` reports.

:func:`ambiguous_cell` finds, in a plain read of values, the first cell whose code could be either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

from monitor.core.a1 import CellRef, parse_cell

from .cells import cells_of
from .result import MAX_CELLS, CheckResult, Health

# Google's ErrorType -> the code the values API shows (ErrorValue.type in the Sheets API reference).
CODES = {"REF": "#REF!", "N_A": "#N/A", "DIVIDE_BY_ZERO": "#DIV/0!", "VALUE": "#VALUE!",
         "NAME": "#NAME?", "NUM": "#NUM!", "NULL_VALUE": "#NULL!", "ERROR": "#ERROR!",
         "LOADING": "Loading..."}
# The codes an external function shows while it computes (gspread issue 164: #N/A from IMPORTRANGE
# until the spreadsheet computed; pygsheets issue 219: #REF! from GOOGLEFINANCE).
AMBIGUOUS_CODES = ("#N/A", "#REF!")
_AMBIGUOUS = frozenset(AMBIGUOUS_CODES)
# Functions that fetch from outside the spreadsheet (Google's IMPORTRANGE help: "IMPORTRANGE is an
# external data function, just like IMPORTXML and GOOGLEFINANCE").
EXTERNAL_FUNCTIONS = ("IMPORTRANGE", "GOOGLEFINANCE", "IMPORTXML", "IMPORTHTML", "IMPORTDATA",
                      "IMPORTFEED")
_EXTERNAL = re.compile(r"\b(" + "|".join(EXTERNAL_FUNCTIONS) + r")\s*\(", re.IGNORECASE)
# IMPORTRANGE's refusals, as its help page words them (support.google.com/docs/answer/3093340,
# "Permission & access"): the first for a source its user owns, the second for one they may not see.
_REFUSALS = (re.compile(r"connect these sheets", re.IGNORECASE),
             re.compile(r"don.t have permissions? to access", re.IGNORECASE))
IMPORT_CHECK = "imports"
IMPORT_KIND = "import_access"


@dataclass(frozen=True)
class CellError:
    """One error cell of a read with Google's details: where, Google's ErrorType and message, and
    the formula that shows it (None for a cell without one)."""

    cell: CellRef  # Stock!F2
    type: str  # "REF", "N_A", "LOADING", ...
    message: str
    formula: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.cell, str):  # given as A1 text: read once, here
            object.__setattr__(self, "cell", parse_cell(self.cell))

    @property
    def code(self) -> str:
        return CODES.get(self.type, "#ERROR!")

    @property
    def function(self) -> str | None:
        """The external function the formula calls, upper-case; None when it calls none."""
        match = _EXTERNAL.search(self.formula or "")
        return match.group(1).upper() if match else None


def refused_import(error: CellError) -> bool:
    """IMPORTRANGE may not read its source: permanent until a person grants access."""
    return (error.type == "REF" and error.function == "IMPORTRANGE"
            and any(refusal.search(error.message) for refusal in _REFUSALS))


def may_be_computing(error: CellError) -> bool:
    """An external function's #N/A or #REF! that is no refusal: perhaps not computed yet."""
    return error.code in AMBIGUOUS_CODES and error.function is not None and not refused_import(error)


def import_findings(errors: Iterable[CellError]) -> list[CheckResult]:
    """One failing result for the IMPORTRANGE cells refused their source, or none."""
    refused = [error for error in errors if refused_import(error)]
    if not refused:
        return []
    first = refused[0]
    more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
    message = (f"{first.cell}{more}: IMPORTRANGE may not read its source ({first.code} "
               f"{first.message.strip()}); someone who can open the source spreadsheet must open "
               "this one, select the cell and click Allow access")
    cells = tuple(error.cell for error in refused[:MAX_CELLS])
    return [CheckResult(IMPORT_CHECK, IMPORT_KIND, Health.FAIL, message, len(refused), cells)]


def ambiguous_cell(value_ranges: Mapping[str, Mapping[str, Any]]) -> tuple[str, str] | None:
    """(cell, code) of the first cell of a plain read showing a code an external function also
    shows while it computes; None when there is none (the usual case, found at C speed: one hashed
    look per value, a range at a time)."""
    for value_range in value_ranges.values():
        values = value_range.get("values") or ()
        if not _AMBIGUOUS.isdisjoint(chain.from_iterable(filter(None, values))):
            for cell in cells_of(value_range, keep=lambda value: value in AMBIGUOUS_CODES):
                return cell.ref, cell.value
    return None
