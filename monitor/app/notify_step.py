"""The end of a run: hand its events to people, within what is left of the run's budget.

A notifier failure is logged, never the run's failure: the events stay in the state (or the messages
in the outbox) for the next run.
"""

from __future__ import annotations

import logging
from typing import IO

import httpx

from monitor.config import Config
from monitor.core.logs import log_event
from monitor.notify.deadline import DeadlineClock, WithinDeadline, request_timeout
from monitor.notify.notifier import notify
from monitor.notify.outbox import DEFAULT_SEND_BUDGET, sender_for
from monitor.notify.routing import Routing
from monitor.notify.settings import AlertSettings
from monitor.state import StateSession
from monitor.storage import StateError


def notify_after_run(
    config: Config, session: StateSession, run_id: str, deadline: float, clock, stream: IO[str]
) -> None:
    state = session.state
    # Telegram allows about one message a second per chat: send no more than the reserve left in
    # the budget can pace, and leave the rest in the outbox for the next run.
    seconds_left = deadline - clock.monotonic()
    send_budget = max(1, min(DEFAULT_SEND_BUDGET, int(seconds_left) + 2))
    # A hanging Telegram must not hold the run past its budget: its requests get what is left.
    client = httpx.Client(timeout=request_timeout(seconds_left))

    def checkpoint(outbox, memory) -> None:
        state.outbox, state.alerts = outbox, memory
        session.save()

    try:
        sender = sender_for(config.telegram, state.outbox, stream, clock=DeadlineClock(clock, deadline),
                            client=client, wrap=lambda each: WithinDeadline(each, client, clock, deadline))
        settings = AlertSettings.from_config(config.alerts, report_url=config.report.url)
        report = notify(
            state, state.outbox, state.alerts, settings, sender, clock.now(),
            names={sheet.id: sheet.name for sheet in config.sheets}, checkpoint=checkpoint,
            budget=send_budget, routing=Routing.from_config(config),
        )
        halted = report.halted_event(clock.now(), run_id)
        if halted is not None:
            # Kept as an event so that the first message after the chat works again says why the
            # others came late; `status` shows the halt meanwhile.
            state.events.add(halted)
        checkpoint(report.outbox, report.memory)
    except StateError:
        raise  # a state that cannot be saved ends the run, with its own message (not a traceback)
    except Exception:  # noqa: BLE001 - see the module docstring
        log_event("notify_failed", logging.ERROR, exc_info=True)
    finally:
        client.close()
