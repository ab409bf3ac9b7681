"""Reads in flight: the run hands reads to workers and collects what they bring back, in any order.

The run (``monitor.engine.run``) owns the state and changes it on its own thread only; a read
(``monitor.engine.inspect.read``: one spreadsheet's requests) is the only thing that happens
elsewhere. :class:`ThreadedReads` runs reads on worker threads, each with its own reader, because a
reader holds HTTP sessions and ``requests`` sessions are not thread-safe. The run never waits on a
thread's timing to decide anything: it asks :meth:`Reads.collect` for whatever has finished, and
applies the results in the order they arrive, with the time at which it applies them.

Anything that implements :class:`Reads` can stand in: the tests drive the run with reads that
finish on an injected clock, so no test depends on how threads are scheduled.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from monitor.core.errors import SheetReadError
from monitor.engine.breaker import BreakerState
from monitor.engine.inspect import Encoded, SheetData, SheetPlan, SheetReader, fetch
from monitor.engine.tasks import Task


@dataclass(frozen=True, slots=True)
class ReadJob:
    """One task's read, as handed out: which spreadsheet, with which credential, started when."""

    task_id: str
    plan: SheetPlan
    credential: str
    started: float  # the run clock's monotonic reading when the read was handed out
    fetch_zone: bool = False  # the time zone too, in the same request (monitor.engine.zone_refresh)
    detailed: bool = False  # with every error cell's details (monitor.engine.inspect)
    # A refused range explained by the tab titles, a request without a slot: the pacer kept room.
    explain: bool = True


@dataclass(frozen=True, slots=True)
class ReadDone:
    """A finished read: what Google returned, or the exception the read raised."""

    job: ReadJob
    data: SheetData | Encoded[SheetData] | None  # Encoded until the run judges it: see decoded()
    error: Exception | None
    finished: float  # monotonic, on the run's clock
    # Monotonic, when a worker began its requests (None: as it was handed out); later than the job's
    # ``started`` when every worker was busy or the machine short of CPU (the pacer's guess).
    began: float | None = None

    @property
    def seconds(self) -> float:
        return max(0.0, self.finished - self.job.started)

    def decoded(self) -> ReadDone:
        """This read with its answer decoded, as the run judges it: on the run's thread, one answer at
        a time (see ``Encoded``). An answer that is not what was asked is the read's error."""
        if not isinstance(self.data, Encoded):
            return self
        try:
            return replace(self, data=self.data.decoded())
        except SheetReadError as error:
            return replace(self, data=None, error=error)


def perform(job: ReadJob, reader: SheetReader, timeout: Callable[[], float]
            ) -> SheetData | Encoded[SheetData]:
    """The requests ``job`` stands for, with ``reader``: what every :class:`Reads` runs."""
    return fetch(job.plan, reader, job.credential, timeout, fetch_zone=job.fetch_zone, detailed=job.detailed,
                 explain=job.explain)


@dataclass(slots=True)
class InFlight:
    """A task whose read is out: what applying its result needs besides the result."""

    task: Task
    plan: SheetPlan
    credential: str
    breaker_before: BreakerState | None  # its breaker before this read (a probe may be given back)
    alone: bool  # a quarantined task, read with nothing else in flight
    sent_at: float | None = None  # epoch seconds, as the pacer counted the send
    started: float = 0.0  # monotonic, set when its read is handed out
    fetch_zone: bool = False  # the read asks for the spreadsheet's time zone too
    requests: int = 1  # the Sheets requests it sends: the pacer's slots it took
    follow_ups: int = 0  # the requests it may send beside them, for which the pacer keeps room
    # Monotonic, when its answer becomes overdue, after which the run marks its task so while it is
    # alone in flight (the poison guard's evidence, monitor.engine.overdue); None once marked, or when
    # nothing says when it is due.
    overdue_at: float | None = None
    job: ReadJob | None = None  # the read as handed out


class Reads(Protocol):
    """Where the run's reads happen. ``timeout()`` is asked as each request starts (the budget shrinks)."""

    def start(self, job: ReadJob, timeout: Callable[[], float]) -> None: ...

    def collect(self, wait_seconds: float) -> list[ReadDone]:
        """The reads finished since the last call; waits up to ``wait_seconds`` for the first one."""
        ...

    def in_flight(self) -> int:
        """Reads started and not yet collected."""
        ...

    def close(self) -> None: ...


class ThreadedReads:
    """Reads on up to ``workers`` daemon threads, started as the run needs them.

    Each worker builds its own reader with ``make_reader`` the first time it works. The threads are
    daemons: a request that hangs past the run's end must not keep the process alive, and the run
    has already given its task back by then (``Run`` never waits past its budget).
    """

    def __init__(self, make_reader: Callable[[], SheetReader], workers: int, monotonic: Callable[[], float]
                 ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self._make_reader = make_reader
        self._workers = workers
        self._monotonic = monotonic
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._done: queue.SimpleQueue[ReadDone] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._in_flight = 0

    def start(self, job: ReadJob, timeout: Callable[[], float]) -> None:
        self._in_flight += 1
        if self._in_flight > len(self._threads) and len(self._threads) < self._workers:
            thread = threading.Thread(target=self._work, name=f"read-{len(self._threads) + 1}", daemon=True)
            self._threads.append(thread)
            thread.start()
        self._jobs.put((job, timeout))

    def collect(self, wait_seconds: float) -> list[ReadDone]:
        finished = []
        try:
            finished.append(self._done.get(timeout=wait_seconds) if wait_seconds > 0
                            else self._done.get_nowait())
            while True:
                finished.append(self._done.get_nowait())
        except queue.Empty:
            pass
        self._in_flight -= len(finished)
        return finished

    def in_flight(self) -> int:
        return self._in_flight

    def close(self) -> None:
        """Let idle workers end; a worker still in a request ends with it (or with the process)."""
        for _ in self._threads:
            self._jobs.put(None)

    @property
    def workers_started(self) -> int:
        return len(self._threads)

    def _work(self) -> None:
        reader = None
        while (item := self._jobs.get()) is not None:
            job, timeout = item
            data = error = None
            began = self._monotonic()
            try:
                reader = reader or self._make_reader()
                data = perform(job, reader, timeout)
            except Exception as exc:  # noqa: BLE001 - the run classifies it; a worker must live on
                error = exc
            self._done.put(ReadDone(job, data, error, self._monotonic(), began))
            # Let go of the read before waiting for the next: the run frees an answer once it has
            # judged it, but a worker's locals held its last one (and a failed read's traceback)
            # for as long as the worker idled, up to 64 answers at a time.
            del item, job, data, error
