"""Runs dying mid-round, told once per outage: the first death is told, later ones are counted, and
one line says when runs finish again.

A storm of kills (a machine out of memory, a supervisor killing the run on a timer) can make every
other run die; each next run takes over the dead one's tasks and reports it (``CrashRecovered``).
Told one by one, that is a message every few minutes saying the same thing. The fold lives in the
alert memory (``AlertMemory.crashes``), so it outlives the runs that die.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.engine.events import CrashRecovered, Event, RunsFinishAgain
from monitor.notify.documents import AlertMemory, CrashOutage

# Runs finishing this long without one dying end the outage: six 5-minute runs in a row, so a storm
# with a few lucky runs in it stays one outage, and a crash hours later is news again.
QUIET_AFTER_CRASHES = timedelta(minutes=30)


def fold_crashes(
    events: Sequence[Event], memory: AlertMemory, now: datetime, run_id: str = ""
) -> tuple[list[Event], AlertMemory]:
    """The events people hear of, and the memory after: the first ``CrashRecovered`` of an outage
    is kept (its line tells it), later ones are counted in the memory and left out; once runs have
    finished for ``QUIET_AFTER_CRASHES`` without one dying, the outage ends, with a
    ``RunsFinishAgain`` when deaths were counted without being told."""
    crashes = [event for event in events if isinstance(event, CrashRecovered)]
    outage = memory.crashes
    told = crashes[0] if crashes and outage is None else None
    others = [event for event in events if not isinstance(event, CrashRecovered) or event is told]
    if crashes:
        if outage is None:
            outage = CrashOutage(first_at=crashes[0].at, last_at=crashes[0].at, runs=0)
        for event in crashes:
            outage = replace(outage, last_at=max(outage.last_at, event.at), runs=outage.runs + 1,
                             reclaimed=outage.reclaimed + event.reclaimed,
                             poisoned=outage.poisoned + event.poisoned)
        return others, replace(memory, crashes=outage)
    if outage is None or now - outage.last_at < QUIET_AFTER_CRASHES:
        return others, memory
    if outage.runs > 1:
        others.append(RunsFinishAgain(
            at=now, run_id=run_id, first_at=outage.first_at, last_at=outage.last_at, runs=outage.runs,
            reclaimed=outage.reclaimed, poisoned=outage.poisoned,
        ))
    return others, replace(memory, crashes=None)
