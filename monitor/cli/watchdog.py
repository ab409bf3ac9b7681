"""The watchdog's command: ``sheet-watchdog`` (``main``) and, registered by ``monitor.cli``,
``sheet-monitor watchdog``.

It loads the config's watchdog parts, runs one pass wired by ``monitor.app.watchdog`` and turns what
the pass did into lines on stderr and exit codes. Like the pass, it imports nothing of the Google
stack (gspread, google-auth): the watchdog must keep working when that is what broke.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import IO

import click

from monitor.app.watchdog import load_watchdog_config, watch
from monitor.config import ConfigError
from monitor.core.logs import configure_logging, log_event
from monitor.notify.telegram import html_to_text
from monitor.storage import StateError
from monitor.watchdog.judge import DELIVERY_HALTED
from monitor.watchdog.store import STORE_NAME

EXIT_OK, EXIT_OPERATIONAL, EXIT_USAGE = 0, 1, 2


def run_watchdog(config_path: Path | None, stream: IO[str], clock: object | None = None) -> int:
    """One pass from the command line; returns the exit code."""
    try:
        parts = load_watchdog_config(config_path)
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        return EXIT_USAGE
    token = parts.telegram.bot_token
    configure_logging(secrets=(token.get_secret_value(),) if token is not None else ())
    try:
        report = watch(parts, stream, clock)
    except (StateError, OSError) as exc:
        log_event("watchdog_failed", logging.ERROR, error=str(exc))
        click.echo(f"sheet-watchdog: {exc}", err=True)
        return EXIT_OPERATIONAL
    if parts.broken is not None and report.messages and parts.telegram.enabled:
        # Telegram has it; stdout too, for cron's mail where its output is not sent to a log file
        # (without Telegram the message was printed there already).
        for text in report.messages:
            click.echo(html_to_text(text).rstrip("\n") + "\n", file=stream)
    if report.verdict is not None and report.verdict.status == DELIVERY_HALTED:
        # Telegram is the broken part: its own alert may not reach anyone there, so it goes to stdout
        # (cron mails it) when the pass has something to say, and the exit code says it every pass.
        for text in report.messages:
            click.echo(html_to_text(text).rstrip("\n") + "\n", file=stream)
        if not report.messages:
            log_event("watchdog_delivery_halted", logging.WARNING, reason=report.verdict.reason)
        return EXIT_OPERATIONAL
    if report.delivery_failed:
        click.echo(
            f"sheet-watchdog: {report.undelivered} message(s) could not be sent to Telegram; they wait in "
            f"{(report.kept_in or parts.run.state_dir) / STORE_NAME}.json for the next pass (see the log "
            "line above for why)",
            err=True,
        )
        return EXIT_OPERATIONAL
    return EXIT_OK


@click.command("watchdog", context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sheet-monitor")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Config file (default: $SHEET_MONITOR_CONFIG, else ./monitor.toml).",
)
def watchdog_command(config_path: Path | None) -> None:
    """One watchdog pass: alert when runs stop, hang or keep failing, or the state is unusable.

    Exit 0 when the pass did its job (also when it alerted), 1 when messages it owes could not be
    sent, Telegram refuses the runner's messages (its alert is printed: cron mails it), or its own
    file cannot be written, 2 for configuration errors.
    """
    sys.exit(run_watchdog(config_path, sys.stdout))


def main() -> None:
    """The ``sheet-watchdog`` console script."""
    watchdog_command(prog_name="sheet-watchdog")
