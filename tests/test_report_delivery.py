"""The status page says what the state knows of Telegram's delivery, whoever renders it: real runs on
the sandbox deliver (and then are refused), and `report --html` from a shell without the bot token
shows the last delivery and the halt, never "not configured"."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import A, B, invoke, json_of, sandbox_config_head, saved_state

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.core.timefmt import format_utc
from monitor.sandbox.server import running_sandbox

TOKEN = "123456:SECRET-report-token-0123456789"
CHAT = -1001000000003
NEXT_ROUND = 6 * 60  # past round_interval (5m): the next run starts a new round


def stock(quantity: int) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


@pytest.fixture
def site(tmp_path, monkeypatch):
    # Whoever renders the page later has no token in their environment.
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN_FILE", raising=False)
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth's JWTs: real time
    with running_sandbox(clock=clock, latency="off") as sandbox:
        for sid, quantity in ((A, 10), (B, 3)):  # B warns: 3 < 5, which is told
            sandbox.google.store.put_control(sid, stock(quantity))
        sandbox.telegram.add_token(TOKEN)
        sandbox.telegram.add_chat(CHAT, title="Ops")
        path = tmp_path / "monitor.toml"
        sheets = "".join(f'\n[[sheets]]\nid = "{sid}"\nname = "Store {n}"\nprofile = "stock"\n'
                         for n, sid in enumerate((A, B), start=1))
        path.write_text(sandbox_config_head(sandbox, tmp_path, CHAT) + """
[profiles.stock]
checks = [
  { kind = "threshold", range = "Stock!C2:C20", aggregate = "min", warn = "< 5", fail = "< 0" },
]
""" + sheets)
        yield sandbox, clock, path


def run(path: Path, clock: ManualClock, token: str = TOKEN) -> None:
    run_once(load_config(path, {"TELEGRAM_BOT_TOKEN": token}), clock=clock, messages_to=io.StringIO())


def page_of(path: Path) -> str:
    target = path.parent / "page.html"
    result = invoke(path, "report", "--html", str(target))
    assert result.exit_code == 0, result.output
    return target.read_text()


def telegram_line(page: str) -> str:
    return next(line for line in page.replace("<li>", "\n").splitlines() if line.startswith("Telegram:"))


def test_a_page_rendered_without_the_token_shows_the_last_delivery_the_runs_made(site):
    sandbox, clock, path = site
    started = clock.now()
    run(path, clock)
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
    run(path, clock)
    delivered_at = format_utc(saved_state(path).outbox.last_delivered_at)
    clock.advance(NEXT_ROUND)
    sandbox.google.store.put_control(B, stock(-1))  # B fails now: told, but the token is wrong
    run(path, clock, token="123456:WRONG-token-000000000000000000")
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
