"""`sheet-monitor state export FILE` / `state import FILE`: the runner's state as one JSON file and back,
to move it between the state folder and Redis (docs/operations.md, "Moving from the file to Redis").

Export reads without any lock (the state only ever changes atomically). Import holds the run lock
(waiting up to ``--wait`` seconds for a run to end), refuses a target that already holds a state
unless ``--replace``, and writes the whole file in one atomic update. A file that is not an export
this release can import exits 2 with what is wrong, where, and the fix; a state that cannot be
reached or a lock that stays taken exits 1. Neither prints anything of the state's contents.
"""

from __future__ import annotations

from pathlib import Path

import click

from monitor.admin import AdminError
from monitor.admin.transfer import TransferFileError, read_export
from monitor.app.operator_changes import exported_state, imported_state
from monitor.app.operator_clock import operator_clock
from monitor.app.operator_state import where
from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit, wait_option
from monitor.core.wording import counted
from monitor.storage import StateError
from monitor.storage.files import atomic_write_bytes


@click.group()
def state() -> None:
    """Export the runner's state to a JSON file, or import one (to move between the folder and Redis)."""


@state.command("export")
@config_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def export(config_path: Path | None, file: Path) -> None:
    """Write every key of the runner's state, from the configured backend, to FILE (mode 0600)."""
    config = load_or_exit(config_path)
    try:
        data, count = exported_state(config, operator_clock.now())
    except (AdminError, StateError) as exc:
        fail(str(exc), EXIT_OPERATIONAL)
    try:
        atomic_write_bytes(file.absolute(), data)
    except OSError as exc:
        fail(f"cannot write {file}: {exc.strerror or exc}; choose a writable path", EXIT_OPERATIONAL)
    click.echo(f"Exported {counted(count, 'entry', 'entries')} of the state at {where(config)} to {file}.")


@state.command("import")
@config_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--replace", is_flag=True, help="Replace a state the target already holds (export it first).")
@wait_option
def import_(config_path: Path | None, file: Path, replace: bool, wait: float) -> None:
    """Load FILE (from `state export`) into the configured backend, in one atomic update."""
    config = load_or_exit(config_path)
    try:
        exported = read_export(file)
    except TransferFileError as exc:
        fail(str(exc), EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}; give the path of a file `state export` wrote",
             EXIT_USAGE)
    try:
        held = imported_state(config, exported, replace, wait)
    except (AdminError, StateError) as exc:
        fail(str(exc), EXIT_OPERATIONAL)
    replaced = f", replacing {counted(held, 'entry', 'entries')}" if held else ""
    click.echo(f"Imported {counted(len(exported.properties), 'entry', 'entries')} into the state at"
               f" {where(config)}{replaced}.")
