"""Runs of the engine (``monitor.engine.run.Run``) as the app starts them, for the run tests.

``Bench`` opens the state the way every process does (``changing_state``: lock, load, repair), builds
a ``Run`` over it with the session's ``save`` as its checkpoint, and saves when the run ends, so every
run a test makes also checks that all it changed was saved (``access.VERIFY_SAVES``, on in every test
through conftest). The state lives in memory (``MemoryLocation``) or in a state folder. The reader is
the test's: a scripted one here, the real gspread reader against the sandbox in test_run.

No asserts in this module: test modules make them.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from monitor.checks import FormulaErrorsCheck
from monitor.core.clock import ManualClock
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.engine.breaker import BreakerPolicy
from monitor.engine.change_detection import ChangedFiles, ChangeFeed
from monitor.engine.events import Event
from monitor.engine.inflight import ReadDone, ReadJob, Reads, perform
from monitor.engine.inspect import SheetPlan, SheetReader, ZoneAnswer
from monitor.engine.pacer import QuotaPacer
from monitor.engine.run import Run
from monitor.engine.settings import RunSettings
from monitor.state import State, StateSession, changing_state, read_state
from monitor.storage import StateLocation

RANGE = "Stock!A1:B2"
ROWS = {"range": RANGE, "majorDimension": "ROWS", "values": [["SKU", 1]]}
UNAVAILABLE = SheetReadError(ErrorClass.TRANSIENT, 503, "UNAVAILABLE", "The service is unavailable.")
QUOTA = SheetReadError(ErrorClass.QUOTA, 429, "RESOURCE_EXHAUSTED", "Quota exceeded.")
FORBIDDEN = SheetReadError(ErrorClass.PERMANENT, 403, "PERMISSION_DENIED", "The caller has no permission")

SETTINGS = RunSettings(
    budget=timedelta(minutes=5),
    round_interval=timedelta(minutes=5),
    request_timeout=2.0,
    breaker=BreakerPolicy(3, cooldown=timedelta(minutes=15), max_cooldown=timedelta(hours=4)),
)


CHECKS = (FormulaErrorsCheck(range=RANGE),)


def plans(count: int) -> list[SheetPlan]:
    return [SheetPlan(id=f"s{n}", name=f"Store {n}", checks=CHECKS, ranges=(RANGE,)) for n in range(count)]


class ScriptedReader:
    """Answers each read with one plain row, except what is scripted per spreadsheet, in order:
    ``script[id]`` is a count of ``error`` to raise, or a list of exceptions to raise and ValueRanges
    to answer instead of the plain row."""

    def __init__(self, script: dict[str, int | list] | None = None, error: SheetReadError = UNAVAILABLE
                 ) -> None:
        self.script = {sid: [error] * due if isinstance(due, int) else list(due)
                       for sid, due in (script or {}).items()}
        self.reads: list[str] = []
        self.timeouts: list[float] = []
        # Each spreadsheet's time zone (default Etc/GMT, Google's), or an exception its zone request raises.
        self.zones: dict[str, str | BaseException] = {}
        self.zone_reads: list[str] = []
        self.tab_requests: list[str] = []

    def read(self, spreadsheet_id, ranges, credential, timeout):
        self.reads.append(spreadsheet_id)
        self.timeouts.append(timeout)
        answer = self.script[spreadsheet_id].pop(0) if self.script.get(spreadsheet_id) else ROWS
        if isinstance(answer, BaseException):
            raise answer
        return [answer for _ in ranges]

    def read_detailed(self, spreadsheet_id, ranges, credential, timeout):
        """The scripted answer, with the error cells a ValueRange of the script lists under
        ``"errors"`` (CellErrors): what a spreadsheets.get with grid data would say, and the same
        ranges as formulas."""
        value_ranges = self.read(spreadsheet_id, ranges, credential, timeout)
        errors = tuple(error for value_range in value_ranges for error in value_range.get("errors", ()))
        plain = [{k: v for k, v in value_range.items() if k != "errors"} for value_range in value_ranges]
        return plain, errors, plain  # no formulas: the scripted cells are values

    def read_with_zone(self, spreadsheet_id, ranges, credential, timeout, detailed=False):
        """The spreadsheet's zone (``zones``: a name, or an exception to raise) and its values, as one
        spreadsheets.get with grid data gives both: counted in ``zone_reads`` and ``reads``."""
        zone = self.time_zone(spreadsheet_id, credential, timeout)
        if detailed:
            return self.read_detailed(spreadsheet_id, ranges, credential, timeout), zone
        return (self.read(spreadsheet_id, ranges, credential, timeout), (), []), zone

    def modified_time(self, spreadsheet_id, credential, timeout):
        raise NotImplementedError("no check of these plans needs the file's modified time")

    def time_zone(self, spreadsheet_id, credential, timeout):
        self.zone_reads.append(spreadsheet_id)
        answer = self.zones.get(spreadsheet_id, "Etc/GMT")
        if isinstance(answer, BaseException):
            raise answer
        return ZoneAnswer(answer)

    def tab_titles(self, spreadsheet_id, credential, timeout):
        """Asked when a range was refused: the tabs a renamed one left."""
        self.tab_requests.append(spreadsheet_id)
        return ("Stock 2024",)


class InlineReads:
    """Each read happens as it starts, on the test's thread, one at a time: deterministic with a
    scripted reader that moves the ManualClock, and a ``Killed`` raised by the reader leaves the run
    at once, as a kill -9 during the request would."""

    def __init__(self, reader: SheetReader, clock: ManualClock) -> None:
        self.reader = reader
        self.clock = clock
        self._done: list[ReadDone] = []

    def start(self, job: ReadJob, timeout: Callable[[], float]) -> None:
        data = error = None
        try:
            data = perform(job, self.reader, timeout)
        except Exception as exc:  # noqa: BLE001 - handed to the run, as a worker would
            error = exc
        self._done.append(ReadDone(job, data, error, self.clock.monotonic()))

    def collect(self, wait_seconds: float) -> list[ReadDone]:
        done, self._done = self._done, []
        return done

    def in_flight(self) -> int:
        return len(self._done)

    def close(self) -> None:
        pass


class SimulatedReads:
    """Reads that overlap in time on the ManualClock: a read of spreadsheet ``s`` lasts ``latency(s)``
    seconds, or its timeout when that is shorter (it then fails as a timeout does), and reads finish
    in the order their time is up. A latency of None never ends, timeout or not: a server dripping
    its answer, which no socket timeout catches. The answer itself comes from ``reader``.
    Deterministic: no threads."""

    def __init__(self, reader: SheetReader, clock: ManualClock,
                 latency: Callable[[str], float | None]) -> None:
        self.reader = reader
        self.clock = clock
        self.latency = latency
        self._out: list[tuple[float, int, ReadDone]] = []  # heap of (ends at, order, result)
        self._sequence = 0
        self.started: list[tuple[str, float]] = []  # (spreadsheet id, start in epoch seconds, as the pacer)
        self.credentials: list[str] = []  # each read's credential, in the order of ``started``

    def start(self, job: ReadJob, timeout: Callable[[], float]) -> None:
        limit, seconds = timeout(), self.latency(job.plan.id)
        self.started.append((job.plan.id, self.clock.time()))
        self.credentials.append(job.credential)
        data = error = None
        if seconds is None:
            seconds = math.inf
        elif seconds > limit:
            seconds, error = limit, SheetReadError(ErrorClass.TRANSIENT, None, None,
                                                   f"no answer within {limit:.1f} s")
        else:
            try:
                data = perform(job, self.reader, lambda: limit)
            except Exception as exc:  # noqa: BLE001 - handed to the run, as a worker would
                error = exc
        ends = self.clock.monotonic() + seconds
        self._sequence += 1
        heapq.heappush(self._out, (ends, self._sequence, ReadDone(job, data, error, ends)))

    def collect(self, wait_seconds: float) -> list[ReadDone]:
        now = self.clock.monotonic()
        if not self._out or self._out[0][0] > now + wait_seconds:
            if self._out or wait_seconds != float("inf"):
                self.clock.advance(wait_seconds)
            return []
        self.clock.advance(max(0.0, self._out[0][0] - now))
        done = []
        while self._out and self._out[0][0] <= self.clock.monotonic():
            done.append(heapq.heappop(self._out)[2])
        return done

    def in_flight(self) -> int:
        return len(self._out)

    def close(self) -> None:
        pass


class Killed(BaseException):
    """Raised by a reader, it stands for kill -9 during a request: nothing of the run happens after
    it, not even the session's final save; what is stored is what its checkpoints saved."""


