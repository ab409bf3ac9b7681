"""The freshness bench's two sides of an edit: the editor that makes it and the observer that sees
which read judged it (used by ``freshness.py``).

An edit writes a marker into one spreadsheet through the sandbox's control API: the newest date of
its Stock tab (the freshness check's range), a moment no other edit of that spreadsheet uses. Reads
see it at once; Drive's change feed only at the spreadsheet's next moment (the sandbox's feed delay,
on unless its server was started with ``--feed-delay off``), so the lag it measures holds that wait. The
monitor keeps, per spreadsheet, when its last read was and the newest moment that read's freshness
check found (``SheetHealth.read_at``, ``moments``); the observer polls the state as the watchdog
does (no lock) and records every read it sees with that moment. A read whose moment is the marker,
or a later edit's, is the verdict that saw the edit.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

from monitor.engine.health import UNKNOWN, SheetHealth
from monitor.state import read_state

MARKER_TAB, MARKER_ROW, MARKER_COLUMN = "Stock", 1, 4  # Stock!E2: the first product's "Updated"
# Markers are whole seconds and a spreadsheet's markers at least a second apart; a moment read back
# through a serial number may differ from its marker by a rounding, never by this much.
SAME_MOMENT = timedelta(milliseconds=500)


@dataclass
class Edit:
    sheet_id: str
    period: int  # which editing period (0-based) made it
    made_at: datetime  # just before the request that stored it went out
    marker: datetime
    seen_at: datetime | None = None  # read_at of the first read that found it (or a later edit)

    @property
    def lag(self) -> float | None:
        return None if self.seen_at is None else (self.seen_at - self.made_at).total_seconds()


@dataclass(frozen=True)
class Read:
    at: datetime  # the monitor's read_at
    newest: datetime | None  # the newest moment its freshness check found


def editable_payloads(control: requests.Session, base: str, sheet_ids: list[str]) -> dict[str, dict]:
    """The stored contents of every configured spreadsheet whose Stock tab has a product row (the
    dataset's missing spreadsheets, renamed tabs and empty Stock tabs have nowhere to put a marker)."""
    payloads = {}
    for sheet_id in sheet_ids:
        answer = control.get(f"{base}/_sandbox/spreadsheets/{sheet_id}", timeout=30)
        if answer.status_code == 404:
            continue
        answer.raise_for_status()
        payload = answer.json()
        if len(_rows(payload.get("tabs", {}).get(MARKER_TAB) or [])) > MARKER_ROW:
            payload.pop("modifiedTime")  # a PUT without it moves modifiedTime to the edit's moment
            payloads[sheet_id] = payload
    return payloads


def _rows(tab: list | dict) -> list:
    return tab["rows"] if isinstance(tab, dict) else tab


def with_marker(payload: dict, marker: datetime) -> dict:
    """``payload`` with the marker as Stock!E2, sharing every other row (payloads are never changed)."""
    tab = payload["tabs"][MARKER_TAB]
    rows = list(_rows(tab))
    row = list(rows[MARKER_ROW])
    row[MARKER_COLUMN] = {"datetime": marker.strftime("%Y-%m-%dT%H:%M:%SZ")}
    rows[MARKER_ROW] = row
    new_tab = {**tab, "rows": rows} if isinstance(tab, dict) else rows
    return {**payload, "tabs": {**payload["tabs"], MARKER_TAB: new_tab}}


class Editor(threading.Thread):
    """Edits ``count`` spreadsheets per period of ``interval`` seconds, each at most once a period, at
    uniformly random moments, for ``periods`` periods from ``start`` (a ``time.monotonic`` moment)."""

    def __init__(self, base: str, payloads: dict[str, dict], count: int, interval: float, periods: int,
                 start: float, seed: int) -> None:
        super().__init__(name="editor", daemon=True)
        self.base, self.payloads, self.count = base, payloads, count
        self.interval, self.periods, self.start_at = interval, periods, start
        self.rng = random.Random(seed)
        self.edits: list[Edit] = []
        self.latest_marker: dict[str, datetime] = {}
        self.worst_delay = 0.0  # how late the editor made an edit against its schedule, seconds
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with requests.Session() as control:
                control.trust_env = False  # never through a proxy: the sandbox is on 127.0.0.1
                for period in range(self.periods):
                    for due, sheet_id in self._schedule(period):
                        time.sleep(max(0.0, due - time.monotonic()))
                        self.worst_delay = max(self.worst_delay, time.monotonic() - due)
                        self._edit(control, sheet_id, period)
        except BaseException as error:  # noqa: BLE001 - reported by the bench, not lost in a thread
            self.error = error

    def _schedule(self, period: int) -> list[tuple[float, str]]:
        begins = self.start_at + period * self.interval
        chosen = self.rng.sample(sorted(self.payloads), self.count)
        return sorted((begins + self.rng.uniform(0, self.interval), sheet_id) for sheet_id in chosen)

    def _edit(self, control: requests.Session, sheet_id: str, period: int) -> None:
        made_at = datetime.now(UTC)
        marker = datetime.fromtimestamp(math.floor(made_at.timestamp()), UTC)
        previous = self.latest_marker.get(sheet_id)
        if previous is not None and marker <= previous:
            marker = previous + timedelta(seconds=1)
        control.put(f"{self.base}/_sandbox/spreadsheets/{sheet_id}",
                    json=with_marker(self.payloads[sheet_id], marker), timeout=30).raise_for_status()
        self.latest_marker[sheet_id] = marker
        self.edits.append(Edit(sheet_id, period, made_at, marker))


class Observer(threading.Thread):
    """Polls the state every ``every`` seconds and records each read it finds (a new ``read_at``)."""

    def __init__(self, state_dir: Path, sheets: int, every: float) -> None:
        super().__init__(name="observer", daemon=True)
        self.state_dir, self.sheets, self.every = state_dir, sheets, every
        self.reads: dict[str, list[Read]] = defaultdict(list)
        self.first_round_done = threading.Event()
        self.polls = 0
        self.poll_seconds = 0.0
        self._halt = threading.Event()
        self._lock = threading.Lock()  # the bench reads ``reads`` while this thread adds to it

    def run(self) -> None:
        while not self._halt.wait(self.every):
            self.poll()

    def stop(self) -> None:
        self._halt.set()
        self.join()
        self.poll()  # what the last run left

    def poll(self) -> None:
        started = time.perf_counter()
        state = read_state(self.state_dir, only=("health",))
        self.poll_seconds += time.perf_counter() - started
        self.polls += 1
        if state is None:
            return
        judged = 0
        with self._lock:
            for sheet_id, record in state.health.items():
                judged += record.health is not UNKNOWN
                seen = self.reads[sheet_id]
                if record.read_at is not None and (not seen or seen[-1].at != record.read_at):
                    seen.append(Read(record.read_at, newest_moment(record)))
        if judged == self.sheets:
            self.first_round_done.set()  # every spreadsheet has a verdict: the first round is done

    def copy(self) -> dict[str, list[Read]]:
        with self._lock:
            return {sheet_id: list(reads) for sheet_id, reads in self.reads.items()}

    def observed(self) -> int:
        with self._lock:
            return sum(len(reads) for reads in self.reads.values())


def newest_moment(record: SheetHealth) -> datetime | None:
    return max((moment.at for moment in record.moments), default=None)


def match(edits: list[Edit], reads: dict[str, list[Read]]) -> None:
    """Sets each edit's ``seen_at``: the first read whose newest moment is its marker or later."""
    for edit in edits:
        edit.seen_at = next((read.at for read in reads.get(edit.sheet_id, ())
                             if read.newest is not None and read.newest >= edit.marker - SAME_MOMENT), None)


def reads_that_found_an_edit(edits: list[Edit], reads: dict[str, list[Read]], since: datetime,
                             until: datetime) -> int:
    """How many reads from ``since`` to ``until`` found a marker their spreadsheet's previous read had
    not (the others read what the monitor already knew)."""
    found = 0
    for sheet_id in {edit.sheet_id for edit in edits}:
        previous = None
        for read in reads.get(sheet_id, ()):
            if since <= read.at < until and None not in (read.newest, previous) \
                    and read.newest > previous + SAME_MOMENT:
                found += 1
            previous = read.newest if read.newest is not None else previous
    return found
