"""`report`: the status page (the fleet, its history, the monitor's own health) as a file or as JSON,
read from the state without the lock."""

from __future__ import annotations

from pathlib import Path

import click

from monitor.app.operator_clock import operator_clock as clock
from monitor.cli.common import quiet_logs
from monitor.cli.output import config_option, emit_json, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit, read_or_exit
from monitor.state import State


@click.command()
@config_option
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the status page to this file (one self-contained HTML file; replaced whole).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the page's data as JSON on stdout (docs/operations.md, \"The status page\").")
def report(config_path: Path | None, html_path: Path | None, as_json: bool) -> None:
    """The status page: counts by health, failing and warning spreadsheets with their findings, muted
    ones, open breakers, the DLQ, charts of the runs of the last [report] keep, a timeline of each
    spreadsheet that warned or failed, and the monitor's own health."""
    if (html_path is None) == (not as_json):
        fail("say what to make: --html FILE (the page) or --json (its data), one of them", EXIT_USAGE)
    quiet_logs()
    config = load_or_exit(config_path)
    state = read_or_exit(config) or State()  # before the first run: the page says no run yet
    now = clock.now()
    from monitor.report.page_data import build_report

    if as_json:
        emit_json(build_report(config, state, now))
        return
    from monitor.report.publish import write_page

    try:
        size = write_page(config, state, now, html_path)
    except OSError as exc:
        fail(f"could not write the status page to {html_path}: {exc.strerror or exc}; check that its "
             "folder exists and this user may write there", EXIT_OPERATIONAL)
    click.echo(f"Status page written to {html_path} ({size // 1024 + 1} KB).")
