"""``State``: everything the runner's store holds, as typed documents in memory.

The engine's documents (``RunnerState``: the round and its tasks, health, breakers, the DLQ, mutes,
events, heartbeat, runs, API health, quota, incidents) plus the notifier's (the outbox, the alert
memory, and the conversation: how far the chat's updates were read).
``damaged`` lists the entries this load could not read; they are not part of the state.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.core.tracking import Single
from monitor.engine.runner_state import RunnerState
from monitor.notify.documents import AlertMemory, ChatPosition, Outbox


@dataclass(frozen=True)
class Damage:
    """A stored entry that could not be read as its kind of document."""

    key: str
    problem: str
    raw: str  # the stored text, kept when it is set aside


class State(RunnerState):
    outbox = Single()  # Outbox
    alerts = Single()  # AlertMemory
    conversation = Single()  # ChatPosition: the chat's updates read so far, answers owed

    def __init__(
        self, *, outbox: Outbox | None = None, alerts: AlertMemory | None = None,
        conversation: ChatPosition | None = None, **documents
    ) -> None:
        super().__init__(**documents)
        self.outbox = outbox or Outbox()
        self.alerts = alerts or AlertMemory()
        self.conversation = conversation or ChatPosition()
        self.damaged: list[Damage] = []  # found by this load, not yet set aside
        self.set_aside: list[str] = []  # keys of entries set aside earlier (``damaged/<key>``)
        # Written whole at the next save by a writer: a fresh store, an older layout, a lost schema.
        self.needs_full_save = False
        # Every runner's own heartbeat and run history, by runner, when runners share the state (read
        # only: the watchdog's and `status`'s); empty for one runner, whose are ``heartbeat``/``runs``.
        self.runner_heartbeats: dict = {}
        self.runner_runs: dict = {}
        self.changed_singles.clear()
