"""Shared by the status page's tests: a config whose spreadsheet names and findings hold HTML, and a
state as runs leave it with a week of generated history (written the way every process writes it);
and a fresh install on the sandbox, whose real runs leave the state."""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cli_fixtures import A, B, C, invoke, sandbox_config_head, seed, state_dir, write_config

from monitor.app.demo_history import add_generated_history
from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.engine.health import WARN, Finding, Tab, record_verdict
from monitor.engine.mutes import Mute
from monitor.state import changing_state
from sheet_sandbox.server import running_sandbox

HOSTILE_NAME = '<script>window.pwned = 1</script> & "Store"'
HOSTILE_FINDING = '<img src=x onerror="window.pwned = 2"> below 5'
NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)


def report_config(folder: Path, extra: str = "") -> Path:
    path = write_config(folder, extra=extra)
    text = path.read_text().replace('name = "Store 2"', f"name = '{HOSTILE_NAME}'")
    path.write_text(text)
    return path


def seed_with_history(config: Path, now: datetime = NOW) -> datetime:
    """``cli_fixtures.seed``'s state (A dead-lettered, C behind an open breaker), B warning with a
    finding whose text is HTML, a fourth spreadsheet muted, and a week of runs before ``now``."""
    seed(config, now)
    with changing_state(state_dir(config), actor="test-history", now=now) as session:
        state = session.state
        add_generated_history(state, [A, B, C], now - timedelta(hours=3), timedelta(days=7),
                              timedelta(minutes=5), timedelta(minutes=4), {"example": 50})
        finding = Finding("low stock", "threshold", "warn", HOSTILE_FINDING, ("Stock!C7",), gid=0)
        record, _ = record_verdict(state.health[B], WARN, now - timedelta(hours=2), (finding,))
        state.health[B] = replace(record, tabs=(Tab("Stock", 0),))
        state.mutes[A] = Mute(until=now + timedelta(hours=3), reason="migrating <the> sheet")
    return now


# ---- a fresh install on the sandbox --------------------------------------------------------------

TOKEN = "123456:SECRET-report-token-0123456789"
CHAT = -1001000000003
NEXT_ROUND = 6 * 60  # past round_interval (5m): the next run starts a new round
STOCK_CHECKS = """
[profiles.stock]
checks = [
  { kind = "threshold", range = "Stock!C2:C20", aggregate = "min", warn = "< 5", fail = "< 0" },
]
"""


def stock(quantity: int) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


@contextmanager
def sandbox_site(folder: Path, quantities: Mapping[str, int]) -> Iterator[tuple]:
    """(sandbox, clock, config path): the spreadsheets of ``quantities`` ("Store 1"... in that order;
    a quantity under 5 warns), each served with that Stock quantity unless None (then not served:
    Google answers 404), checked by a config on the sandbox with its fake Telegram; no run yet."""
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth's JWTs: real time
    with running_sandbox(clock=clock, latency="off") as sandbox:
        for sid, quantity in quantities.items():
            if quantity is not None:
                sandbox.google.store.put_control(sid, stock(quantity))
        sandbox.telegram.add_token(TOKEN)
        sandbox.telegram.add_chat(CHAT, title="Ops")
        path = folder / "monitor.toml"
        sheets = "".join(f'\n[[sheets]]\nid = "{sid}"\nname = "Store {n}"\nprofile = "stock"\n'
                         for n, sid in enumerate(quantities, start=1))
        path.write_text(sandbox_config_head(sandbox, folder, CHAT) + STOCK_CHECKS + sheets)
        yield sandbox, clock, path


def run_on(path: Path, clock: ManualClock, token: str = TOKEN) -> None:
    """One ``sheet-monitor run`` of the config at ``path``, as cron starts it (with the token)."""
    run_once(load_config(path, {"TELEGRAM_BOT_TOKEN": token}), clock=clock, messages_to=io.StringIO())


def page_of(path: Path) -> str:
    """The page ``sheet-monitor report --html`` writes for the config at ``path``."""
    target = path.parent / "page.html"
    result = invoke(path, "report", "--html", str(target))
    assert result.exit_code == 0, result.output
    return target.read_text()
