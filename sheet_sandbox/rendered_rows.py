"""Rendered forms of read-only rows, so a row read again and again is rendered once per option.

The monitor reads every spreadsheet with one batchGet of ~5 ranges over the same few hundred rows,
round after round; rendering each cell for each range was most of a read's cost. The store's shared
rows (see model.py) are tuples of cells that never change once built: ``Formatted``, ``ErrorValue``,
text, numbers, booleans, None. Their rendering under given render options is therefore fixed, and
is kept here by the row's identity. A tuple holding a ``Formula`` is not cached (its value is
recomputed in place); rows held as lists (a tab's own, writable rows) are never cached.

A grid answer's cells (``spreadsheets.get`` with grid data: each cell a CellData object of the
fields its mask keeps) are fixed the same way, and kept the same way by :meth:`RenderedRows.made`,
per set of fields: a first round reads every spreadsheet so, and the generated ones share most rows.

Each entry holds a reference to its row, so an id cannot be reused while its entry lives. The table
of one render-option pair is dropped whole when it reaches ``limit`` entries: rows of deleted
spreadsheets must not stay alive forever, and a refill costs one render per row. A limit of 0
caches nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from .cells import Formula, render_cells

DEFAULT_LIMIT = 200_000  # a 5,000-spreadsheet dataset shares ~25,000 distinct rows
# A row made into CellData holds two dicts a cell (~2.5 KB for a Stock row, where its rendered values
# are ~0.3 KB): 7,591 rows at 700 spreadsheets added 19 MB to the sandbox's peak. Fewer are kept.
MADE_LIMIT = 50_000


class RenderedRows:
    """Per pair of render options, a ``RenderTable``; thread-safe, owned by the store."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._tables: dict[tuple[str, str], dict[int, tuple[tuple, list]]] = {}
        self._lock = threading.Lock()

    def table(self, value_option: str, date_option: str) -> RenderTable:
        """The cache for one pair of render options; fetch it once per range, not once per row."""
        with self._lock:
            entries = self._tables.setdefault((value_option, date_option), {})
        return RenderTable(MadeTable(entries, self.limit, self._lock), value_option, date_option)

    def made(self, key: object) -> MadeTable:
        """The cache of rows made into another form, one per ``key`` (hashable: what the form
        depends on besides the row); fetch it once per answer."""
        with self._lock:
            entries = self._tables.setdefault(("made", key), {})
        return MadeTable(entries, min(self.limit, MADE_LIMIT), self._lock)

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()

    def size(self) -> int:
        """Rows held, over every pair of options."""
        with self._lock:
            return sum(len(entries) for entries in self._tables.values())


class MadeTable:
    """Rows made into one form cell by cell, kept by their identity: a shared row is made once (see
    the module doc)."""

    __slots__ = ("_entries", "_limit", "_lock")

    def __init__(self, entries: dict, limit: int, lock: threading.Lock) -> None:
        self._entries = entries
        self._limit = limit
        self._lock = lock

    def cells(self, row: Sequence[object], start: int, stop: int,
              make: Callable[[Sequence[object]], list]) -> list:
        """``make(row[start:stop])``, where ``make`` turns cells into their form one by one: a shared
        formula-free row is made whole once and kept, and sliced; any other (a tab's own list) is made
        for the slice alone. A new list, whose items later callers share: read them, never change them."""
        if type(row) is not tuple:
            return make(row[start:stop])
        entry = self._entries.get(id(row))
        if entry is not None and entry[0] is row:
            return entry[1][start:stop]
        made = make(row)
        if self._limit and not any(isinstance(c, Formula) for c in row):
            with self._lock:
                if len(self._entries) >= self._limit:
                    self._entries.clear()
                self._entries[id(row)] = (row, made)
        return made[start:stop]


class RenderTable:
    """A row's values rendered under one pair of render options, kept as ``MadeTable`` keeps rows."""

    __slots__ = ("_made", "_render")

    def __init__(self, made: MadeTable, value_option: str, date_option: str) -> None:
        self._made = made
        self._render = lambda cells: render_cells(cells, value_option, date_option)

    def cells(self, row: Sequence[object], start: int, stop: int) -> list:
        """``row[start:stop]`` rendered, as a new list the caller may change."""
        return self._made.cells(row, start, stop, self._render)
