"""Formulas whose values move without anyone editing the spreadsheet.

Google recomputes some functions by itself: NOW, TODAY, RAND, RANDARRAY and RANDBETWEEN, which
Google calls volatile, on every change and, as the spreadsheet's calculation setting says, every
minute or hour (the Sheets API's ``SpreadsheetProperties.autoRecalc``: "the amount of time to wait
before volatile functions are recalculated"); IMPORTRANGE, IMPORTDATA, IMPORTHTML, IMPORTXML,
IMPORTFEED and GOOGLEFINANCE fetch data from elsewhere again (Google's help on the import functions:
IMPORTDATA, IMPORTHTML and IMPORTXML check for updates every hour, formula and sheet unchanged). Such
a change is no edit, so Drive's change feed does not report it, and a round that reads only what
Drive reports changed sees it only when ``max_age`` comes due. `check ID` reads a spreadsheet's
ranges with their formulas (rendered as ``valueRenderOption=FORMULA`` does) and looks for these
functions, to tell the admin to say ``always_read = true`` in its profile.

Only the cells a check reads are looked at: a checked cell that refers to a NOW() elsewhere moves too,
and is not found this way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from monitor.core.a1 import CellRef, parse_cell

from .cells import cells_of

VOLATILE_FUNCTIONS = frozenset({
    "NOW", "TODAY", "RAND", "RANDARRAY", "RANDBETWEEN",
    "IMPORTRANGE", "IMPORTDATA", "IMPORTHTML", "IMPORTXML", "IMPORTFEED", "GOOGLEFINANCE",
})

# Text in double quotes ("" inside is a quote) and sheet names in single quotes ('' likewise) are
# not calls: ="NOW()" is text, 'RAND(1)'!A1 a reference.
_QUOTED = re.compile(r'"(?:[^"]|"")*"|\'(?:[^\']|\'\')*\'')
# A function name is letters, digits, "_" and "." (T.TEST, _xlfn.X), starting with a letter, right
# before "(", and not the tail of a longer name (MYNOW( is not NOW().
_CALL = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z][A-Za-z0-9_.]*)\s*\(")


@dataclass(frozen=True)
class VolatileCell:
    cell: CellRef  # Stock!B2
    functions: tuple[str, ...]  # the volatile functions its formula calls, in the order written

    def __post_init__(self) -> None:
        if isinstance(self.cell, str):  # given as A1 text: read once, here
            object.__setattr__(self, "cell", parse_cell(self.cell))

    def to_dict(self) -> dict[str, Any]:
        return {"cell": str(self.cell), "functions": list(self.functions)}


def volatile_functions(formula: str) -> tuple[str, ...]:
    """The volatile functions ``formula`` calls (upper case, each once, in the order written); () for
    anything that is not a formula."""
    if not formula.startswith("="):
        return ()
    names = (name.upper() for name in _CALL.findall(_QUOTED.sub('""', formula)))
    return tuple(dict.fromkeys(name for name in names if name in VOLATILE_FUNCTIONS))


def volatile_cells(formula_ranges: Iterable[Mapping[str, Any]]) -> list[VolatileCell]:
    """The cells whose formulas call a volatile function, in reading order, of ValueRanges rendered as
    ``valueRenderOption=FORMULA`` renders them; a cell in two overlapping ranges is named once."""
    found: dict[CellRef, VolatileCell] = {}
    for value_range in formula_ranges:
        for cell in cells_of(value_range, keep=_may_be_formula):
            functions = volatile_functions(cell.value)
            if functions and (at := cell.at) not in found:
                found[at] = VolatileCell(at, functions)
    return list(found.values())


def _may_be_formula(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("=")
