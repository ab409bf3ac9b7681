"""Shell completion as docs/operations.md shows it (click's, through ``_SHEET_MONITOR_COMPLETE`` and
``_SHEET_WATCHDOG_COMPLETE``): the script it prints, and what it completes through the lazy group."""

from __future__ import annotations

import re

from click.testing import CliRunner
from paths import DOCS

from monitor.cli.main import cli
from monitor.cli.watchdog import watchdog_command


def complete(command, prog: str, words: str) -> list[str]:
    variable = f"_{prog.replace('-', '_').upper()}_COMPLETE"
    result = CliRunner().invoke(command, [], prog_name=prog, env={
        variable: "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)})
    assert result.exit_code == 0, result.output
    return [line.split(",", 1)[1] for line in result.output.splitlines()]


def test_the_variables_the_docs_name_are_those_the_commands_answer():
    docs = (DOCS / "operations.md").read_text(encoding="utf-8")
    for command, prog in ((cli, "sheet-monitor"), (watchdog_command, "sheet-watchdog")):
        variable = f"_{prog.replace('-', '_').upper()}_COMPLETE"
        assert re.search(rf"{variable}=bash_source {prog}\b", docs)
        script = CliRunner().invoke(command, [], prog_name=prog, env={variable: "bash_source"}).output
        assert f"complete -o nosort -F _{prog.replace('-', '_')}_completion {prog}" in script


def test_it_completes_the_lazy_subcommands_and_their_options():
    assert complete(cli, "sheet-monitor", "sheet-monitor con") == ["config-schema"]
    assert set(complete(cli, "sheet-monitor", "sheet-monitor check")) == {"check", "check-config"}
    assert "--force" in complete(cli, "sheet-monitor", "sheet-monitor init --")
    assert "--config" in complete(watchdog_command, "sheet-watchdog", "sheet-watchdog --")
