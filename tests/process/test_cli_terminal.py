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
from sheet_sandbox.server import running_sandbox

CHAT = -1001000000031
WRONG_TOKEN = "999999:NOT-the-bots-token-0123456789"


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
    assert "The team's messages were printed to stdout (no [telegram] chat_id and token configured)." in (
        result.stderr)
    assert "Next: `sheet-monitor sheets --status fail`" in result.stderr
    # The alert (on stdout without Telegram) names the failing spreadsheet with its tag.
    assert f"Store 2 ({sheet_url(B)}) #kazan" in result.stdout
    # Not a terminal: the line is written, not rewritten in place.
    assert "\r" not in result.stderr


def test_a_run_whose_messages_telegram_refuses_says_they_wait_and_exits_1(tmp_path, monkeypatch):
    clock = ManualClock(start=datetime.now(UTC))
    with running_sandbox(clock=clock, latency="off") as sandbox:
        sandbox.telegram.add_chat(CHAT, title="Ops")  # the chat exists; the bot token is not the bot's
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        for sid in (A, B, C):
            sandbox.google.store.put_control(sid, stock(quantity=-3 if sid == B else 10))
        path = write_config(tmp_path / "site", credentials=credentials, endpoint=sandbox.base_url,
                            extra=f'\n[telegram]\nchat_id = "{CHAT}"\napi_base = "{sandbox.telegram_url}"\n'
                                  'listen = false\n')
        monkeypatch.setenv("TELEGRAM_BOT_TOKEN", WRONG_TOKEN)
        result = invoke(path, "run", "--progress", "--budget", "20")
    assert result.exit_code == 1, result.stderr
    assert "0 messages sent to Telegram; 1 message waits in the outbox: Telegram refuses the chat (401 " \
           "Unauthorized, since" in result.stderr
    assert "sheet-monitor: Telegram refuses the chat (401 Unauthorized, since" in result.stderr
    assert "sheet-monitor notify test" in result.stderr and WRONG_TOKEN not in result.output
    assert sandbox.telegram.messages(CHAT) == []


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


def test_a_failed_read_is_shown_by_the_spreadsheets_name_with_what_google_said_and_what_happens_next():
    retry = {"task_id": "t0000017", "spreadsheet_id": "1abc", "name": "Store 014", "attempt": 1,
             "status": 503, "error": "The service is currently unavailable.", "retry_in_s": 3.2}
    failed = {**retry, "status": 404, "error": "Requested entity was not found.", "retry_in_s": None}
    del failed["retry_in_s"]
    shown = progress_of([*RUN[:2], ("task_retry", logging.WARNING, retry, 100.2),
                         ("task_failed", logging.ERROR, failed, 100.3)], in_place=False).splitlines()
    assert "warning: Store 014: 503 The service is currently unavailable., read again in 3 s" in shown
    assert ("error: Store 014 cannot be read: 404 Requested entity was not found. "
            "(`sheet-monitor dlq show 1abc`)") in shown
    assert not any("t0000017" in line for line in shown)  # the task's id is the log's, not the person's


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
