"""state/README.md names the files the state folder holds today, and only those: a real run on the
sandbox, a watchdog pass and a Redis generation leave their files, each named in its table, and every
name there is one the storage layer knows as the monitor's own (so a writer makes the folder 0700)."""

from __future__ import annotations

import io
import re

import pytest
from cli_fixtures import A, B
from report_fixtures import TOKEN, run_on, sandbox_site
from storage_fixtures import REPO, STAMP

from monitor.cli.watchdog import run_watchdog
from monitor.storage.generations import GenerationMemory
from monitor.storage.paths import is_own_file

README = REPO / "state" / "README.md"


def readme_names() -> set[str]:
    """The file names in the first column of the README's table, placeholders and all."""
    rows = [line for line in README.read_text().splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([^`]+)`", row.split(" | ")[0])}


def as_named(name: str) -> str:
    """A file's name as the README writes it: a set-aside file's stamp as <time>."""
    return re.sub(r"\d{8}T\d{6}Z(-\d+)?$", "<time>", name)


def test_every_file_a_run_and_the_watchdog_leave_is_named_in_state_readme(tmp_path, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    with sandbox_site(tmp_path, {A: 10, B: 3}) as (_, clock, path):
        run_on(path, clock)
        assert run_watchdog(path, io.StringIO(), clock=clock) == 0
    state = tmp_path / "state"
    GenerationMemory(state, "redis://127.0.0.1:6379/0 prefix sheet-monitor").remember("g1")
    left = {as_named(p.name) for p in state.iterdir()}
    assert {"properties.json", "watchdog-state.json", "run.lock", "watchdog.lock",
            "redis-generations.json"} <= left
    assert left <= readme_names(), left - readme_names()


def test_the_readme_names_only_the_monitors_own_files_and_no_first_release_one():
    names = readme_names()
    assert "watchdog.json" not in names  # the first release's: carried over once, then removed
    for name in names:
        sample = (name.replace("<time>", STAMP).replace("<file>", "properties.json")
                  .replace("<random>", "k2x9c1"))
        assert is_own_file(sample), name


@pytest.mark.parametrize("name", ["index.html", "sheet_monitor.prom", "notes.txt", "backup",
                                  "properties.json~", "sa-1.pem", ".bashrc"])
def test_other_files_are_not_the_monitors(name):
    assert not is_own_file(name)
