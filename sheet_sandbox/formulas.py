"""A small formula evaluator so the sandbox's formulas compute plausible values.

Covers what generated stock sheets and gspread's tests write: numbers, text in double quotes,
TRUE/FALSE, cell and range references on the same tab or a named one, + - * / ^, unary minus,
parentheses, and SUM, MIN, MAX, AVERAGE, COUNT, ABS, ROUND. Results follow Google's error rules:
division by zero is #DIV/0!, text in arithmetic #VALUE!, an unknown function #NAME?, a reference to
a missing tab or the literal #REF! gives #REF!, and text that does not parse gives #ERROR!.
Anything richer (VLOOKUP, IMPORTRANGE) belongs in a control payload as {"formula", "value"}.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from monitor.core.a1 import A1Error, parse_a1

from .cells import ERRORS, ErrorValue, Formatted, Formula

# lookup(sheet or None, row, col) -> the stored cell; raises KeyError for an unknown tab.
Lookup = Callable[[str | None, int, int], object]

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<number>\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)
      | (?P<string>"(?:[^"]|"")*")
      | (?P<error>\#REF!|\#N/A|\#DIV/0!|\#VALUE!|\#NAME\?|\#NUM!|\#NULL!|\#ERROR!)
      | (?P<ref>(?:'(?:[^']|'')+'!|[A-Za-z_][\w.]*!)?\$?[A-Za-z]{1,3}\$?\d+(?::\$?[A-Za-z]{1,3}\$?\d+)?)
      | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
      | (?P<op><=|>=|<>|[-+*/^(),=<>&])
    )""",
    re.VERBOSE,
)


class _Fail(Exception):
    def __init__(self, error: ErrorValue) -> None:
        self.error = error


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise _Fail(ERRORS["#ERROR!"])
        kind = match.lastgroup
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def _as_number(value: object) -> float:
    if isinstance(value, ErrorValue):
        raise _Fail(value)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return value
    if value is None or value == "":
        return 0
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise _Fail(ERRORS["#VALUE!"]) from None
    raise _Fail(ERRORS["#VALUE!"])


