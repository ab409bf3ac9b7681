"""Row filters: ``where = "C = 'active'"`` keeps a check to the rows whose other column matches.

A tiny grammar, parsed once at load (nothing an admin writes is ever evaluated as code)::

    filter  := clause (("and" | "or") clause)*        and binds tighter than or
    clause  := column op value | column "in" "(" value ("," value)* ")"
    column  := a header (a word, or any text in double quotes) or a column letter

A check that reads a table with a header row (``monitor.checks.columns``) finds the filter's columns
by header there; a check of a plain range names them by letter (``C``) and reads them over its own
rows in the same batchGet.
    op      := = != <> < <= > >= contains
    value   := 'text' | "text" | a number

Text compares as written (case and all), after trimming the cell's spaces; ``contains`` looks for
the text inside the cell's. ``<``, ``<=``, ``>``, ``>=`` hold only for a numeric cell and a number.
An empty cell equals nothing, so ``!=`` holds for it, as the cell shows no such value.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from monitor.core.a1 import A1Range, column_index, format_a1

from .cells import Values, is_empty, is_number, values_of
from .columns import Table
from .conditions import format_number

WHERE_FORMS = ("a column, an operator and a value, e.g. \"C = 'active'\", \"D > 0\", "
               "\"C in ('active', 'paused')\", \"E contains 'urgent'\" (operators = != < <= > >= in "
               "contains; join clauses with and / or; a table with a header row names columns by "
               "header: \"Status = 'active'\")")

_TOKEN = re.compile(r"""\s*(?:
    (?P<text>'[^']*'|"[^"]*")
  | (?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<op><=|>=|!=|<>|=|<|>|\(|\)|,)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
)""", re.VERBOSE)
_LETTERS = re.compile(r"[A-Z]{1,3}")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Clause:
    """``column op value``: ``column`` as written (a header or a letter); ``values`` one value, or
    several for in."""

    column: str
    op: str
    values: tuple[str | float, ...]

    def __post_init__(self) -> None:
        # Equality against several values is a set lookup: a filter runs over every row read.
        texts = frozenset(value for value in self.values if isinstance(value, str))
        object.__setattr__(self, "_texts", texts)
        object.__setattr__(self, "_numbers", frozenset(self.values) - texts)

    def holds(self, cell: Any) -> bool:
        if cell is None:
            return self.op == "!="
        op = self.op
        if op in ("=", "in", "!="):
            if isinstance(cell, str):
                equal = cell.strip() in self._texts  # type: ignore[attr-defined]
            else:
                equal = is_number(cell) and cell in self._numbers  # type: ignore[attr-defined]
            return equal != (op == "!=")
        if op == "contains":
            return isinstance(cell, str) and str(self.values[0]) in cell
        value = self.values[0]
        if not is_number(cell) or not is_number(value):
            return False
        return _ORDER[op](cell, value)

    def rows(self, values: Mapping[int, Any], rows: set[int]) -> set[int]:
        """Which of ``rows`` hold, from the column's non-empty ``values`` by row: only those are
        looked at, as an empty cell holds only for !=."""
        if self.op == "!=":
            return rows - self._equal(values)
        return self._holding(values) & rows

    def _holding(self, values: Mapping[int, Any]) -> set[int]:
        """The rows of ``values`` this clause holds in (for != those it does not: see ``rows``)."""
        op = self.op
        if op in ("=", "in", "!="):
            return self._equal(values)
        if op == "contains":
            text = str(self.values[0])
            return {row for row, value in values.items() if isinstance(value, str) and text in value}
        bound, compare = self.values[0], _ORDER[op]
        if not is_number(bound):
            return set()
        return {row for row, value in values.items() if is_number(value) and compare(value, bound)}

    def _equal(self, values: Mapping[int, Any]) -> set[int]:
        # Equality inlined (a set lookup per value): a filter runs over every row read.
        texts, numbers = self._texts, self._numbers  # type: ignore[attr-defined]
        return {row for row, value in values.items()
                if (value.strip() in texts if isinstance(value, str)
                    else value in numbers and is_number(value))}

    def rows_of(self, found: Values, rows: set[int]) -> set[int]:
        """``rows`` for the column's values as ``values_of`` sorted them out; what the clause holds
        in is kept with them, for the profile's other checks filtered alike."""
        holding = found.derived.get(self)
        if holding is None:
            holding = found.derived[self] = self._holding(dict(zip(found.rows, found.values, strict=True)))
        return rows - holding if self.op == "!=" else holding & rows

    def __str__(self) -> str:
        shown = ", ".join(_shown(value) for value in self.values)
        column = self.column if _WORD.fullmatch(self.column) else f'"{self.column}"'
        return f"{column} in ({shown})" if self.op == "in" else f"{column} {self.op} {shown}"


