"""Where a key is written in the config file: its 1-based line, for error messages and ``origin``.

tomllib gives no positions, so this scans the raw text: good enough to point an admin at the right
line (table header, then key, then the N-th element of an array, then a key of an inline table).
Each header is known by its place in the parsed document (``[[sheets]]`` the second time is
``("sheets", 1)``, a ``[[sheets.checks]]`` under it ``("sheets", 1, "checks", 0)``), so an array of
tables is found at any depth; a table written only through its sub-tables (``[profile.sales]``, a
misspelt ``[profiles.sales]``) is placed at the first of them; and a line inside a multi-line string
is never taken for a header or a key.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from itertools import accumulate

from .issues import Loc

_HEADER_RE = re.compile(r"^[ \t]*(\[\[?)([^\[\]]+?)\]\]?[ \t]*(?:#.*)?$", re.MULTILINE)
_HEADER_PART_RE = re.compile(r"""\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)""")
# What may hold a triple quote without starting a multi-line string: a one-line string, a comment.
_QUOTES_RE = re.compile(r"""\"\"\"|'''|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|#[^\n]*""")


class TomlPositions:
    def __init__(self, text: str) -> None:
        self.text = text
        self.strings = _multiline_strings(text)
        # (start offset of the header line, end offset) of each header, in the file's order.
        self.headers: list[tuple[int, int]] = []
        # Indexes precomputed so that locating each of 5,000 [[sheets]] stays linear overall: each
        # header by its place in the document, and the first header under each place.
        self.places: dict[Loc, int] = {}
        self.first_under: dict[Loc, int] = {}
        tables_in: dict[Loc, int] = {}  # how many tables each array of tables has so far
        for match in _HEADER_RE.finditer(text):
            if self._in_string(match.start()):
                continue
            place = _place(_header_parts(match.group(2)), match.group(1) == "[[", tables_in)
            index = len(self.headers)
            self.places.setdefault(place, index)
            for depth in range(1, len(place)):
                self.first_under.setdefault(place[:depth], index)
            self.headers.append((match.start(), match.end()))
        # Offsets where each line starts: 0, then one past every newline.
        self.line_starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))][:-1]

    @property
    def last_line(self) -> int:
        """The file's last line that holds something (1 for an empty file)."""
        return self.line(len(self.text.rstrip())) if self.text.strip() else 1

    def where(self, shown: str, loc: Loc) -> str:
        """"file:line" of the key at ``loc``, else of its table; a key of a table the file lacks is
        placed at the file's last line, where it would be added."""
        return f"{shown}:{self.line_of(loc) or self.last_line}"

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset)

    def line_of(self, loc: Loc) -> int | None:
        """1-based line of the key at ``loc``, else of its table's header, else None."""
        region = self._region(loc)
        if region is None:
            return None
        start, end, rest, header_line = region
        if not rest or not isinstance(rest[0], str):
            return header_line
        pos = self._find_key(start, end, rest[0])
        if pos is None:
            return header_line
        if len(rest) > 1 and isinstance(rest[1], int):
            span = self._array_element(pos, end, rest[1])
            if span is None:
                return self.line(pos)
            if len(rest) > 2 and isinstance(rest[2], str):
                inner = self._find_key(span[0], span[1], rest[2], inline=True)
                if inner is not None:
                    return self.line(inner)
            return self.line(span[0])
        return self.line(pos)

    def _region(self, loc: Loc) -> tuple[int, int, Loc, int | None] | None:
        for n in range(len(loc), 0, -1):  # the header whose place is the longest start of loc
            index = self.places.get(loc[:n])
            if index is not None:
                return self._header_region(index, loc[n:])
        index = self.first_under.get(loc)
        if index is not None:  # a table or an array written only through its sub-tables
            return self._header_region(index, ())
        end = self.headers[0][0] if self.headers else len(self.text)
        return 0, end, loc, None

    def _header_region(self, index: int, rest: Loc) -> tuple[int, int, Loc, int]:
        start, header_end = self.headers[index]
        end = self.headers[index + 1][0] if index + 1 < len(self.headers) else len(self.text)
        return header_end, end, rest, self.line(start)

    def _find_key(self, start: int, end: int, key: str, inline: bool = False) -> int | None:
        for match in _key_pattern(key, inline).finditer(self.text, start, end):
            if not self._in_string(match.start(1)):
                return match.start(1)
        return None

    def _in_string(self, offset: int) -> bool:
        """Is ``offset`` inside a multi-line string, whose lines may look like headers or keys?"""
        at = bisect.bisect_right(self.strings, (offset, len(self.text) + 1)) - 1
        return at >= 0 and offset < self.strings[at][1]

    def _array_element(self, key_pos: int, end: int, index: int) -> tuple[int, int] | None:
        """Offsets of the ``index``-th element of the array written after the key at key_pos."""
        text = self.text
        pos = text.find("=", key_pos, end)
        if pos < 0:
            return None
        pos += 1
        while pos < end and text[pos] in " \t":
            pos += 1
        if pos >= end or text[pos] != "[":
            return None
        return _element_of(text, pos + 1, end, index)


