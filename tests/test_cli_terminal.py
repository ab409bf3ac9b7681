"""The CLI as a person at a terminal sees it: `run`'s progress line and summary instead of JSON lines,
and operator commands that print no JSON log lines there; cron and scripts (no terminal) keep JSON."""

from __future__ import annotations

import io
import logging
import os
import pty
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from cli_fixtures import A, B, C, invoke, seed, write_config

from monitor.cli.terminal import RunProgress
from monitor.core.clock import ManualClock
from monitor.notify.messages import sheet_url
from monitor.sandbox.server import running_sandbox


def stock(quantity: float = 10) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


@pytest.fixture
def site(tmp_path):
    clock = ManualClock(start=datetime.now(UTC))  # google-auth stamps its JWTs with the real time
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        sandbox.google.store.put_control(A, stock())
        sandbox.google.store.put_control(B, stock(quantity=-3))
        sandbox.google.store.put_control(C, stock())
        path = write_config(tmp_path / "site", credentials=credentials, endpoint=sandbox.base_url)
        path.write_text(path.read_text().replace('name = "Store 2"', 'name = "Store 2"\ntags = ["kazan"]'))
        yield path


def test_run_by_hand_shows_progress_and_a_summary_instead_of_json_lines(site):
    result = invoke(site, "run", "--progress", "--budget", "20")
    assert result.exit_code == 0, result.stderr
    assert '{"ts"' not in result.stderr
    assert "run: 3 read of 3 in the new round (1 fail, 2 ok)" in result.stderr
    assert "Read 3 spreadsheets: 1 fail, 2 ok." in result.stderr
    assert "Round " in result.stderr and "3 of 3 spreadsheets done (complete)" in result.stderr
    assert "sent to stdout (no [telegram] configured)" in result.stderr
    assert "Next: `sheet-monitor sheets --status fail`" in result.stderr
    # The alert (on stdout without Telegram) names the failing spreadsheet with its tag.
    assert f"Store 2 ({sheet_url(B)}) #kazan" in result.stdout
    # Not a terminal: the line is written, not rewritten in place.
    assert "\r" not in result.stderr


def test_run_under_cron_logs_json_lines_and_no_summary(site):
    result = invoke(site, "run", "--budget", "20")  # CliRunner's stderr is no terminal, as cron's
    assert result.exit_code == 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith('{"ts"') for line in lines)
    assert '"event": "run_finished"' in result.stderr
    assert "Read 3 spreadsheets" not in result.stderr
    assert "Read 3" not in invoke(site, "run", "--no-progress", "--budget", "20").stderr


def progress_of(events: list[tuple[str, int, dict, float]], in_place: bool) -> str:
    stream = io.StringIO()
    handler = RunProgress(stream, in_place=in_place, secrets=("123:secret-token",))
    for event, level, fields, created in events:
        record = logging.LogRecord("monitor", level, __file__, 1, event, None, None)
        record.fields, record.created = fields, created
        handler.handle(record)
    handler.finish()
    return stream.getvalue()


RUN = [
    ("run_started", logging.INFO, {"budget_s": 270.0}, 100.0),
    ("round_started", logging.INFO, {"tasks": 40}, 100.0),
    ("task_done", logging.INFO, {"status": "ok"}, 100.5),
    ("task_done", logging.INFO, {"status": "ok"}, 100.55),  # within the redraw interval: not drawn
    ("task_retry", logging.WARNING, {"error": "bot 123:secret-token"}, 101.0),
    ("task_done", logging.INFO, {"status": "fail"}, 112.0),
    ("run_finished", logging.INFO, {}, 112.0),
]


def test_the_progress_line_is_rewritten_in_place_on_a_terminal():
    shown = progress_of(RUN, in_place=True)
    draws = shown.split("\r\x1b[K")
    assert draws[-1] == "run: 3 read of 40 in the new round (1 fail, 2 ok), 1 to retry, 12 s of 270 s\n"
    assert "run: 1 read of 40 in the new round (1 ok), 0 s of 270 s" in draws
    assert "(2 ok), 0 s" not in shown  # redrawn at most every tenth of a second...
    assert "\r\x1b[Krun: 2 read of 40 in the new round (2 ok), 1 to retry" in shown  # ...or after a warning
    # A warning goes above the line, whole, in words, with the secret redacted.
    assert "warning: task_retry (error=bot [redacted])\n" in draws
    assert shown.count("\n") == 2  # the warning's and the end's


def test_the_progress_without_a_terminal_is_a_line_now_and_then():
    shown = progress_of(RUN, in_place=False)
    assert "\r" not in shown
    assert shown.splitlines() == [
        "run: 0 read of 40 in the new round, 0 s of 270 s",
        "warning: task_retry (error=bot [redacted])",
        "run: 2 read of 40 in the new round (2 ok), 1 to retry, 1 s of 270 s",  # after the warning
        "run: 3 read of 40 in the new round (1 fail, 2 ok), 1 to retry, 12 s of 270 s",
    ]


def admin_command(config, *args: str, terminal: bool) -> tuple[int, str]:
    """``sheet-monitor ARGS`` as a child process whose stderr is a pseudo-terminal (or a pipe);
    returns its exit code and what it wrote to stderr."""
    command = [sys.executable, "-m", "monitor.cli", *args, "--config", str(config)]
    if not terminal:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        return done.returncode, done.stderr
    controller, child_end = pty.openpty()
    try:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=child_end)
        os.close(child_end)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        return process.wait(timeout=30), b"".join(chunks).decode()
    finally:
        os.close(controller)


def test_an_admin_command_at_a_terminal_prints_no_json_log_lines(tmp_path):
    config = write_config(tmp_path / "site")
    seed(config)
    code, shown = admin_command(config, "mute", B, "--for", "1h", "--reason", "stocktaking", terminal=True)
    assert code == 0
    assert '{"ts"' not in shown and "admin_mute" not in shown
    # A script (or cron) keeps the audit trail as JSON lines.
    code, logged = admin_command(config, "unmute", B, terminal=False)
    assert code == 0 and '"event": "admin_unmute"' in logged
