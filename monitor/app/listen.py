"""The run listening to the chat, wired: who reads the bot's updates, while the run works and after.

``listening(...)`` is a context manager around a run: inside it, the process holds the poll lock (or
does not listen: another process does), its reader thread long-polls, and ``RunListener`` hands the
engine what to answer between steps. ``linger(...)`` goes on listening once the run's work is done
and its lock released, until the run's budget is spent, taking the state's lock for each batch
only. Loaded only for a config with ``[telegram] listen`` and a token (httpx is the notifier's).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from monitor.chat.actions import Place
from monitor.chat.bot import BotApi
from monitor.chat.conversation import POLL_LOCK, Conversation
from monitor.chat.people import Gate
from monitor.config import Config
from monitor.core.logs import log_event
from monitor.notify import lean_httpx
from monitor.notify.buttons import Signer
from monitor.notify.deadline import DeadlineClock, WithinDeadline
from monitor.notify.outbox import sender_for
from monitor.notify.routing import configured_chats
from monitor.state import changing_state
from monitor.state.access import location_of

LOCK_WAIT_SECONDS = 10.0  # for a batch after the run: an admin command holds the lock a moment only


def listens(config: Config) -> bool:
    return bool(config.telegram.listen and config.telegram.enabled)


class RunListener:
    """The engine's ``Listener`` for one run: the conversation, with the run's session."""

    def __init__(self, conversation: Conversation, session, clock) -> None:
        self.conversation, self.session, self.clock = conversation, session, clock

    def waiting(self) -> bool:
        return self.conversation.waiting(self.session.state, self.clock.now())

    def answer(self) -> None:
        self.conversation.answer(self.session.state, self.session.save, self.clock.now())

    def wait(self, seconds: float) -> None:
        self.conversation.wait(seconds)


@contextmanager
def listening(config: Config, location, state, clock, deadline: float) -> Iterator[Conversation | None]:
    """The conversation this process holds (None: it does not listen: the config says not to, or
    another process holds the poll lock and reads the chat)."""
    if not listens(config):
        yield None
        return
    lock = location_of(location).lock(POLL_LOCK)
    if not lock.try_acquire():
        log_event("chat_not_read", reason="another process reads the chat")
        yield None
        return
    client = lean_httpx.client()
    try:
        telegram = config.telegram
        token = telegram.bot_token.get_secret_value()
        names = {sheet.id: sheet.name for sheet in config.sheets}
        timed = DeadlineClock(clock, deadline)

        def senders(outbox):
            return sender_for(telegram, outbox, None, clock=timed, client=client,
                              wrap=lambda each: WithinDeadline(each, client, clock, deadline))

        conversation = Conversation(
            BotApi(token, telegram.api_base, client), Signer(token),
            Gate.of([chat.chat_id for chat in configured_chats(config)], telegram.operators),
            Place(names, config.run.round_interval, tuple(config.maintenance)),
            config.sheets, config.report.url, clock, deadline, senders,
            (str(telegram.chat_id), telegram.message_thread_id))
        conversation.start(state.conversation)
        log_event("chat_listening", until_s=round(deadline - clock.monotonic(), 1))
        try:
            yield conversation
        finally:
            conversation.stop()
    finally:
        client.close()
        lock.release()


def presses_possible(state) -> bool:
    """Is a button out there that someone may press (an open incident told with buttons)? A press is
    Telegram's for 150 seconds only; a command for a day, which the next run reads in time."""
    return any(incident.is_open and incident.told for incident in state.incidents.values())


def linger(conversation: Conversation | None, state, location, lock: str, clock) -> None:
    """After the run: while buttons may be pressed (``state``, as the run saved it), answer the chat
    until the budget is spent, taking the state's ``lock`` for each batch; stops early when the lock
    stays taken (the next run has begun: it reads the chat now)."""
    if conversation is None or not presses_possible(state):
        return
    # Bounded on the real clock as well: a run driven by an injected clock that does not move (tests)
    # must still end; the conversation's own deadline is on that clock.
    ends = time.monotonic() + max(conversation.left(), 0.0)
    while (conversation.left() > 1 and time.monotonic() < ends
           and (conversation.reading() or conversation.has_updates())):
        conversation.wait(min(5.0, conversation.left()))
        if not conversation.has_updates():
            continue
        with changing_state(location, actor="chat", now=clock.now(), wait=LOCK_WAIT_SECONDS,
                            lock=lock) as session:
            if session is None:
                log_event("chat_handed_over", logging.INFO, reason="the state's lock is taken")
                return
            conversation.answer(session.state, session.save, clock.now())
