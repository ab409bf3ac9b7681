"""``headers``: the header row itself: ``required`` headers present, ``forbidden`` ones absent,
``order`` kept (those headers left to right, others may stand between), ``positions`` (header ->
column letter). A header the check names that the row holds twice is a finding: the checks by header
could not tell which one is meant.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_serializer, field_validator, model_validator

from monitor.core.a1 import Ref, column_letters
from monitor.core.invalid_value import InvalidValue
from monitor.core.wording import counted

from .. import column_explain
from ..cells import Cell
from ..column_evaluate import table_of
from ..column_models import TableCheck, header_names
from ..columns import Table, is_column_letter, normalized
from ..kind import Kind
from ..result import MAX_CELLS, CheckResult, Health


class HeadersCheck(TableCheck):
    """The header row itself: ``required`` present, ``forbidden`` absent, ``order`` kept (those
    headers left to right, others may stand between), ``positions`` (header -> column letter)."""

    kind: Literal["headers"] = "headers"
    header_row: int = Field(ge=1)
    judges_rows: ClassVar[bool] = False  # "Stock!1:1" is enough
    required: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    positions: tuple[tuple[str, str], ...] = ()

    @field_validator("required", "forbidden", "order", mode="before",
                     json_schema_input_type=str | list[str])
    @classmethod
    def _header_lists(cls, value: object, info: Any) -> tuple[str, ...]:
        return header_names(value, info.field_name)

    @field_validator("positions", mode="before", json_schema_input_type=dict[str, str])
    @classmethod
    def _positions(cls, value: object) -> tuple[tuple[str, str], ...]:
        if isinstance(value, tuple):
            value = dict(value)
        fix = 'write e.g. positions = { SKU = "A", Qty = "F" } (header = column letter)'
        if not isinstance(value, dict) or not value:
            raise InvalidValue(f"positions must be a table of header = column letter, got {value!r}", fix)
        for header, letter in value.items():
            if not isinstance(letter, str) or not is_column_letter(letter.strip().upper()):
                raise InvalidValue(f"position of {header!r} is {letter!r}, not a column letter", fix)
        return tuple((header, letter.strip().upper()) for header, letter in value.items())

    @field_serializer("positions")
    def _positions_as_table(self, positions: tuple[tuple[str, str], ...]) -> dict[str, str]:
        return dict(positions)

    def explain(self) -> str:
        verb = "warns" if getattr(self, "severity", "fail") == "warn" else "fails"
        row = f"{self.range} row {self.header_row}"
        return f"{verb} when {row} {_problems(self)}"

    @model_validator(mode="after")
    def _something_to_check(self) -> HeadersCheck:
        if not (self.required or self.forbidden or self.order or self.positions):
            raise InvalidValue("headers needs something to check",
                               'add required = ["SKU", "Qty"], forbidden = [...], order = [...] '
                               'or positions = { SKU = "A" }')
        both = set(self.required) & set(self.forbidden)
        if both:
            raise InvalidValue(f"{', '.join(sorted(both))} both required and forbidden",
                               "keep each header in one of the two lists")
        return self


def _problems(check: HeadersCheck) -> str:
    """What the header row of a headers check must not do: "lacks SKU or Qty, or has Notes"."""
    problems: list[str] = []
    if check.required:
        problems.append(f"lacks {column_explain.either(check.required)}")
    if check.forbidden:
        problems.append(f"has {column_explain.either(check.forbidden)}")
    if check.order:
        problems.append(f"does not have {', '.join(check.order)} in this order")
    problems += [f"does not have {header} in column {letter}" for header, letter in check.positions]
    return column_explain.either(problems, ", or ")


def judge(check: HeadersCheck, value_range, now, tz, modified_time, past) -> CheckResult:
    table = table_of(check, value_range)
    found = {normalized(cell.value): cell for cell in reversed(table.headers)}  # the first one wins
    problems: list[str] = []
    cells: list[Ref] = []
    absent = [name for name in (*check.required, *check.order, *(h for h, _ in check.positions))
              if normalized(name) not in found]
    if absent:
        listed = ", ".join(str(cell.value).strip() for cell in table.headers) or "nothing"
        problems.append(f"{counted(len(dict.fromkeys(absent)), 'column')} missing from the header row "
                        f"({table.header_ref}): {', '.join(dict.fromkeys(absent))}; found: {listed}")
    named = {normalized(name) for name in (*check.required, *check.order, *(h for h, _ in check.positions))}
    for twice in _written_twice(table, named):
        # The checks by header cannot tell which one is meant, so a header the check names is unique.
        problems.append(f"column {str(twice[0].value).strip()!r} appears {len(twice)} times "
                        f"({', '.join(cell.ref for cell in twice)})")
        cells.extend(cell.at for cell in twice)
    for name in check.forbidden:
        if (cell := found.get(normalized(name))) is not None:
            problems.append(f"forbidden column {name!r} at {cell.ref}")
            cells.append(cell.at)
    present = [found[normalized(name)] for name in check.order if normalized(name) in found]
    if [cell.col for cell in present] != sorted(cell.col for cell in present):
        actual = sorted(present, key=lambda cell: cell.col)
        problems.append(f"columns out of order: expected {', '.join(check.order)}; found "
                        f"{', '.join(str(cell.value).strip() for cell in actual)}")
        cells.extend(cell.at for cell in actual)
    for name, letter in check.positions:
        cell = found.get(normalized(name))
        if cell is not None and column_letters(cell.col) != letter:
            problems.append(f"{name!r} is at {cell.ref}, expected in column {letter}")
            cells.append(cell.at)
    if not problems:
        shown = ", ".join(str(cell.value).strip() for cell in table.headers)
        return CheckResult(check.name, check.kind, Health.OK, f"headers as expected: {shown}",
                           len(table.headers))
    where = (table.header_at,) if table.header_at is not None else ()
    refs = tuple(dict.fromkeys([*cells, *where]))[:MAX_CELLS]
    return CheckResult(check.name, check.kind, Health.FAIL, "; ".join(problems), len(table.headers), refs)


def _written_twice(table: Table, named: set[str]) -> list[list[Cell]]:
    """The header cells of each header in ``named`` that the header row holds more than once."""
    by_name: dict[str, list[Cell]] = {}
    for cell in table.headers:
        if (key := normalized(cell.value)) in named:
            by_name.setdefault(key, []).append(cell)
    return [cells for cells in by_name.values() if len(cells) > 1]


KIND = Kind(HeadersCheck, judge)
