"""After the state was lost: what fails is told once, as a list, not spreadsheet by spreadsheet as new.

A Redis restarted without its data hands the monitor an empty state: no health records, no alert
memory. The first round then finds every known problem again, and each would be told as a new
failure, over the round's runs, though people were told of most of them before. So while the first
round that began after the loss goes on, the alerts leave out each spreadsheet's first verdict and
first dead letter (they are still remembered as told, so their end and their reminders come as
usual), and when that round is complete one message lists what fails and warns
(``digest.compose_relearned``). What happens to a spreadsheet after its first verdict (it recovers,
it fails in a new way) is told at once as always, and so is everything not about one spreadsheet.

Why a list at the round's end rather than a copy of the alert memory kept on the host: the copy
would be as old as its last write, belong to one host of several, and still not know the health
records the alerts are judged against; the round's list is what is true now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from monitor.engine.events import DeadLettered, Event, HealthChanged
from monitor.engine.health import UNKNOWN
from monitor.engine.tasks import Round
from monitor.notify.documents import AlertMemory, Relearning


def start_relearning(memory: AlertMemory, now: datetime) -> AlertMemory:
    """The alert memory of a state found lost at ``now`` (it is empty: the old one was lost too)."""
    return replace(memory, relearning=Relearning(since=now))


def held_back(events: Sequence[Event], memory: AlertMemory) -> tuple[list[Event], list[Event]]:
    """(told now, left for the list): while relearning, a spreadsheet's first verdict and its first
    dead letter wait for the list at the round's end."""
    if memory.relearning is None:
        return list(events), []
    told: list[Event] = []
    held: list[Event] = []
    for event in events:
        first = (isinstance(event, HealthChanged) and event.previous == UNKNOWN) or isinstance(
            event, DeadLettered)
        (held if first else told).append(event)
    return told, held


def relearning_round(memory: AlertMemory, rnd: Round | None) -> AlertMemory:
    """The memory knowing which round ends the relearning: the first that began after the loss."""
    relearning = memory.relearning
    if relearning is None or relearning.round is not None or rnd is None:
        return memory
    if rnd.info.started_at < relearning.since:
        return memory  # a round from before the loss (its tasks came back with a partial state)
    return replace(memory, relearning=replace(relearning, round=rnd.id))


def relearned(memory: AlertMemory, rnd: Round | None) -> bool:
    """Is the round that ends the relearning complete (the list is owed now)?"""
    relearning = memory.relearning
    return (relearning is not None and rnd is not None and relearning.round == rnd.id
            and rnd.is_complete())
