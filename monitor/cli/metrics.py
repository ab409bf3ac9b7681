"""`metrics`: the monitor's Prometheus metrics now, read from the state without the lock."""

from __future__ import annotations

from pathlib import Path

import click

from monitor.app.operator_clock import operator_clock as clock
from monitor.cli.common import quiet_logs
from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit, read_or_exit
from monitor.state import State


@click.command()
@config_option
@click.option("--textfile", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write them to this file (for node_exporter's textfile collector: it reads *.prom) "
                   "atomically, instead of printing them.")
def metrics(config_path: Path | None, textfile: Path | None) -> None:
    """Print the metrics a run writes ([metrics] textfile) in Prometheus' text format: the last run,
    the queue, Google's reads and quota, the fleet's health, the outbox. Reads the state without the
    lock: safe while a run works. Pushes nothing."""
    quiet_logs()
    # The key files are not read: the projects' names come from the state, as runs found them.
    config = load_or_exit(config_path)
    if textfile is not None and textfile.suffix != ".prom":
        fail(f"--textfile {textfile}: node_exporter reads only files ending in .prom; name it e.g. "
             "sheet_monitor.prom", EXIT_USAGE)
    # The Prometheus client loads only for this command (and for runs that publish metrics).
    from monitor.admin.metrics import metrics_registry
    from monitor.app.metrics_step import exposition, write_textfile

    # Beside runners sharing the state, this host's runner's own: the counters its runs publish.
    registry = metrics_registry(read_or_exit(config, as_runner=True) or State(), config, clock.now())
    if textfile is None:
        click.echo(exposition(registry), nl=False)
    elif not write_textfile(textfile.resolve(), registry):
        fail(f"could not write {textfile}: make its folder exist and writable by this user",
             EXIT_OPERATIONAL)
