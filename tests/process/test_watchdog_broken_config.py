"""A typo in the config stops every run (exit 2, into a log cron mails nothing about): the watchdog
reads the parts it needs leniently and tells people, through Telegram, stdout and a failure ping,
once per outage with reminders, and once more when the config loads again. So does a key file the
config names that is gone or unusable: the runs refuse it just as firmly, and the watchdog says so at
once, in the run's own words, not "healthy" and later "runs stopped"."""

from __future__ import annotations

import html
import io
import os
from datetime import timedelta
from pathlib import Path

import pytest
from telegram_fixtures import TOKEN
from test_watchdog_cli import A_SHEET, run_cli
from watchdog_helpers import (
    CHAT,
    google_table,
    heartbeat,
    runs_every_5_minutes,
    serving_pings,
    texts,
    write_runner_state,
)

from monitor.app.watchdog import config_trouble
from monitor.cli.watchdog import run_watchdog
from monitor.config import ConfigError, load_config
from monitor.config.lenient import load_for_watchdog

GOOD_ID = "1Cdef0000000000000000000000000000000000000aa"


@pytest.fixture
def pings():
    with serving_pings() as counter:
        yield counter


def write_config(folder: Path, telegram_base: str, ping_url: str, sheet: str = A_SHEET) -> Path:
    path = folder / "monitor.toml"
    path.write_text(
        '[run]\nstate_dir = "state"\n\n'
        f'[telegram]\nchat_id = "{CHAT}"\napi_base = "{telegram_base}"\n\n'
        f'[watchdog]\nmax_silence = "15m"\nheartbeat_url = "{ping_url}"\n\n{sheet}{google_table(folder)}')
    return path


def broke(config: Path, edited_at) -> None:
    """The admin's edit: a spreadsheet id pasted with a space, at ``edited_at``."""
    config.write_text(config.read_text().replace(GOOD_ID, "1Cdef 000"))
    os.utime(config, (edited_at.timestamp(), edited_at.timestamp()))


def runs_went_on(folder: Path, clock) -> None:
    now = clock.now()
    write_runner_state(folder / "state", heartbeat(now - timedelta(minutes=1)),
                       runs_every_5_minutes(now - timedelta(minutes=20), 4))


