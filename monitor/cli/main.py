"""Command line: builds the objects, maps errors to exit codes, prints. No business rules here.

Exit codes (README.md, "Exit codes"): 0 the command did its job (also: a run that found another run working);
1 operational failure (state unreadable, cannot send where sending was the job); 2 usage or config.
"""

from __future__ import annotations

import logging
import sys
from datetime import timedelta
from pathlib import Path

import click

from monitor.cli.admin import COMMANDS as ADMIN_COMMANDS
from monitor.cli.check import COMMANDS as CHECK_COMMANDS
from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, load_or_exit
from monitor.cli.watchdog import watchdog_command
from monitor.config import Config
from monitor.core.logs import configure_logging
from monitor.sandbox.cli import sandbox
from monitor.storage import StateError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sheet-monitor")
def cli() -> None:
    """Watch Google Sheets and tell the team in Telegram."""


cli.add_command(sandbox)
for _command in (*ADMIN_COMMANDS, *CHECK_COMMANDS):  # status, sheets, dlq, breakers, mute, unmute, check*
    cli.add_command(_command)


def _secrets(config: Config) -> tuple[str, ...]:
    token = config.telegram.bot_token
    return (token.get_secret_value(),) if token is not None else ()


@cli.command()
@config_option
@click.option(
    "--budget",
    type=click.FloatRange(min=1),
    default=None,
    metavar="SECONDS",
    help="Time box of this run (default: [run] budget from the config).",
)
def run(config_path: Path | None, budget: float | None) -> None:
    """One time-boxed run: check due spreadsheets until the budget is spent, save, notify."""
    from monitor.app.run import new_run_id, run_once
    from monitor.core.clock import SystemClock

    config = load_or_exit(config_path, require_secrets=True)
    clock = SystemClock()
    run_id = new_run_id(clock.now())
    configure_logging(run_id=run_id, secrets=_secrets(config))
    try:
        run_once(config, budget=timedelta(seconds=budget) if budget else None, clock=clock, run_id=run_id)
    except StateError as exc:
        logging.getLogger("monitor").error("state_unusable", extra={"fields": {"error": str(exc)}})
        fail(str(exc), EXIT_OPERATIONAL)


@cli.command()
@click.option(
    "--sheets",
    type=click.IntRange(min=1),
    default=750,
    show_default=True,
    help="How many spreadsheets to generate (some broken on purpose).",
)
@click.option(
    "--budget",
    type=click.FloatRange(min=5),
    default=180,
    show_default=True,
    metavar="SECONDS",
    help="Stop the demo after this long even if the round is not done.",
)
@click.option("--seed", type=int, default=7, show_default=True, help="Dataset seed.")
def demo(sheets: int, budget: float, seed: int) -> None:
    """Run the monitor on the built-in sandbox: no credentials, no network."""
    from monitor.app.demo import run_demo

    # The demo shows what people would receive; the runs' JSON log lines would only bury it.
    configure_logging(level=logging.CRITICAL)
    run_demo(sheets=sheets, budget_seconds=budget, seed=seed, out=sys.stdout)


cli.add_command(watchdog_command)  # sheet-watchdog's own entry point is monitor.watchdog_cli:main


def main() -> None:
    cli()


