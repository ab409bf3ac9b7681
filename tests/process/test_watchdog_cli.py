"""`sheet-watchdog` in a fresh interpreter (exit codes, no Google stack loaded, the token never shown),
and the external heartbeat ping that healthy passes and good runs send."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from paths import REPO
from telegram_fixtures import TOKEN, closed_port_url
from watchdog_helpers import CHAT, google_table, heartbeat, serving_pings, texts, write_runner_state

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.notify.documents import Halt, Outbox, PendingMessage
from monitor.notify.heartbeat_ping import ping_heartbeat
from monitor.state import changing_state


@pytest.fixture
def pings():
    with serving_pings() as counter:
        yield counter


# ---- the external heartbeat --------------------------------------------------------------------------


def test_ping_heartbeat_gets_the_url_once(pings, http):
    assert ping_heartbeat(pings.url, http) is True
    assert pings.paths == ["/ping/3f1c"]


def test_a_failing_ping_is_logged_never_raised(pings, caplog):
    pings.status = 503
    assert ping_heartbeat(pings.url) is False
    assert ping_heartbeat(closed_port_url() + "/ping/secret-uuid", timeout=1) is False
    logged = " ".join(str(getattr(r, "fields", "")) for r in caplog.records)
    assert "heartbeat_ping_failed" in caplog.text and "secret-uuid" not in logged + caplog.text


def test_a_good_run_pings_the_heartbeat_url(tmp_path, pings):
    config_path = tmp_path / "monitor.toml"
    config_path.write_text(
        '[run]\nstate_dir = "state"\n[google]\ncredentials = ["sa.json"]\n'
        f'[watchdog]\nheartbeat_url = "{pings.url}"\n{A_SHEET}'
    )
    # Without its spreadsheet the run has nothing to do, which is a good outcome (a config listing
    # none is refused, so the loaded one is trimmed).
    config = load_config(config_path, {}, require_secrets=False).model_copy(update={"sheets": ()})
    result = run_once(config, reader_factory=lambda config, timeout: None, messages_to=io.StringIO())
    assert result.report.outcome == "nothing_to_do"
    assert pings.paths == ["/ping/3f1c"]


# ---- the console script, in a fresh interpreter -------------------------------------------------------

_RUN_CLI = textwrap.dedent("""
    import json, sys
    from monitor.cli.watchdog import watchdog_command  # what the sheet-watchdog script runs
    try:
        watchdog_command.main(args=sys.argv[1:], prog_name="sheet-watchdog", standalone_mode=False)
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("gspread", "google"))
    print(json.dumps({"code": code, "google_modules": loaded}), file=sys.stderr)
    sys.exit(code)
