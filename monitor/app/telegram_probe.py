"""Telegram tried for real, for a person at a terminal: ``check-config`` asks ``getMe`` and
``getChat`` and sends nothing; ``notify test`` sends one message to every chat the config names.

The chats are the default one, each route's and the escalation chat, in the config's order, each
once (``monitor.notify.routing.configured_chats``).
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.config import Config
from monitor.notify import lean_httpx
from monitor.notify.deadline import MAX_REQUEST_SECONDS
from monitor.notify.documents import Outbox
from monitor.notify.outbox import chat_id_for
from monitor.notify.routing import configured_chats
from monitor.notify.telegram import DeliveryError, TelegramSender
from monitor.notify.telegram_check import Answer, BotLookup, fix_for_error
from monitor.state import read_state
from monitor.storage import StateError
from monitor.storage.configured import state_location


def ask_telegram(config: Config) -> list[tuple[str, Answer]]:
    """``getMe`` once, then ``getChat`` for each distinct chat: (what was asked, Telegram's answer).
    A forum topic cannot be checked without posting in it (``notify test`` does)."""
    with lean_httpx.client(timeout=MAX_REQUEST_SECONDS) as client:
        api = BotLookup(config.telegram.bot_token.get_secret_value(), config.telegram.api_base, client)
        answers = [("bot token", api.bot())]
        if answers[0][1].ok:
            chats = dict.fromkeys(chat for _, chat, _ in configured_chats(config))
            answers += [(f"chat {chat}", api.chat(chat)) for chat in chats]
    return answers


@dataclass(frozen=True)
class ChatTrial:
    """What one chat (or forum topic) did with the test message."""

    chat_id: str
    thread_id: int | None
    message_id: int | None = None
    moved_to: str | None = None  # the supergroup a group became: the config's chat_id is stale
    refusal: str | None = None  # Telegram's status and words
    fix: str | None = None

    @property
    def where(self) -> str:
        return f"chat {self.chat_id}" + (f" topic {self.thread_id}" if self.thread_id else "")


def send_test(config: Config, text: str) -> list[ChatTrial]:
    """``text`` sent once to every chat and topic the config names, each through the chat the runs
    would use (a group's migration the runs learnt is followed)."""
    outbox = _runner_outbox(config)
    sends = []
    with lean_httpx.client(timeout=MAX_REQUEST_SECONDS) as client:
        for _, chat_id, thread_id in configured_chats(config):
            sender = TelegramSender(config.telegram.bot_token.get_secret_value(),
                                    chat_id_for(outbox, chat_id), config.telegram.api_base,
                                    thread_id=thread_id, client=client)
            try:
                sent = sender.send(text)
            except DeliveryError as error:
                status = f"{error.status} " if error.status else ""
                sends.append(ChatTrial(chat_id, thread_id, refusal=f"{status}{error.description}",
                                      fix=fix_for_error(error)))
                continue
            moved = sent.chat_id if sent.chat_id != chat_id else None
            sends.append(ChatTrial(chat_id, thread_id, message_id=sent.message_id, moved_to=moved))
    return sends


def _runner_outbox(config: Config) -> Outbox:
    """The runner's outbox, for the chat migrations it learnt (none when there is no state yet)."""
    try:
        state = read_state(state_location(config), only=("outbox",))
    except StateError:
        return Outbox()
    return state.outbox if state is not None else Outbox()