_ORDER: Mapping[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def _shown(value: str | float) -> str:
    return f"'{value}'" if isinstance(value, str) else format_number(value)


@dataclass(frozen=True)
class RowFilter:
    """Clauses in disjunctive form: a row passes when every clause of any one group holds."""

    groups: tuple[tuple[Clause, ...], ...]

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the filter reads, each once, in the order written."""
        return tuple(dict.fromkeys(clause.column for group in self.groups for clause in group))

    def not_letters(self) -> tuple[str, ...]:
        """The columns written as headers, which only a table with a header row can find."""
        return tuple(column for column in self.columns if not _LETTERS.fullmatch(column))

    def ranges(self, a1: A1Range) -> tuple[str, ...]:
        """The range of each filter column (by letter) over the rows of the check's range ``a1``:
        read in the same batchGet, so filtering costs no request."""
        return tuple(format_a1(A1Range(a1.sheet, a1.start_row, column_index(column), a1.end_row,
                                       column_index(column))) for column in self.columns)

    def passing_rows(self, a1: A1Range, rows: Iterable[int],
                     value_ranges: Mapping[str, Mapping[str, Any] | None]) -> set[int]:
        """Which of ``rows`` (the sheet rows the check's own range holds values in) pass, from the
        filter columns' values as read for ``ranges(a1)``."""
        found = {column: values_of(value_ranges.get(text))
                 for column, text in zip(self.columns, self.ranges(a1), strict=True)}
        rows = set(rows)
        return self._union(lambda clause: clause.rows_of(found[clause.column], rows))

    def rows_in(self, table: Table) -> set[int]:
        """The data rows of ``table`` that pass, its columns found by header (or letter without a
        header row). Raises ColumnError, whose message is the finding, for a column not there."""
        by_column = {}
        for name in self.columns:
            column = table.column(name)
            by_column[name] = {row: value for row, value in zip(column.rows, column.values, strict=True)
                               if not is_empty(value)}
        return self._passing(table.data_rows, by_column)

    def _passing(self, rows: Iterable[int], by_column: Mapping[str, Mapping[int, Any]]) -> set[int]:
        rows = set(rows)
        return self._union(lambda clause: clause.rows(by_column[clause.column], rows))

    def _union(self, rows_of: Callable[[Clause], set[int]]) -> set[int]:
        """The rows that pass: those where every clause of some group holds (``rows_of`` a clause)."""
        passing: set[int] = set()
        for group in self.groups:
            kept = rows_of(group[0])
            for clause in group[1:]:
                kept = kept & rows_of(clause)
            passing |= kept
        return passing

    def __str__(self) -> str:
        return " or ".join(" and ".join(str(clause) for clause in group) for group in self.groups)


def parse_where(text: str) -> RowFilter:
    """Parse a filter; raises ValueError naming what is wrong and the accepted forms."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("an empty filter")
    tokens = _tokens(text)
    groups: list[tuple[Clause, ...]] = []
    group: list[Clause] = []
    position = 0
    while True:
        clause, position = _clause(tokens, position)
        group.append(clause)
        if position == len(tokens):
            break
        joiner = tokens[position]
        if joiner[0] != "word" or joiner[1].lower() not in ("and", "or"):
            raise ValueError(f"expected and / or before {joiner[1]!r}")
        if joiner[1].lower() == "or":
            groups.append(tuple(group))
            group = []
        position += 1
    groups.append(tuple(group))
    return RowFilter(tuple(groups))


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"cannot read {text[position:].strip()[:20]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _clause(tokens: list[tuple[str, str]], position: int) -> tuple[Clause, int]:
    if position + 3 > len(tokens):
        raise ValueError("a clause needs a column, an operator and a value")
    column = _column(tokens[position])
    kind, op = tokens[position + 1]
    op = {"<>": "!=", "==": "="}.get(op, op.lower() if kind == "word" else op)
    if op == "in":
        return _in_clause(column, tokens, position + 2)
    if op not in ("=", "!=", "<", "<=", ">", ">=", "contains"):
        raise ValueError(f"unknown operator {tokens[position + 1][1]!r}")
    value = _value(tokens[position + 2])
    if op == "contains" and not isinstance(value, str):
        raise ValueError("contains takes a quoted text, e.g. contains 'urgent'")
    if op in _ORDER and not isinstance(value, float):
        raise ValueError(f"{op} compares numbers: write a number, not {tokens[position + 2][1]}")
    return Clause(column, op, (value,)), position + 3


def _in_clause(column: int, tokens: list[tuple[str, str]], position: int) -> tuple[Clause, int]:
    if position >= len(tokens) or tokens[position][1] != "(":
        raise ValueError("in takes a list in parentheses, e.g. in ('active', 'paused')")
    values: list[str | float] = []
    position += 1
    while position < len(tokens):
        values.append(_value(tokens[position]))
        if position + 1 >= len(tokens):
            break
        separator = tokens[position + 1][1]
        position += 2
        if separator == ")":
            return Clause(column, "in", tuple(values)), position
        if separator != ",":
            raise ValueError(f"expected , or ) in the list, got {separator!r}")
    raise ValueError("the list after in is not closed with )")


def _column(token: tuple[str, str]) -> str:
    kind, text = token
    if kind == "word" and text.lower() not in ("and", "or", "in", "contains"):
        return text
    if kind == "text" and text.startswith('"') and text[1:-1].strip():
        return text[1:-1].strip()
    raise ValueError(f"{text} is not a column: write a header (Status, or \"Unit price\" in double "
                     "quotes) or a column letter (C)")


def _value(token: tuple[str, str]) -> str | float:
    kind, text = token
    if kind == "text":
        return text[1:-1]
    if kind == "number":
        return float(text)
    raise ValueError(f"{text!r} is not a value: quote text ('active') or write a number")
