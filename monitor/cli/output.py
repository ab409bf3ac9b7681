"""How the operator commands print: aligned tables that fit the terminal, times people can read, and
one ``--json`` option whose output is ``{"version": 1, ...}`` on stdout.

Colour comes from click.style and click.echo drops it when stdout is not a terminal, so pipes, files
and tests see plain text. Tables are shrunk to the terminal's width only on a terminal; piped output
keeps every character.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import click

from monitor.checks import format_age
from monitor.core.timefmt import parse_utc

JSON_VERSION = 1  # bump when a --json key changes meaning or goes away; adding keys keeps it

config_option = click.option(  # every sheet-monitor command's; sheet-watchdog keeps its own (its imports)
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Config file (default: $SHEET_MONITOR_CONFIG, else ./monitor.toml).",
)
json_option = click.option(
    "--json", "as_json", is_flag=True,
    help=f"Print JSON on stdout (a stable shape, version {JSON_VERSION}) instead of a table.",
)

STATUS_COLOURS = {
    "ok": "green",
    "closed": "green",
    "warn": "yellow",
    "half_open": "yellow",
    "fail": "red",
    "error": "red",
    "open": "red",
    "skipped": "bright_black",
    "muted": "bright_black",
    "maintenance": "bright_black",
    "unknown": "bright_black",
}
_MIN_SHRUNK = 12  # never cut a column below this: a whole "11-29 09:38Z" time, a readable name


def emit_json(payload: dict[str, Any]) -> None:
    click.echo(json.dumps({"version": JSON_VERSION, **payload}, ensure_ascii=False, indent=2))


def terminal_width() -> int | None:
    """The terminal's width, or None when stdout is not a terminal (nothing is cut then)."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    width: int | None = None,
    status_column: int | None = None,
    uncut: Sequence[int] = (),
) -> list[str]:
    """Lines of an aligned table; with ``width``, the widest columns are cut (with "…") to fit it,
    except those in ``uncut`` (ids, which are only useful whole).

    Values in ``status_column`` are coloured by what they start with (ok green, fail red, ...).
    """
    cells = [[_text(value) for value in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    if width is not None:
        _shrink(widths, width - 2 * (len(headers) - 1), set(uncut))
    lines = [_line(headers, widths, None, bold=True)]
    lines += [_line(row, widths, status_column) for row in cells]
    return lines


def _shrink(widths: list[int], room: int, uncut: set[int]) -> None:
    """Narrow the widest cuttable column, step by step, until the table fits ``room`` or nothing
    is left to cut (then the terminal wraps: better than losing every column)."""
    over = sum(widths) - room
    cuttable = [i for i in range(len(widths)) if i not in uncut]
    while over > 0 and cuttable:
        widest = max(cuttable, key=widths.__getitem__)
        if widths[widest] <= _MIN_SHRUNK:
            return
        others = [widths[i] for i in cuttable if i != widest]
        # Down to the next widest column at most, so that wide columns share the cut.
        step = widths[widest] - max(others) if others and max(others) < widths[widest] else 1
        cut = min(over, widths[widest] - _MIN_SHRUNK, step)
        widths[widest] -= cut
        over -= cut


def _line(values: Sequence[str], widths: Sequence[int], status_column: int | None, bold=False) -> str:
    parts = []
    last = len(values) - 1
    for index, (value, size) in enumerate(zip(values, widths, strict=True)):
        shown = value if len(value) <= size else value[: max(size - 1, 0)] + "…"
        padded = shown if index == last else shown.ljust(size)
        if bold:
            padded = click.style(padded, bold=True)
        elif index == status_column:
            colour = STATUS_COLOURS.get(value.split(" ")[0])
            padded = click.style(padded, fg=colour) if colour else padded
        parts.append(padded)
    return "  ".join(parts).rstrip()


def _text(value: Any) -> str:
    if value is None:
        return "-"
    return " ".join(str(value).split())  # a newline in a message would break the table


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], status_column: int | None = None,
               empty: str = "nothing to show", uncut: Sequence[int] = ()) -> None:
    if not rows:
        click.echo(empty)
        return
    for line in render_table(headers, rows, width=terminal_width(), status_column=status_column, uncut=uncut):
        click.echo(line)


def echo_fields(pairs: Sequence[tuple[str, Any]]) -> None:
    """A two-column "label  value" block (values are not cut: each is one line of its own)."""
    size = max(len(label) for label, _ in pairs)
    for label, value in pairs:
        click.echo(f"{click.style(label.ljust(size), bold=True)}  {_text(value)}")


def when(iso: str | None, now: datetime) -> str:
    """ "2026-11-29 09:30:05Z (5m ago)" or "(in 3m)"; "-" for None."""
    if not iso:
        return "-"
    moment = parse_utc(iso)
    seconds = (now - moment).total_seconds()
    relative = f"{format_age(seconds)} ago" if seconds >= 0 else f"in {format_age(-seconds)}"
    return f"{moment:%Y-%m-%d %H:%M:%S}Z ({relative})"


def short_time(iso: str | None) -> str:
    return f"{parse_utc(iso):%m-%d %H:%M}Z" if iso else "-"


def fail(message: str, code: int) -> NoReturn:
    """Print ``message`` on stderr and exit with ``code`` (the CLI's edge; library code never exits)."""
    click.echo(f"sheet-monitor: {message}", err=True)
    sys.exit(code)


def styled_status(text: str) -> str:
    return click.style(text, fg=STATUS_COLOURS.get(text.split(" ")[0]))



