"""Shared by the status page's tests: a config whose spreadsheet names and findings hold HTML, and a
state as runs leave it with a week of generated history (written the way every process writes it)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cli_fixtures import A, B, C, seed, state_dir, write_config

from monitor.app.demo_history import add_generated_history
from monitor.engine.health import WARN, Finding, Tab, record_verdict
from monitor.engine.mutes import Mute
from monitor.state import changing_state

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
