"""Every command has help and appears in the docs (as sqlite-utils' test_docs does), and the tables the
operator commands print fit the terminal without losing an id."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner
from paths import REPO

from monitor.cli.main import cli
from monitor.cli.output import render_table
from monitor.cli.watchdog import watchdog_command

ROOT = REPO
OPERATOR_COMMANDS = [("status",), ("sheets",), ("dlq",), ("dlq", "list"), ("dlq", "show"), ("dlq", "retry"),
                     ("dlq", "purge"), ("breakers",), ("breakers", "list"), ("breakers", "reset"), ("mute",),
                     ("unmute",), ("check-config",), ("check",), ("watchdog",)]


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()):
    # Through list_commands/get_command: the top group imports its commands only when asked.
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        path = (*prefix, name)
        yield path, command
        if isinstance(command, click.Group):
            yield from _command_paths(command, path)


COMMANDS = dict(_command_paths(cli))


def _docs_text() -> str:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(f.read_text(encoding="utf-8") for f in files if f.exists())


@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_every_command_has_help(path):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0
    assert (COMMANDS[path].help or "").strip(), f"sheet-monitor {' '.join(path)} has no help text"


@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_every_command_appears_in_the_docs(path):
    assert re.search(rf"sheet-monitor {' '.join(path)}(?![\w-])", _docs_text())


def test_the_operator_commands_listed_here_are_all_registered():
    assert set(OPERATOR_COMMANDS) <= set(COMMANDS)


def test_sheet_monitor_watchdog_is_the_sheet_watchdog_command():
    assert COMMANDS[("watchdog",)] is watchdog_command


# -- tables


def test_a_table_is_cut_to_the_terminal_width_widest_column_first():
    rows = [("Store 1", "a" * 44, "fail", "1 cell shows #REF! in a very long message about it")]
    table = render_table(("name", "id", "health", "message"), rows, width=80)
    lines = [click.unstyle(line) for line in table]
    assert all(len(line) <= 80 for line in lines)
    assert "…" in lines[1] and "Store 1" in lines[1] and "fail" in lines[1]


def test_ids_are_never_cut_even_when_the_table_cannot_fit():
    table = render_table(("name", "id", "message"), [("Store 1", "b" * 44, "m" * 60)], width=60, uncut=(1,))
    assert "b" * 44 in click.unstyle(table[1])


def test_a_table_without_a_width_keeps_every_character_and_aligns_columns():
    table = render_table(("a", "b"), [("x", "long value"), ("longer", None)])
    lines = [click.unstyle(line) for line in table]
    assert lines == ["a       b", "x       long value", "longer  -"]
