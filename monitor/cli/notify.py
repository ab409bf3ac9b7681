"""`notify test` (send one message to every chat the config names and say what Telegram answered)
and the Telegram part of `check-config` (ask ``getMe`` and ``getChat``, send nothing).

The chats are the default one, each route's and the escalation chat, in the config's order, each
once (``monitor.notify.routing.configured_chats``).
"""

from __future__ import annotations

import logging
import socket
import sys
from pathlib import Path

from monitor.notify import lean_httpx  # noqa: F401  before httpx: see its doc

# isort: split

import click
import httpx

from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit, state_location
from monitor.config import Config
from monitor.core.logs import configure_logging
from monitor.notify.deadline import MAX_REQUEST_SECONDS
from monitor.notify.documents import Outbox
from monitor.notify.messages import esc
from monitor.notify.outbox import chat_id_for
from monitor.notify.routing import configured_chats
from monitor.notify.telegram import DeliveryError, TelegramSender
from monitor.notify.telegram_check import Answer, BotApi, fix_for_error
from monitor.state import read_state
from monitor.storage import StateError

EXIT_OK = 0


def where(chat_id: str, thread_id: int | None) -> str:
    return f"chat {chat_id}" + (f" topic {thread_id}" if thread_id else "")


def verify_telegram(config: Config, client: httpx.Client) -> list[tuple[str, Answer]]:
    """``getMe`` once, then ``getChat`` for each distinct chat: (what was asked, Telegram's answer).
    A forum topic cannot be checked without posting in it (``notify test`` does)."""
    api = BotApi(config.telegram.bot_token.get_secret_value(), config.telegram.api_base, client)
    answers = [("bot token", api.bot())]
    if answers[0][1].ok:
        chats = dict.fromkeys(chat for _, chat, _ in configured_chats(config))
        answers += [(f"chat {chat}", api.chat(chat)) for chat in chats]
    return answers


@click.group("notify", context_settings={"help_option_names": ["-h", "--help"]})
def notify() -> None:
    """Telegram delivery: try it."""


@notify.command("test")
@config_option
def notify_test(config_path: Path | None) -> None:
    """Send one test message to every chat and topic the config names (the default chat, each
    route's, the escalation chat) and say what Telegram answered. Exit 0 when every chat took it, 1
    when any refused or could not be reached (with what to do), 2 when Telegram is not configured."""
    configure_logging(level=logging.WARNING)
    config = load_or_exit(config_path, require_secrets=True)
    if not config.telegram.enabled:
        fail("Telegram is not configured: set chat_id under [telegram] and export TELEGRAM_BOT_TOKEN "
             "(see docs/configuration.md)", EXIT_USAGE)
    outbox = _runner_outbox(config)
    text = (f"✅ <b>sheet-monitor test message</b> from <code>{esc(socket.gethostname(), 80)}</code>: "
            f"alerts will arrive here.")
    failed = 0
    with httpx.Client(timeout=MAX_REQUEST_SECONDS) as client:
        for _, chat_id, thread_id in configured_chats(config):
            sender = TelegramSender(config.telegram.bot_token.get_secret_value(),
                                    chat_id_for(outbox, chat_id), config.telegram.api_base,
                                    thread_id=thread_id, client=client)
            try:
                sent = sender.send(text)
            except DeliveryError as error:
                failed += 1
                status = f"{error.status} " if error.status else ""
                click.echo(f"{where(chat_id, thread_id)}: refused: {status}{error.description}\n"
                           f"  fix: {fix_for_error(error)}")
                continue
            moved = f" (the group is now {sent.chat_id}: update chat_id)" if sent.chat_id != chat_id else ""
            click.echo(f"{where(chat_id, thread_id)}: sent, message {sent.message_id}{moved}")
    sys.exit(EXIT_OPERATIONAL if failed else EXIT_OK)


def _runner_outbox(config: Config) -> Outbox:
    """The runner's outbox, for the chat migrations it learnt (none when there is no state yet)."""
    try:
        state = read_state(state_location(config), only=("outbox",))
    except StateError:
        return Outbox()
    return state.outbox if state is not None else Outbox()
