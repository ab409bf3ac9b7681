"""The watchdog's command and composition root: ``sheet-watchdog`` (``main``) and, registered by
``monitor.cli``, ``sheet-monitor watchdog``.

Part of the CLI layer: it loads the config, wires the pass and turns outcomes into exit codes and
lines on stderr. Its imports stay the watchdog's own: nothing of the Google stack (gspread, google-auth), on
purpose, as the watchdog must keep working when that is what broke. An import contract
(``.importlinter``) and a test in a fresh interpreter check it.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from pathlib import Path
from typing import IO

import click

from monitor.config import ConfigError, resolve_config_path
from monitor.config.lenient import WatchdogParts, load_for_watchdog
from monitor.core.clock import SystemClock
from monitor.core.logs import configure_logging, log_event
from monitor.notify.outbox import sender_for
from monitor.notify.telegram import html_to_text
from monitor.storage import StateError
from monitor.storage.configured import configured_location
from monitor.watchdog.judge import DELIVERY_HALTED, ConfigTrouble, WatchdogSettings
from monitor.watchdog.store import STORE_NAME
from monitor.watchdog.watch import watchdog_pass

EXIT_OK, EXIT_OPERATIONAL, EXIT_USAGE = 0, 1, 2


def load_watchdog_config(config_path: Path | None) -> WatchdogParts:
    """The parts of the config the watchdog needs, read leniently when the whole does not load (see
    ``monitor.config.lenient``); the Google credentials are only looked at as a run looks at them
    first (JSON), never loaded by the Google stack. Raises ``ConfigError`` when the watchdog itself
    cannot work (no readable file, Telegram half configured)."""
    return load_for_watchdog(resolve_config_path(config_path, os.environ), os.environ)


def config_trouble(parts: WatchdogParts) -> ConfigTrouble | None:
    """The monitor's config problems as the watchdog reports them; None when a run would take it."""
    if parts.broken is None:
        return None
    first, *others = parts.broken.issues
    head = f"{first.where}: {first.key}: {first.problem}" if first.key else f"{first.where}: {first.problem}"
    return ConfigTrouble(since=parts.broken_since, first=f"{head} (fix: {first.fix})", more=len(others))


def run_watchdog(config_path: Path | None, stream: IO[str], clock: object | None = None) -> int:
    """One pass from the command line; returns the exit code."""
    try:
        parts = load_watchdog_config(config_path)
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        return EXIT_USAGE
    token = parts.telegram.bot_token
    configure_logging(secrets=(token.get_secret_value(),) if token is not None else ())
    clock = clock or SystemClock()
    settings = WatchdogSettings.from_config(parts.watchdog, label=socket.gethostname())
    state_dir = parts.run.state_dir
    trouble = config_trouble(parts)
    if trouble is not None:
        # Every pass says it in the log; people hear it once per outage (with reminders), below.
        log_event("watchdog_config_broken", logging.ERROR, problem=trouble.first, more=trouble.more)
    try:
        report = watchdog_pass(
            state_dir,
            settings,
            lambda outbox: sender_for(parts.telegram, outbox, stream, clock=clock),
            clock.now(),
            heartbeat_url=parts.watchdog.heartbeat_url,
            config=trouble,
            runner=configured_location(parts.state, state_dir, os.environ),
        )
    except (StateError, OSError) as exc:
        log_event("watchdog_failed", logging.ERROR, error=str(exc))
        click.echo(f"sheet-watchdog: {exc}", err=True)
        return EXIT_OPERATIONAL
    if trouble is not None and report.messages and parts.telegram.enabled:
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
            f"{(report.kept_in or state_dir) / STORE_NAME}.json for the next pass (see the log line above "
            "for why)",
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
