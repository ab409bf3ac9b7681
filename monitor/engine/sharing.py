"""Several runners on one state: what a run asks of the others before it reads or starts a round.

The run works the same alone and beside other runners; ``Sharing`` is the seam between them.

- **A claim** before each read: the task is leased to this run only if the stored task is still the
  one this runner holds (another runner may have read it meanwhile) and the round is still the one it
  holds. A claim granted comes with the spreadsheet's documents as stored now (health, breaker, DLQ
  entry, history, mute), so the run judges with what another runner may have written; a claim refused
  leaves the stored task in this runner's round, and the run moves on.
- **A turn**: a short exclusive section (a lock of its own, ``round``) in which the runner re-reads the
  whole state, reclaims the tasks of runs that died, and, when the round is complete and due, builds
  the next one and saves it before letting go. So exactly one runner starts each round, and the
  others, in their next turn, read the round it built.
- **Leases by run**: a run holds one lease while it lives, renewed by a thread; a task it leased names
  the run (``Task.run_id``). A run killed with reads in flight loses its lease once, for all of them
  together, and any runner then reclaims them: the poison guard blames a task only when it was its
  dead run's one read in flight, as it does for one runner.

``Alone`` is one runner holding the run lock, as the file backend always has: every claim is granted
without asking anyone, a turn re-reads nothing, and every task found ``processing`` at the start was
the last run's. The Redis backend's runners share through ``monitor.state.shared``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from enum import Enum
from typing import Protocol

from monitor.engine.tasks import Task


class Claim(Enum):
    GRANTED = "granted"  # leased to this run, the spreadsheet's documents fresh in memory
    TAKEN = "taken"  # another runner changed the task: the stored one is now in this runner's round
    ROUND_GONE = "round_gone"  # the round was replaced: take a turn to read the new one


class Sharing(Protocol):
    """How a run shares the state with other runners (see the module docstring)."""

    runner: str  # this runner's name, in logs and heartbeats
    shared: bool  # False: alone, nothing to ask

    def claim(self, task: Task, leased: Task) -> Claim:
        """Lease ``task`` as ``leased`` (the same task, ``processing`` for this run) if nobody else
        changed it; on GRANTED the state holds ``leased`` and the spreadsheet's fresh documents."""
        ...

    def turn(self) -> AbstractContextManager[bool]:
        """Hold the round lock (True) with the state re-read; False when another runner kept it past a
        short wait (the caller goes on with what it holds). The caller saves before it ends."""
        ...

    def dead(self, run_id: str | None) -> bool:
        """Is the run ``run_id`` gone (its lease expired)? A task without a run id is a dead run's."""
        ...


class Alone:
    """One runner, holding the run lock: nobody else to ask (the file backend, and the engine's tests)."""

    shared = False

    def __init__(self, runner: str = "") -> None:
        self.runner = runner

    def claim(self, task: Task, leased: Task) -> Claim:
        return Claim.GRANTED

    @contextmanager
    def turn(self) -> Iterator[bool]:
        yield True

    def dead(self, run_id: str | None) -> bool:
        return True
