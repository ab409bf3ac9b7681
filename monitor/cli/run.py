"""`sheet-monitor run`: one time-boxed run, as cron starts it every five minutes."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import click

from monitor.app.run import new_run_id, run_once
from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, load_or_exit
from monitor.core.clock import SystemClock
from monitor.core.logs import configure_logging, log_event
from monitor.storage import StateError


@click.command()
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
    config = load_or_exit(config_path, require_secrets=True)
    clock = SystemClock()
    run_id = new_run_id(clock.now())
    token = config.telegram.bot_token
    configure_logging(run_id=run_id, secrets=(token.get_secret_value(),) if token is not None else ())
    try:
        run_once(config, budget=timedelta(seconds=budget) if budget else None, clock=clock, run_id=run_id)
    except StateError as exc:
        log_event("state_unusable", logging.ERROR, error=str(exc))
        fail(str(exc), EXIT_OPERATIONAL)
