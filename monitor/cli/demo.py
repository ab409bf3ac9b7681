"""`sheet-monitor demo`: the monitor on the built-in sandbox, with a report (loads the emulator)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from monitor.core.logs import configure_logging


@click.command()
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
@click.option("--report", "report_to", is_flag=False, flag_value="sheet-monitor-demo", default=None,
              type=click.Path(file_okay=False, path_type=Path), metavar="[FOLDER]",
              help="Save the round's status page and its screenshot in FOLDER (default: sheet-monitor-demo).")
def demo(sheets: int, budget: float, seed: int, report_to: Path | None) -> None:
    """Run the monitor on the built-in sandbox: no credentials, no network."""
    from monitor.app.demo import run_demo

    # The demo shows what people would receive; the runs' JSON log lines would only bury it.
    configure_logging(level=logging.CRITICAL)
    run_demo(sheets=sheets, budget_seconds=budget, seed=seed, out=sys.stdout, report_to=report_to)
