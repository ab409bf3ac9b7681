"""Spreadsheets removed from the config leave every view and every reminder at the next run, said once.

Whole runs (``run_once``, real gspread and httpx against the sandbox's Google and Telegram, the state
in a folder) and the real CLI (`dlq`, `status`, `sheets`, `report`, `metrics`) read by an operator
between them, as on a host where an admin edits the config between two cron ticks.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import (
    STOCK_PROFILE,
    invoke,
    json_of,
    sandbox_config_head,
    saved_state,
    sheet_id,
    stock_sheets,
)
from metrics_fixtures import families, labelled, values

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from sheet_sandbox.server import running_sandbox

TOKEN = "123456:SECRET-removed-token-0123456789"
CHAT = -1001000000077
NEXT_ROUND = 6 * 60  # past round_interval (5m): the next run starts a new round
# Past [alerts] reminder_every, set short: the sandbox checks google-auth's tokens, signed on the real
# clock, against its own, so the runs' clock may not run hours ahead of the real one.
REMINDER = 16 * 60

KEPT_OK, KEPT_FAILING = sheet_id(11), sheet_id(12)
DEAD, FAILING, MUTED, WARNING = sheet_id(13), sheet_id(14), sheet_id(15), sheet_id(16)
NAMES = {KEPT_OK: "Kept ok", KEPT_FAILING: "Kept failing", DEAD: "Gone dead-lettered",
         FAILING: "Gone failing", MUTED: "Gone muted", WARNING: "Gone warning"}
REMOVED = (DEAD, FAILING, MUTED, WARNING)


def stock(quantity: int) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


def config_text(sandbox, folder: Path, ids) -> str:
    alerts = '\n[alerts]\ndigest_at = "off"\nreminder_every = "15m"\n'
    return (sandbox_config_head(sandbox, folder, CHAT) + alerts + STOCK_PROFILE
            + stock_sheets({sid: NAMES[sid] for sid in ids}))


@pytest.fixture
def site(tmp_path):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth's JWTs: real time
    with running_sandbox(clock=clock, latency="off") as sandbox:
        # DEAD is not in the sandbox: every read of it is Google's 404, dead-lettered at once.
        for sid, quantity in ((KEPT_OK, 10), (KEPT_FAILING, -1), (FAILING, -2), (MUTED, -3), (WARNING, 3)):
            sandbox.google.store.put_control(sid, stock(quantity))
        sandbox.telegram.add_token(TOKEN)
        sandbox.telegram.add_chat(CHAT, title="Ops")
        path = tmp_path / "monitor.toml"
        path.write_text(config_text(sandbox, tmp_path, NAMES))
        yield sandbox, clock, path


def run(path: Path, clock: ManualClock) -> None:
    run_once(load_config(path, {"TELEGRAM_BOT_TOKEN": TOKEN}), clock=clock, messages_to=io.StringIO())


def heard(sandbox, since: int) -> list[str]:
    return [message.plain_text for message in sandbox.telegram.messages(CHAT)][since:]


def test_removed_spreadsheets_leave_every_view_and_reminder_at_the_next_run_said_once(site):
    sandbox, clock, path = site
    muted = invoke(path, "mute", MUTED, "--for", "2d", "--reason", "being rebuilt")
    assert muted.exit_code == 0, muted.output
    run(path, clock)
    first = "\n".join(heard(sandbox, 0))
    assert all(NAMES[sid] in first for sid in (DEAD, FAILING, WARNING, KEPT_FAILING))
    assert json_of(invoke(path, "dlq", "list", "--json"))["entries"][0]["id"] == DEAD

    path.write_text(config_text(sandbox, path.parent, (KEPT_OK, KEPT_FAILING)))  # the admin's edit
    # Before the next run: refused with the reason, and out of the operator's lists already.
    refused = invoke(path, "dlq", "retry", DEAD)
    assert refused.exit_code == 2 and "is no longer in the config" in refused.output
    assert NAMES[DEAD] in refused.output and "add it back" in refused.output
    assert json_of(invoke(path, "dlq", "list", "--json"))["entries"] == []

    told = len(heard(sandbox, 0))
    clock.advance(NEXT_ROUND)
    run(path, clock)
    [message] = heard(sandbox, told)
    for sid in REMOVED:
        assert f"{NAMES[sid]} is no longer monitored: it was removed from the config" in message, sid
    state = saved_state(path)
    for sid in REMOVED:
        assert sid not in state.health and sid not in state.dlq and sid not in state.mutes, sid
        assert sid not in state.breakers and sid not in state.history, sid
    assert_every_view_counts_only(path, {KEPT_OK: "ok", KEPT_FAILING: "fail"})

    told = len(heard(sandbox, 0))
    clock.advance(REMINDER)
    run(path, clock)
    later = "\n".join(heard(sandbox, told))
    assert "reminder: 1 still failing" in later and NAMES[KEPT_FAILING] in later
    assert not any(NAMES[sid] in later for sid in REMOVED)  # said once: not reminded, not told again
    assert_every_view_counts_only(path, {KEPT_OK: "ok", KEPT_FAILING: "fail"})


def assert_every_view_counts_only(path: Path, standings: dict[str, str]) -> None:
    """`status`, `sheets`, `dlq`, `breakers`, the status page's data and the metrics know only the
    configured spreadsheets, and count them alike."""
    status = json_of(invoke(path, "status", "--json"))
    counted = {shown: count for shown, count in status["health"].items() if count}
    expected = {shown: list(standings.values()).count(shown) for shown in set(standings.values())}
    assert counted == expected
    assert status["dlq_size"] == 0 and status["open_breakers"] == [] and status["muted"] == []
    rows = json_of(invoke(path, "sheets", "--json"))["sheets"]
    assert {row["id"]: row["shown"] for row in rows} == standings
    assert json_of(invoke(path, "dlq", "list", "--json"))["entries"] == []
    assert json_of(invoke(path, "breakers", "list", "--json"))["breakers"] == []
    page = json_of(invoke(path, "report", "--json"))
    assert page["fleet"]["total"] == len(standings)
    assert {shown: count for shown, count in page["fleet"]["by_health"].items() if count} == expected
    assert {problem["id"] for problem in page["problems"]["listed"]} == {
        sid for sid, shown in standings.items() if shown != "ok"}
    assert page["dlq"] == [] and page["muted"] == []
    metrics = families(invoke(path, "metrics").stdout)
    by_health = labelled(metrics["sheet_monitor_spreadsheets"], "health")
    assert {shown: count for shown, count in by_health.items() if count} == expected
    assert values(metrics["sheet_monitor_dlq_entries"]) == {("sheet_monitor_dlq_entries",): 0.0}
    assert values(metrics["sheet_monitor_spreadsheets_muted"]) == {("sheet_monitor_spreadsheets_muted",): 0.0}
