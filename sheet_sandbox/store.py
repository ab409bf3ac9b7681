"""Every spreadsheet of the sandbox, by id, behind one lock.

The HTTP server is threaded, so every public method takes the store's one lock; handlers that
need several steps to be atomic (a batch) hold ``store.lock`` (re-entrant) around them.

Rows seeded through the control API are shared: equal formula-free rows are one tuple across
every spreadsheet (see model for what that saves), copied by a write before it changes them.

Drive sees an edit late (feed_delay.py): a spreadsheet's ``modified`` is the modifiedTime Drive
shows, and an edit reaches it and the change log only when the file's moment has passed. Every
look at the store (``get``, ``all``, ``get_control``, ``changes``) first settles the edits that
are due, so whichever request comes first after a moment, the change log holds the same changes in
the same order.
"""

from __future__ import annotations

import random
import string
import threading

from .changes import ChangeLog
from .control_format import control_payload, spreadsheet_from_control
from .feed_delay import FeedDelay
from .model import DEFAULT_COLS, DEFAULT_ROWS, Spreadsheet, Tab
from .rendered_rows import RenderedRows

_ID_ALPHABET = string.ascii_letters + string.digits + "-_"
_SHARED_ROWS_LIMIT = 500_000  # beyond this many distinct rows, sharing stops paying for its dict


class UnknownSpreadsheet(KeyError):
    """An operation that needs an existing spreadsheet was given an id the store does not hold."""


