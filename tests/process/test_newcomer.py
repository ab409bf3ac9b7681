"""The README's newcomer path ("From a Drive folder to cron, in five commands"), run as the README
writes it: the commands are read from the README, so the two cannot drift. Each runs as a process of
its own (the sandbox at Google's latency, the monitor's commands with the real gspread over HTTP),
and the last run's state holds every spreadsheet of the folder.

Two things are changed, and only those: ``.venv/bin/sheet-monitor`` is this interpreter's
``-m monitor.cli`` (the test's installation), and the README's port is a free one, so that a port
taken on this machine does not fail the path.
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time

from paths import REPO
from sandbox_fixtures import clean_env

from monitor.state import read_state
from sheet_sandbox import dataset as datasets

SECTION = "## From a Drive folder to cron, in five commands"
PROGRAM = ".venv/bin/sheet-monitor"
README_PORT = "8790"
STARTUP_SECONDS = 20
WHOLE_PATH_SECONDS = 120  # about a minute on an idle machine: the suggest's reads, then a 20 s run


def readme_commands() -> list[str]:
    """The section's commands, in order: every line of its ``sh`` blocks."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def argv(command: str, port: str) -> tuple[list[str], str | None]:
    """The command's arguments for this test's installation, and the file its stdout goes to."""
    words = shlex.split(command.replace(README_PORT, port))
    out = None
    if ">" in words:
        at = words.index(">")
        words, out = words[:at], words[at + 1]
    assert words[0] == PROGRAM, command
    return [sys.executable, "-m", "monitor.cli", *words[1:]], out


def test_the_readme_path_takes_a_drive_folder_to_a_run_whose_state_holds_its_spreadsheets(tmp_path):
    commands = readme_commands()
    assert len(commands) == 5, commands
    serve, *steps = commands
    port = free_port()
    started = time.monotonic()
    command, _ = argv(serve, port)
    sandbox = subprocess.Popen(command, cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        printed = []
        while not printed or not printed[-1].startswith("serving"):
            line = sandbox.stdout.readline()
            assert line, f"the sandbox ended: {sandbox.stderr.read()[-2000:]}"
            printed.append(line.rstrip("\n"))
            assert time.monotonic() - started < STARTUP_SECONDS, printed
        # What the sandbox says to run next is the README's next command, as it would be typed.
        told = next(line.strip() for line in printed if line.strip().startswith("sheet-monitor suggest"))
        assert f".venv/bin/{told}" == steps[0].replace(README_PORT, port)

        outputs = []
        for step in steps:
            command, out = argv(step, port)
            done = subprocess.run(command, cwd=tmp_path, env=clean_env(), capture_output=True, text=True,
                                  timeout=WHOLE_PATH_SECONDS)
            assert done.returncode == 0, f"{step}\n{done.stderr[-3000:]}"
            if out:  # the shell's redirection
                (tmp_path / out).write_text(done.stdout, encoding="utf-8")
            outputs.append(done.stdout + done.stderr)
        elapsed = time.monotonic() - started
    finally:
        sandbox.terminate()
        sandbox.communicate(timeout=20)
    assert sandbox.returncode == 0

    suggested, initialised, access, ran = outputs
    assert "sheet-monitor init --suggested" in suggested  # each says what comes next
    assert "check-config --access" in initialised and "sheet-monitor run" in initialised
    assert "open all" in access
    assert "now monitoring" in ran
    folder = tmp_path / "watched"
    assert 'profile = "suggested"' in (folder / "monitor.toml").read_text()
    assert "sheet-monitor run" in (folder / "sheet-monitor.cron").read_text()
    generated = datasets.generate(20, seed=0)
    stored = {entry.id for entry in generated.sheets if entry.id in generated.payloads}
    assert stored <= read_state(folder / "state").health.keys()
    assert elapsed < WHOLE_PATH_SECONDS, f"the README's path took {elapsed:.0f} s"