def _element_of(text: str, pos: int, end: int, index: int) -> tuple[int, int] | None:
    """Offsets of the ``index``-th element of the array whose ``[`` is just before ``pos``."""
    depth, count, element_start = 1, -1, None
    while pos < end:
        char = text[pos]
        if char == "#":
            newline = text.find("\n", pos, end)
            pos = end if newline < 0 else newline
            continue
        if depth == 1 and element_start is None and char not in " \t\r\n,]":
            count += 1
            element_start = pos
        if char in "\"'":
            pos = _skip_string(text, pos)
            continue
        depth += 1 if char in "[{" else -1 if char in "]}" else 0
        if depth == 0 or (depth == 1 and char == ","):
            if element_start is not None and count == index:
                return element_start, pos
            if depth == 0:
                return None
            element_start = None
        pos += 1
    return None


def _place(parts: tuple[str, ...], is_array: bool, tables_in: dict[Loc, int]) -> Loc:
    """A header's place in the parsed document. An array of tables on its way stands for its latest
    table (TOML's rule); an array's own header adds the next table to it (counted in ``tables_in``)."""
    place: Loc = ()
    for part in parts[:-1]:
        place = (*place, part)
        if place in tables_in:
            place = (*place, tables_in[place] - 1)
    place = (*place, *parts[-1:])
    if not is_array:
        return place
    count = tables_in.get(place, 0)
    tables_in[place] = count + 1
    return (*place, count)


def _multiline_strings(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each multi-line string, in order; a config without a triple quote
    (most of them) is not scanned."""
    if '"""' not in text and "'''" not in text:
        return []
    spans = []
    pos = 0
    while (match := _QUOTES_RE.search(text, pos)) is not None:
        if match.group() in ('"""', "'''"):
            pos = _skip_string(text, match.start())
            spans.append((match.start(), pos))
        else:
            pos = match.end()
    return spans


@lru_cache(maxsize=64)
def _header_parts(name: str) -> tuple[str, ...]:
    """'profiles."my stock"' -> ("profiles", "my stock"); cached: 5,000 [[sheets]] share one name."""
    return tuple(a or b or c for a, b, c in _HEADER_PART_RE.findall(name))


@lru_cache(maxsize=64)
def _key_pattern(key: str, inline: bool) -> re.Pattern[str]:
    """``key =`` (or ``key.``) at the start of a line, or after ``{``/``,`` inside an inline table."""
    name = rf"(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')"
    lead = r"(?:^|[{,])[ \t]*" if inline else r"^[ \t]*"
    return re.compile(rf"{lead}({name})[ \t]*[=.]", re.MULTILINE)


def _skip_string(text: str, pos: int) -> int:
    """Offset just past the TOML string starting at pos (basic, literal or multi-line)."""
    quote = text[pos]
    if text.startswith(quote * 3, pos):
        close = text.find(quote * 3, pos + 3)
        return len(text) if close < 0 else close + 3
    pos += 1
    while pos < len(text) and text[pos] not in (quote, "\n"):
        pos += 2 if quote == '"' and text[pos] == "\\" else 1
    return pos + 1
