"""Where a key is written in the config file: its 1-based line, for error messages and ``origin``.

tomllib gives no positions, so this scans the raw text: good enough to point an admin at the right
line (table header, then key, then the N-th element of an array, then a key of an inline table).
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from itertools import accumulate

from .issues import Loc

_HEADER_RE = re.compile(r"^[ \t]*(\[\[?)([^\[\]]+?)\]\]?[ \t]*(?:#.*)?$", re.MULTILINE)
_HEADER_PART_RE = re.compile(r"""\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)""")


class TomlPositions:
    def __init__(self, text: str) -> None:
        self.text = text
        # (start offset of the header line, end offset, is array-of-tables, dotted name parts)
        self.headers: list[tuple[int, int, bool, tuple[str, ...]]] = []
        # Indexes precomputed so that locating each of 5,000 [[sheets]] stays linear overall.
        self.arrays: dict[tuple[str, ...], list[int]] = {}
        self.tables: dict[tuple[str, ...], int] = {}
        for match in _HEADER_RE.finditer(text):
            parts = _header_parts(match.group(2))
            is_array = match.group(1) == "[["
            if is_array:
                self.arrays.setdefault(parts, []).append(len(self.headers))
            else:
                self.tables.setdefault(parts, len(self.headers))
            self.headers.append((match.start(), match.end(), is_array, parts))
        # Offsets where each line starts: 0, then one past every newline.
        self.line_starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))][:-1]

    @property
    def last_line(self) -> int:
        """The file's last line that holds something (1 for an empty file)."""
        return self.line(len(self.text.rstrip())) if self.text.strip() else 1

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
        # The N-th [[a]] or [[a.b]] table (``[[telegram.routes]]``): a name, then the index.
        for n in (1, 2):
            if len(loc) > n and isinstance(loc[n], int) and all(isinstance(p, str) for p in loc[:n]):
                arrays = self.arrays.get(loc[:n], [])  # type: ignore[arg-type]
                if loc[n] < len(arrays):
                    return self._header_region(arrays[loc[n]], loc[n + 1:])
        for n in range(len(loc), 0, -1):  # the longest [a.b] header that loc starts with
            prefix = loc[:n]
            if all(isinstance(p, str) for p in prefix) and prefix in self.tables:
                return self._header_region(self.tables[prefix], loc[n:])  # type: ignore[index]
        end = self.headers[0][0] if self.headers else len(self.text)
        return 0, end, loc, None

    def _header_region(self, index: int, rest: Loc) -> tuple[int, int, Loc, int]:
        start, header_end, _, _ = self.headers[index]
        end = self.headers[index + 1][0] if index + 1 < len(self.headers) else len(self.text)
        return header_end, end, rest, self.line(start)

    def _find_key(self, start: int, end: int, key: str, inline: bool = False) -> int | None:
        match = _key_pattern(key, inline).search(self.text, start, end)
        return match.start(1) if match else None

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
        depth, pos, count, element_start = 1, pos + 1, -1, None
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
            if char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
            if depth == 0 or (depth == 1 and char == ","):
                if element_start is not None and count == index:
                    return element_start, pos
                if depth == 0:
                    return None
                element_start = None
            pos += 1
        return None


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
