"""A real run on the sandbox judges filtered aggregates from the one batchGet, caps a check of severity
"warn", and tells each finding under its check's name and owner."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from cli_fixtures import A, sandbox_config_head, saved_state

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from sheet_sandbox.server import running_sandbox
from tests.refs import a1

TOKEN = "123456:SECRET-filters-token-0123456789"
CHAT = -1001000000001


def config_text(sandbox, folder: Path) -> str:
    return sandbox_config_head(sandbox, folder, CHAT) + f"""
[profiles.stock]
owner = "@olga"

[[profiles.stock.checks]]
kind = "threshold"
name = "Active stock below zero"
range = "Stock!C2:C20"
aggregate = "min"
where = "B = 'active'"
fail = "< 0"
severity = "warn"
owner = "@ivan"

[[profiles.stock.checks]]
kind = "threshold"
range = "Stock!C2:C20"
aggregate = "avg"
where = "B = 'paused'"
fail = "< -1"

[[profiles.stock.checks]]
kind = "threshold"
range = "Stock!C2:C20"
aggregate = "percentile"
percentile = 50
fail = "> 100"

[[sheets]]
id = "{A}"
name = "Store EMEA"
profile = "stock"
"""


def test_filtered_aggregates_severity_and_owners_reach_the_alert(tmp_path):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth's JWTs: real time
    with running_sandbox(clock=clock, latency="off") as sandbox:
        rows = [["SKU", "Status", "Qty"], ["A-1", "active", -5], ["A-2", "paused", -9],
                ["A-3", "active", 4], ["A-4", "paused", 3]]
        sandbox.google.store.put_control(A, {"title": "S", "tabs": {"Stock": rows}})
        sandbox.telegram.add_token(TOKEN)
        sandbox.telegram.add_chat(CHAT, title="Ops")
        path = tmp_path / "monitor.toml"
        path.write_text(config_text(sandbox, tmp_path))
        run_once(load_config(path, {"TELEGRAM_BOT_TOKEN": TOKEN}), clock=clock, messages_to=io.StringIO())
        [message] = sandbox.telegram.messages(CHAT)[:1]

    record = saved_state(path).health[A]
    found = {finding.check: finding for finding in record.findings}
    capped = found["Active stock below zero"]
    assert (capped.status, capped.owner, a1(capped.cells)) == ("warn", "@ivan", ("Stock!C2",))
    assert capped.message == "min -5 < 0 in rows where B = 'active'"
    paused = found["threshold avg Stock!C2:C20"]
    assert (paused.status, paused.message, paused.owner) == ("fail", "avg -3 < -1 in rows where B = 'paused'",
                                                              None)
    assert "threshold p50 Stock!C2:C20" not in found  # the median, -0.5, is within bounds
    assert record.health == "fail"
    assert "Active stock below zero" in message.text
    assert "owner: @ivan, @olga" in message.text  # the check's own owner, and the sheet's for the other
