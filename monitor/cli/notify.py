"""`notify test`: one message sent to every chat the config names, and what Telegram answered
(``monitor.app.telegram_probe`` sends it; this prints each chat's answer and maps them to an exit
code)."""

from __future__ import annotations

import logging
import socket
import sys
from pathlib import Path

import click

from monitor.app.telegram_probe import send_test
from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit
from monitor.core.logs import configure_logging
from monitor.notify.messages import esc

EXIT_OK = 0


@click.group("notify", context_settings={"help_option_names": ["-h", "--help"]})
def notify_commands() -> None:
    """Telegram delivery: try it."""


@notify_commands.command("test")
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
    text = (f"✅ <b>sheet-monitor test message</b> from <code>{esc(socket.gethostname(), 80)}</code>: "
            f"alerts will arrive here.")
    sends = send_test(config, text)
    for send in sends:
        if send.refusal is not None:
            click.echo(f"{send.where}: refused: {send.refusal}\n  fix: {send.fix}")
            continue
        moved = f" (the group is now {send.moved_to}: update chat_id)" if send.moved_to else ""
        click.echo(f"{send.where}: sent, message {send.message_id}{moved}")
    sys.exit(EXIT_OPERATIONAL if any(send.refusal is not None for send in sends) else EXIT_OK)