def test_a_broken_config_is_told_once_with_its_line_then_reminded_then_recovered(
        tmp_path, server, fake, clock, pings, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    config = write_config(tmp_path, server.base_url, pings.url)
    runs_went_on(tmp_path, clock)
    edited_at = clock.now() - timedelta(minutes=7)
    broke(config, edited_at)
    out = io.StringIO()

    assert run_watchdog(config, out, clock=clock) == 0
    [alert] = texts(fake)
    assert "Monitor config broken" in alert
    said = f"config is broken since {edited_at:%H:%M} UTC: {config}:13: sheets[0].id: bad spreadsheet id"
    assert said in alert
    assert "check-config" in alert
    assert f"{config}:13: sheets[0].id" in out.getvalue()  # stdout, for cron's mail
    assert pings.paths == ["/ping/3f1c/fail"]

    clock.advance(timedelta(minutes=15).total_seconds())
    runs_went_on(tmp_path, clock)  # (the state says nothing new: the config is what matters)
    assert run_watchdog(config, io.StringIO(), clock=clock) == 0
    assert len(texts(fake)) == 1  # one alert per outage

    clock.advance(timedelta(hours=4).total_seconds())
    assert run_watchdog(config, io.StringIO(), clock=clock) == 0
    assert len(texts(fake)) == 2 and "Still down: Monitor config broken" in texts(fake)[1]

    config.write_text(config.read_text().replace("1Cdef 000", GOOD_ID))
    clock.advance(timedelta(minutes=10).total_seconds())
    runs_went_on(tmp_path, clock)
    assert run_watchdog(config, io.StringIO(), clock=clock) == 0
    assert len(texts(fake)) == 3 and "healthy again" in texts(fake)[2]


def test_the_watchdog_reads_its_parts_through_a_toml_syntax_error_and_a_bad_key_of_its_own(tmp_path):
    config = write_config(tmp_path, "http://127.0.0.1:9", "https://example.org/ping/x")
    text = config.read_text().replace('max_silence = "15m"', 'max_silence = "20m"\nstuck_grace = "a bit"')
    config.write_text(text + '\n[[sheets]]\nid = "unterminated\n')
    parts = load_for_watchdog(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert parts.broken is not None and "TOML syntax error" in str(parts.broken)
    assert parts.run.state_dir == (tmp_path / "state").resolve()
    assert str(parts.telegram.chat_id) == str(CHAT) and parts.telegram.enabled
    assert parts.watchdog.max_silence == timedelta(minutes=20)
    assert parts.watchdog.stuck_grace == timedelta(minutes=2)  # its bad value: the default
    good = config.read_text().split("\n[[sheets]]\nid = \"unterminated")[0]
    config.write_text(good.replace('stuck_grace = "a bit"\n', ""))
    assert load_for_watchdog(config, {"TELEGRAM_BOT_TOKEN": TOKEN}).broken is None
    assert load_config(config, {}, require_secrets=False).sheets  # the config itself is whole again


def test_sheet_watchdog_tells_a_broken_config_without_loading_the_google_stack(tmp_path, server, fake, pings):
    config = write_config(tmp_path, server.base_url, pings.url)
    config.write_text(config.read_text().replace('range = "Data!A2:A"', 'range = "Data!!A2:A"'))
    code, summary, stdout, stderr = run_cli(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert code == 0, stderr
    assert summary["google_modules"] == []
    [alert] = texts(fake)
    assert f"{config}:14: sheets[0].checks[0].range" in alert and "must be quoted" in alert
    assert "Monitor config broken" in stdout and TOKEN not in stdout + stderr


def test_a_missing_key_file_is_told_at_once_in_the_runs_own_words_then_recovered(
        tmp_path, server, fake, clock, pings, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    config = write_config(tmp_path, server.base_url, pings.url)
    runs_went_on(tmp_path, clock)
    assert run_watchdog(config, io.StringIO(), clock=clock) == 0 and texts(fake) == []  # healthy
    last_run = clock.now() - timedelta(minutes=1)

    key = tmp_path / "sa.json"
    kept = key.read_bytes()
    key.unlink()  # the key moved away: every run now exits 2 naming it
    with pytest.raises(ConfigError) as refused:
        load_config(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    [run_says] = refused.value.issues
    assert run_says.key == "google.credentials[0]" and f"credentials file {key} not found" in run_says.problem

    clock.advance(60)  # a minute later: still within max_silence, the runs' heartbeat is fresh
    out = io.StringIO()
    assert run_watchdog(config, out, clock=clock) == 0
    [alert] = map(html.unescape, texts(fake))
    assert "Monitor config broken" in alert
    told = f"the runs refuse the monitor's config: {run_says.where}: {run_says.key}: {run_says.problem}"
    assert told in alert and "Monitor runs stopped" not in alert
    assert f"Problem since {last_run:%Y-%m-%d %H:%M} UTC" in alert  # the last run that finished
    assert f"{run_says.where}: {run_says.key}" in out.getvalue()  # stdout, for cron's mail
    assert pings.paths == ["/ping/3f1c", "/ping/3f1c/fail"]

    key.write_bytes(kept)
    clock.advance(5 * 60)
    runs_went_on(tmp_path, clock)
    assert run_watchdog(config, io.StringIO(), clock=clock) == 0
    assert len(texts(fake)) == 2 and "healthy again" in texts(fake)[1]


def test_a_key_file_that_is_no_service_account_key_is_the_runs_refusal_too(tmp_path):
    config = write_config(tmp_path, "http://127.0.0.1:9", "https://example.org/ping/x")
    (tmp_path / "sa.json").write_text('{"type": "authorized_user"}')
    parts = load_for_watchdog(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert parts.broken is not None and parts.broken_since is None  # the file itself loads
    [issue] = parts.broken.issues
    line = config.read_text().splitlines().index('credentials = ["sa.json"]') + 1
    assert issue.where == f"{config}:{line}"
    assert "is a 'authorized_user' credential, not a service-account key" in issue.problem
    trouble = config_trouble(parts)
    assert trouble is not None and trouble.since is None and trouble.first.startswith(f"{issue.where}: ")