class PoisonReader(ScriptedReader):
    """A scripted reader whose read of ``poison`` kills the process (its answer would exhaust memory,
    say): that spreadsheet never answers."""

    def __init__(self, poison: str, **scripted) -> None:
        super().__init__(**scripted)
        self.poison = poison

    def read(self, spreadsheet_id, ranges, credential, timeout):
        if spreadsheet_id == self.poison:
            self.reads.append(spreadsheet_id)
            raise Killed()
        return super().read(spreadsheet_id, ranges, credential, timeout)


class KillingClock(ManualClock):
    """A ManualClock that stands for kill -9 at a moment of the test's choosing: the advance that
    reaches it stops there and raises Killed, wherever the run was waiting (on reads in flight, a
    retry, the pacer)."""

    kill_at: float | None = None  # monotonic

    def kill_after(self, seconds: float | None) -> None:
        """Kill the process ``seconds`` from now (None: not at all)."""
        self.kill_at = None if seconds is None else self.monotonic() + seconds

    def advance(self, seconds: float) -> None:
        if self.kill_at is not None and self.monotonic() + seconds >= self.kill_at:
            at, self.kill_at = self.kill_at, None
            super().advance(max(0.0, at - self.monotonic()))
            raise Killed()
        super().advance(seconds)


@dataclass
class Bench:
    """One place for a test's state, clock, spreadsheets and reader; each ``run`` is one cron run."""

    reader: SheetReader
    plans: list[SheetPlan]
    location: StateLocation | Path
    clock: ManualClock = field(default_factory=ManualClock)
    credentials: Sequence[str] = ("sa-1.json",)
    per_credential: int = 60
    per_project: int = 300
    projects: dict[str, str] | None = None  # credential -> Cloud project (default: one for all)
    runs: int = 0
    # Builds each run's reads from the clock (default: one read at a time, inline).
    make_reads: Callable[[ManualClock], Reads] | None = None
    changes: ChangeFeed | None = None  # Drive's change feed (default: none, every round reads all)
    tell: Callable[[], None] | None = None  # the notifier's pass while a run watches the feed

    @contextmanager
    def session(self, actor: str = "admin-test") -> Iterator[StateSession]:
        """The state under the run lock, saved when the block ends (as an admin command changes it)."""
        with changing_state(self.location, actor=actor, now=self.clock.now()) as session:
            yield session

    @contextmanager
    def opened(self, settings: RunSettings = SETTINGS, *, rng: random.Random | None = None,
               save: Callable[[StateSession], None] | None = None, **overrides) -> Iterator[Run]:
        """A run over the stored state, not started: the test calls begin/step/end or execute.
        ``save``: the run's checkpoint, given the session (default: ``session.save()``)."""
        self.runs += 1
        run_id = f"run-{self.runs}"
        with self.session(actor=run_id) as session:
            pacer = QuotaPacer(list(self.credentials), per_credential=self.per_credential,
                               per_project=self.per_project, credential_projects=self.projects)
            pacer.restore(session.state.quota)
            reads = self.make_reads(self.clock) if self.make_reads else InlineReads(self.reader, self.clock)
            yield Run(run_id=run_id, settings=replace(settings, **overrides), plans=self.plans,
                      state=session.state, reads=reads, pacer=pacer, clock=self.clock,
                      save=session.save if save is None else partial(save, session),
                      rng=rng or random.Random(7), changes=self.changes, tell=self.tell)

    def run(self, settings: RunSettings = SETTINGS, **overrides) -> Run:
        with self.opened(settings, **overrides) as run:
            run.execute()
        return run

    def stored(self) -> State:
        """The state as the last save left it, read as the watchdog and `status` read it."""
        return read_state(self.location)


