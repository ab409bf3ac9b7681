"""The status page says what the state knows of Telegram's delivery, whoever renders it: real runs on
the sandbox deliver (and then are refused), and `report --html` from a shell without the bot token
shows the last delivery and the halt, never "not configured"."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest
from cli_fixtures import A, B, invoke, json_of, saved_state
from report_fixtures import CHAT, NEXT_ROUND, page_of, run_on, sandbox_site, stock
from sandbox_fixtures import drive_caught_up

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.core.timefmt import format_utc
from sheet_sandbox.server import running_sandbox


@pytest.fixture
def site(tmp_path, monkeypatch):
    # Whoever renders the page later has no token in their environment.
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN_FILE", raising=False)
    with sandbox_site(tmp_path, {A: 10, B: 3}) as site:  # B warns: 3 < 5, which is told
        yield site


def telegram_line(page: str) -> str:
    return next(line for line in page.replace("<li>", "\n").splitlines() if line.startswith("Telegram:"))


def test_a_page_rendered_without_the_token_shows_the_last_delivery_the_runs_made(site):
    sandbox, clock, path = site
    started = clock.now()
    run_on(path, clock)
    assert len(sandbox.telegram.messages(CHAT)) == 1  # B's warning
    outbox = saved_state(path).outbox
    assert started <= outbox.last_delivered_at <= clock.now() and outbox.delivered == 1
    delivered_at = format_utc(outbox.last_delivered_at)

    line = telegram_line(page_of(path))
    assert "not configured" not in line
    assert f'last message delivered <time datetime="{delivered_at}">' in line
    telegram = json_of(invoke(path, "report", "--json"))["monitor"]["telegram"]
    assert telegram["configured"] is True and telegram["delivered"] == 1
    assert telegram["last_delivered_at"] == delivered_at


def test_a_page_rendered_without_the_token_shows_a_halt_and_the_delivery_before_it(site):
    sandbox, clock, path = site
    run_on(path, clock)
    delivered_at = format_utc(saved_state(path).outbox.last_delivered_at)
    clock.advance(NEXT_ROUND)
    sandbox.google.store.put_control(B, stock(-1))  # B fails now: told, but the token is wrong
    drive_caught_up(sandbox.google)  # once Drive's change feed has the edit
    run_on(path, clock, token="123456:WRONG-token-000000000000000000")
    assert len(sandbox.telegram.messages(CHAT)) == 1  # the failure was not delivered
    outbox = saved_state(path).outbox
    assert outbox.halted is not None and format_utc(outbox.last_delivered_at) == delivered_at

    line = telegram_line(page_of(path))
    assert f'halted since <time datetime="{format_utc(outbox.halted.at)}">' in line
    assert f'last message delivered <time datetime="{delivered_at}">' in line
    assert "1 message waiting" in line


def test_a_printed_message_is_no_delivery(tmp_path, monkeypatch):
    """Without [telegram] the runs print their messages: the page says so, and names no delivery."""
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    with running_sandbox(clock=clock, latency="off", telegram=False) as sandbox:
        sandbox.google.store.put_control(B, stock(3))
        [key] = sandbox.write_credentials(tmp_path / "keys", 1)
        path = tmp_path / "monitor.toml"
        path.write_text(f"""[run]
state_dir = "state"
budget = "4m"

[google]
credentials = ["{key}"]
api_endpoint = "{sandbox.base_url}"

[[sheets]]
id = "{B}"
name = "Store 2"
checks = [{{ kind = "threshold", range = "Stock!C2:C20", aggregate = "min", warn = "< 5" }}]
""")
        printed = io.StringIO()
        run_once(load_config(path, {}), clock=clock, messages_to=printed)
    assert "Store 2" in printed.getvalue()
    assert saved_state(path).outbox.last_delivered_at is None
    line = telegram_line(page_of(path))
    assert "no chat in the config (messages are printed)" in line
