"""The end of a run: hand its events to people, within what is left of the run's budget.

A notifier failure is logged, never the run's failure: the events stay in the state (or the messages
in the outbox) for the next run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from monitor.config import Config
from monitor.core.logs import log_event
from monitor.notify import lean_httpx
from monitor.notify.buttons import Signer
from monitor.notify.deadline import DeadlineClock, WithinDeadline, request_timeout
from monitor.notify.destinations import all_halts
from monitor.notify.documents import Halt, Outbox
from monitor.notify.notifier import NotifyReport, notify
from monitor.notify.outbox import DEFAULT_SEND_BUDGET, sender_for
from monitor.notify.routing import Routing
from monitor.notify.settings import AlertSettings
from monitor.state import StateSession
from monitor.storage import StateError


@dataclass(frozen=True)
class Delivered:
    """What a run's messages became: how many Telegram took in this run, how many wait in the
    outbox, and the chats Telegram refuses as a whole (by halt key: monitor.notify.destinations)."""

    sent: int
    waiting: int
    halts: Mapping[str, Halt]
    notified: bool  # False: the notifier failed, or another runner does the sending (Redis)

    @classmethod
    def of(cls, told: Sequence[NotifyReport | None], outbox: Outbox) -> Delivered:
        """From the run's notifier passes (one at its end, and one each time it told what it found
        while watching Drive's feed)."""
        sent = sum(report.count("sent") for report in told if report)
        return cls(sent, len(outbox.pending), all_halts(outbox), bool(told) and None not in told)


def buttons_signer(config: Config) -> Signer | None:
    """What signs the buttons under alerts when the runs listen to the chat (None: no buttons: nobody
    would answer a press)."""
    telegram = config.telegram
    if not (telegram.listen and telegram.enabled):
        return None
    return Signer(telegram.bot_token.get_secret_value())


def notify_after_run(
    config: Config, session: StateSession, run_id: str, deadline: float, clock, stream: IO[str]
) -> NotifyReport | None:
    """What this run's notifier did (None when it failed: logged, the messages wait)."""
    state = session.state
    # Telegram allows about one message a second per chat: send no more than the reserve left in
    # the budget can pace, and leave the rest in the outbox for the next run.
    seconds_left = deadline - clock.monotonic()
    send_budget = max(1, min(DEFAULT_SEND_BUDGET, int(seconds_left) + 2))
    # A hanging Telegram must not hold the run past its budget: its requests get what is left.
    client = lean_httpx.client(timeout=request_timeout(seconds_left))

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
            budget=send_budget, routing=Routing.from_config(config), maintenance=config.maintenance,
            signer=buttons_signer(config),
        )
        checkpoint(report.outbox, report.memory)
        return report
    except StateError:
        raise  # a state that cannot be saved ends the run, with its own message (not a traceback)
    except Exception:  # noqa: BLE001 - see the module docstring
        log_event("notify_failed", logging.ERROR, exc_info=True)
        return None
    finally:
        client.close()