def kinds(events) -> list[str]:
    """The kinds of events, in order (``events``: a state's EventLog or a list of events)."""
    return [event.KIND for event in events]


def of_run(run: Run) -> list[Event]:
    """The events this run recorded."""
    return [event for event in run.state.events if event.run_id == run.run_id]


@dataclass
class ScriptedDrive:
    """Drive's change feed as the run sees it: positions are numbers, ``changed``/``removed`` are what
    the next ``changed_since`` reports (then forgotten, as Drive moves past them), ``errors`` are
    raised first, one per call. ``asked`` records each call's position (None: a start position)."""

    source: str = "sa-1.json"
    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    errors: list[BaseException] = field(default_factory=list)
    asked: list[str | None] = field(default_factory=list)
    end: int = 1
    # Edits Drive shows from a moment on (a ManualClock's monotonic seconds): (moment, spreadsheet ids).
    later: list[tuple[float, set[str]]] = field(default_factory=list)
    clock: object = None
    edited: dict[str, datetime] = field(default_factory=dict)  # the modifiedTime it reports, by id

    def start_position(self, timeout: float) -> str:
        self.asked.append(None)
        self._fail_if_scripted()
        return str(self.end)

    def changed_since(self, position: str, timeout: float) -> ChangedFiles:
        self.asked.append(position)
        self._fail_if_scripted()
        while self.later and self.later[0][0] <= self.clock.monotonic():
            self.changed |= self.later.pop(0)[1]
        changed, removed = frozenset(self.changed), frozenset(self.removed)
        self.changed, self.removed = set(), set()
        self.end += len(changed | removed)
        edited = {sid: at for sid, at in self.edited.items() if sid in changed}
        return ChangedFiles(changed, removed, str(self.end), requests=1, edited=edited)

    def _fail_if_scripted(self) -> None:
        if self.errors and (error := self.errors.pop(0)) is not None:  # None: that call answers
            raise error