def _plain(cell: object) -> object:
    """A stored cell as a formula sees it: the computed value, dates as their serial."""
    if isinstance(cell, Formula):
        cell = cell.value
    if isinstance(cell, Formatted):
        return cell.number
    return cell


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], lookup: Lookup) -> None:
        self.tokens = tokens
        self.pos = 0
        self.lookup = lookup

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise _Fail(ERRORS["#ERROR!"])
        self.pos += 1
        return token

    def expression(self) -> object:
        left = self.additive()
        while (token := self.peek()) and token[1] in ("=", "<>", "<", ">", "<=", ">=", "&"):
            op = self.take()[1]
            right = self.additive()
            left = _compare(op, left, right)
        return left

    def additive(self) -> object:
        value = self.term()
        while (token := self.peek()) and token[1] in ("+", "-"):
            op = self.take()[1]
            right = _as_number(self.term())
            value = _as_number(value) + right if op == "+" else _as_number(value) - right
        return value

    def term(self) -> object:
        value = self.power()
        while (token := self.peek()) and token[1] in ("*", "/"):
            op = self.take()[1]
            right = _as_number(self.power())
            if op == "*":
                value = _as_number(value) * right
            elif right == 0:
                raise _Fail(ERRORS["#DIV/0!"])
            else:
                value = _as_number(value) / right
        return value

    def power(self) -> object:
        value = self.unary()
        while (token := self.peek()) and token[1] == "^":
            self.take()
            value = _as_number(value) ** _as_number(self.unary())
        return value

    def unary(self) -> object:
        token = self.peek()
        if token and token[1] in ("-", "+"):
            self.take()
            value = _as_number(self.unary())
            return -value if token[1] == "-" else value
        return self.primary()

    def primary(self) -> object:
        kind, text = self.take()
        if kind == "number":
            return float(text)
        if kind == "string":
            return text[1:-1].replace('""', '"')
        if kind == "error":
            raise _Fail(ERRORS[text.upper()])
        if kind == "ref":
            values = self.reference(text)
            if len(values) != 1:
                raise _Fail(ERRORS["#VALUE!"])
            value = values[0]
            if isinstance(value, ErrorValue):
                raise _Fail(value)
            return value
        if kind == "name":
            if self.peek() and self.peek()[1] == "(":
                return self.call(text.upper())
            if text.upper() in ("TRUE", "FALSE"):
                return text.upper() == "TRUE"
            raise _Fail(ERRORS["#NAME?"])
        if text == "(":
            value = self.expression()
            self.take(")")
            return value
        raise _Fail(ERRORS["#ERROR!"])

    def reference(self, text: str) -> list[object]:
        try:
            r = parse_a1(text)
        except A1Error:
            raise _Fail(ERRORS["#REF!"]) from None
        out = []
        try:
            for row in range(r.start_row, r.end_row + 1):
                for col in range(r.start_col, r.end_col + 1):
                    out.append(_plain(self.lookup(r.sheet, row, col)))
        except KeyError:
            raise _Fail(ERRORS["#REF!"]) from None
        return out

    def call(self, name: str) -> object:
        if name not in _FUNCTIONS:  # Google names the unknown function before looking at args
            raise _Fail(ERRORS["#NAME?"])
        self.take("(")
        args: list[object] = []
        if self.peek() and self.peek()[1] != ")":
            while True:
                token = self.peek()
                follow = self.tokens[self.pos + 1][1] if self.pos + 1 < len(self.tokens) else ")"
                if token and token[0] == "ref" and follow in (",", ")"):
                    self.take()
                    args.extend(self.reference(token[1]))
                else:
                    args.append(self.expression())
                if self.peek() and self.peek()[1] == ",":
                    self.take()
                    continue
                break
        self.take(")")
        return _apply(name, args)


def _compare(op: str, left: object, right: object) -> object:
    if op == "&":
        return f"{_text(left)}{_text(right)}"
    if isinstance(left, int | float) and isinstance(right, int | float):
        a, b = left, right
    else:
        a, b = str(left).lower(), str(right).lower()
    return {"=": a == b, "<>": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


_FUNCTIONS = frozenset({"SUM", "COUNT", "MIN", "MAX", "AVERAGE", "ABS", "ROUND"})


def _apply(name: str, args: list[object]) -> object:
    for arg in args:
        if isinstance(arg, ErrorValue):
            raise _Fail(arg)
    numbers = [a for a in args if isinstance(a, int | float) and not isinstance(a, bool)]
    if name == "SUM":
        return float(sum(numbers))
    if name == "COUNT":
        return float(len(numbers))
    if name in ("MIN", "MAX"):
        return float((min if name == "MIN" else max)(numbers)) if numbers else 0.0
    if name == "AVERAGE":
        if not numbers:
            raise _Fail(ERRORS["#DIV/0!"])
        return sum(numbers) / len(numbers)
    if name == "ABS" and len(args) == 1:
        return abs(_as_number(args[0]))
    if name == "ROUND" and len(args) in (1, 2):
        digits = int(_as_number(args[1])) if len(args) == 2 else 0
        return float(round(_as_number(args[0]), digits))
    raise _Fail(ERRORS["#NAME?"])


def evaluate(text: str, lookup: Lookup) -> object:
    """The value of formula ``text`` (with its leading '='): a number, str, bool or ErrorValue."""
    try:
        parser = _Parser(_tokens(text[1:]), lookup)
        value = parser.expression()
        if parser.peek() is not None:
            raise _Fail(ERRORS["#ERROR!"])
    except _Fail as fail:
        return fail.error
    except (RecursionError, OverflowError):
        return ERRORS["#NUM!"]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value