""")


def run_cli(config: Path, env_extra: dict[str, str]) -> tuple[int, dict, str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "SHEET_MONITOR_"))}
    env.update(env_extra)
    done = subprocess.run([sys.executable, "-c", _RUN_CLI, "--config", str(config)], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=60)
    summary = json.loads(done.stderr.strip().splitlines()[-1])
    return done.returncode, summary, done.stdout, done.stderr


A_SHEET = ('[[sheets]]\nid = "1Cdef0000000000000000000000000000000000000aa"\n'
           'checks = [{ kind = "not_empty", range = "Data!A2:A" }]\n')


def write_config(folder: Path, telegram_base: str | None, ping_url: str | None = None) -> Path:
    lines = ['[run]', 'state_dir = "state"', google_table(folder), '[watchdog]', 'max_silence = "15m"']
    if ping_url:
        lines.append(f'heartbeat_url = "{ping_url}"')
    if telegram_base:
        lines += ['[telegram]', f'chat_id = "{CHAT}"', f'api_base = "{telegram_base}"']
    path = folder / "monitor.toml"
    path.write_text("\n".join(lines) + "\n" + A_SHEET)
    return path


def test_sheet_watchdog_alerts_through_telegram_without_loading_the_google_stack(tmp_path, server, fake):
    config = write_config(tmp_path, server.base_url)
    write_runner_state(tmp_path / "state", heartbeat(datetime.now(UTC) - timedelta(minutes=20)))
    code, summary, _, stderr = run_cli(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert code == 0, stderr
    assert summary["google_modules"] == []  # neither gspread nor google.auth was imported
    assert len(texts(fake)) == 1 and "Monitor runs stopped" in texts(fake)[0]
    assert TOKEN not in stderr


def test_sheet_watchdog_healthy_pass_pings_and_prints_nothing(tmp_path, pings):
    config = write_config(tmp_path, None, ping_url=pings.url)
    write_runner_state(tmp_path / "state", heartbeat(datetime.now(UTC) - timedelta(minutes=2)))
    code, summary, stdout, stderr = run_cli(config, {})
    assert code == 0, stderr
    assert stdout == "" and pings.paths == ["/ping/3f1c"]


def test_sheet_watchdog_exits_1_when_it_cannot_send_and_2_without_a_token(tmp_path):
    config = write_config(tmp_path, closed_port_url())
    write_runner_state(tmp_path / "state", heartbeat(datetime.now(UTC) - timedelta(minutes=20)))
    code, _, _, stderr = run_cli(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert code == 1 and "could not be sent" in stderr and TOKEN not in stderr
    assert "watchdog-state.json" in stderr  # where the message waits for the next pass
    code, _, _, stderr = run_cli(config, {})
    assert code == 2 and "TELEGRAM_BOT_TOKEN" in stderr
    code, _, _, stderr = run_cli(write_config(tmp_path, None), {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert code == 2 and "no chat to send to" in stderr and TOKEN not in stderr


def test_a_wrong_bot_token_makes_the_watchdog_print_exit_1_and_ping_the_failure_endpoint(
        tmp_path, server, fake, pings):
    config = write_config(tmp_path, server.base_url, ping_url=pings.url)
    state_dir = tmp_path / "state"
    now = datetime.now(UTC)
    write_runner_state(state_dir, heartbeat(now - timedelta(minutes=2)))
    with changing_state(state_dir, actor="run-x", now=now) as session:  # what a run's notify step left
        session.state.outbox = Outbox(halted=Halt(now - timedelta(hours=1), 401, "Unauthorized", str(CHAT)))
    code, _, stdout, stderr = run_cli(config, {"TELEGRAM_BOT_TOKEN": "999:not-the-bot"})
    assert code == 1, stderr
    assert "Alerts cannot reach Telegram" in stdout and "401 Unauthorized" in stdout  # cron mails it
    assert pings.paths == ["/ping/3f1c/fail"] and texts(fake) == []


def test_a_run_whose_alerts_telegram_refuses_does_not_ping_all_is_well(tmp_path, pings, server, fake):
    config_path = tmp_path / "monitor.toml"
    config_path.write_text(
        '[run]\nstate_dir = "state"\n[google]\ncredentials = ["sa.json"]\n'
        f'[watchdog]\nheartbeat_url = "{pings.url}"\n'
        f'[telegram]\nchat_id = "{CHAT}"\napi_base = "{server.base_url}"\n{A_SHEET}'
    )
    config = load_config(config_path, {"TELEGRAM_BOT_TOKEN": "999:not-the-bot"}, require_secrets=False)
    config = config.model_copy(update={"sheets": ()})  # nothing to read: see the test above
    with changing_state(tmp_path / "state", actor="run-0", now=datetime.now(UTC)) as session:
        session.state.outbox = Outbox(pending=(PendingMessage("k1", "an alert", datetime.now(UTC)),))
    result = run_once(config, reader_factory=lambda config, timeout: None, messages_to=io.StringIO())
    assert result.report.outcome == "nothing_to_do"  # a good outcome, but its alert went nowhere
    assert pings.paths == [] and texts(fake) == []