class SpreadsheetStore:
    """Every spreadsheet of the sandbox, by id. Thread-safe; ``clock.now()`` stamps changes.

    ``feed_delay`` holds edits until Drive shows them (Google's delay unless given another).
    """

    def __init__(self, clock, seed: int = 0, feed_delay: FeedDelay | None = None) -> None:
        self.clock = clock
        self.lock = threading.RLock()
        self._random = random.Random(seed)
        self._sheets: dict[str, Spreadsheet] = {}
        self._rows: dict[tuple, tuple] = {}  # shared read-only rows, see _shared
        self.rendered = RenderedRows()  # their rendered forms, for reads (see rendered_rows.py)
        self.feed_delay = feed_delay if feed_delay is not None else FeedDelay(seed=seed)
        self._changes = ChangeLog()

    @property
    def changes(self) -> ChangeLog:
        """Drive's change log as of now: the edits due by now are in it (see ``settle``)."""
        self.settle()
        return self._changes

    def settle(self) -> None:
        """Show Drive the held edits whose moment has passed, in the order of their moments: each
        file's modifiedTime moves to its latest edit's, and the change log gets one change of it."""
        with self.lock:
            for held in self.feed_delay.due(self.clock.now()):
                spreadsheet = self._sheets.get(held.file_id)
                if spreadsheet is not None:  # a deleted file's edits were dropped with it
                    spreadsheet.modified = held.modified
                    self._changes.record(held.file_id, held.edited_at)

    # -- lifecycle ---------------------------------------------------------------------------

    def create(self, title: str) -> Spreadsheet:
        """A new spreadsheet with one empty 1000 x 26 tab "Sheet1" (sheetId 0), like Drive's."""
        with self.lock:
            spreadsheet = Spreadsheet(self._new_id(), title, self.clock.now())
            spreadsheet.tabs.append(Tab(0, "Sheet1", DEFAULT_ROWS, DEFAULT_COLS))
            self._sheets[spreadsheet.id] = spreadsheet
            self.changes.record(spreadsheet.id, spreadsheet.modified)  # a new file: shown at once
            return spreadsheet

    def get(self, spreadsheet_id: str) -> Spreadsheet | None:
        with self.lock:
            self.settle()
            return self._sheets.get(spreadsheet_id)

    def all(self) -> list[Spreadsheet]:
        with self.lock:
            self.settle()
            return list(self._sheets.values())

    def ids(self) -> list[str]:
        with self.lock:
            return list(self._sheets)

    def delete(self, spreadsheet_id: str) -> bool:
        with self.lock:
            self.settle()  # what was due before the deletion was seen before it
            if self._sheets.pop(spreadsheet_id, None) is None:
                return False
            self.feed_delay.drop(spreadsheet_id)
            self._changes.record_removed(spreadsheet_id, self.clock.now())
            return True

    def reset(self) -> None:
        with self.lock:
            self._sheets.clear()
            self._rows.clear()
            self.rendered.clear()
            self.feed_delay.clear()
            self._changes.clear()

    def touch(self, spreadsheet: Spreadsheet) -> None:
        """An edit of the spreadsheet's contents, now: Drive's modifiedTime moves to now and the file
        is in the change log, at the file's next moment (at once with the feed delay off)."""
        with self.lock:
            now = self.clock.now()
            self._edited(spreadsheet, now, now)

    def _edited(self, spreadsheet: Spreadsheet, modified, now) -> None:
        """Drive is to show ``modified`` for an edit made at ``now``: held, or shown at once."""
        self.settle()  # an edit after a moment passed is not coalesced into that moment's change
        if not self.feed_delay.hold(spreadsheet.id, modified, now):
            spreadsheet.modified = modified
            self._changes.record(spreadsheet.id, now)

    def remove_access(self, spreadsheet_id: str) -> None:
        """The callers lost access to the file: it leaves their change feed."""
        self.changes.remove_access(spreadsheet_id, self.clock.now())

    def restore_access(self, spreadsheet_id: str) -> None:
        with self.lock:
            exists = spreadsheet_id in self._sheets
        self.changes.restore_access(spreadsheet_id, self.clock.now(), exists)

    def new_sheet_id(self, spreadsheet: Spreadsheet) -> int:
        with self.lock:
            taken = {tab.sheet_id for tab in spreadsheet.tabs}
            while True:
                candidate = self._random.randrange(1, 2**31 - 1)
                if candidate not in taken:
                    return candidate

    def _new_id(self) -> str:
        while True:  # Google's shape: 44 characters of [A-Za-z0-9_-], starting with "1"
            candidate = "1" + "".join(self._random.choice(_ID_ALPHABET) for _ in range(43))
            if candidate not in self._sheets:
                return candidate

    # -- control format ----------------------------------------------------------------------

    def put_control(self, spreadsheet_id: str, payload: dict, touch: bool = True) -> None:
        """Create or replace a spreadsheet from the control API's JSON (its shape: see
        control_format); ValueError, naming what is wrong, if malformed.

        A new spreadsheet is in Drive at once; replacing one is an edit, which Drive shows at the
        file's next moment (see ``touch``), with the payload's modifiedTime if it gives one; a new
        ``trashed`` is a change of its own, at once, as files.update's.
        ``touch=False`` replaces an existing spreadsheet's contents keeping its createdTime,
        modifiedTime, time zone and locale and recording no change, as values recomputed by Google
        (IMPORTRANGE, GOOGLEFINANCE, NOW()) change without a write; UnknownSpreadsheet if there is
        none.
        """
        if not isinstance(spreadsheet_id, str) or not spreadsheet_id or "/" in spreadsheet_id:
            raise ValueError(f"spreadsheet id must be a non-empty string without '/', got "
                             f"{spreadsheet_id!r}")
        if not touch and isinstance(payload, dict):
            stamped = sorted({"modifiedTime", "createdTime"} & set(payload))
            if stamped:
                raise ValueError(f"touch=false keeps the stored times; leave out {stamped[0]!r}")
        kept = None
        if not touch:
            with self.lock:
                old = self._sheets.get(spreadsheet_id)
            kept = dict(old.properties) if old is not None else None
        spreadsheet = spreadsheet_from_control(spreadsheet_id, payload, self.clock.now(),
                                               self._shared, kept)
        with self.lock:
            old = self.get(spreadsheet_id)
            if old is None and not touch:
                raise UnknownSpreadsheet(spreadsheet_id)
            self._sheets[spreadsheet_id] = spreadsheet
            if old is None:  # a new file: in Drive at once
                self._changes.record(spreadsheet_id, self.clock.now())
                return
            # Drive shows the modifiedTime it showed until it shows the edit (if this is one).
            stated, spreadsheet.modified = spreadsheet.modified, old.modified
            if not touch:
                spreadsheet.created = old.created
                return
            self._edited(spreadsheet, stated, self.clock.now())
            if spreadsheet.trashed != old.trashed:  # moved to the trash or out: as files.update
                self._changes.record(spreadsheet_id, self.clock.now())

    def get_control(self, spreadsheet_id: str) -> dict | None:
        """The spreadsheet in put_control's shape (formulas as {"formula", "value"}), or None."""
        with self.lock:
            spreadsheet = self.get(spreadsheet_id)
            return None if spreadsheet is None else control_payload(spreadsheet)

    def _shared(self, cells: list) -> tuple:
        """One tuple for every equal (formula-free) row the store holds."""
        row = tuple(cells)
        with self.lock:
            shared = self._rows.get(row)
            if shared is not None:
                return shared
            if len(self._rows) < _SHARED_ROWS_LIMIT:
                self._rows[row] = row
        return row
