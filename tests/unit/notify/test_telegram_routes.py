"""Routes end to end: a real run on the sandbox (gspread against the fake Google API, httpx against
the fake Telegram) tells each chat or forum topic about its own spreadsheets, in one grouped message
per chat, names owners, and a chat that refuses everything holds back only its own messages."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import A, B, C, invoke, sandbox_config_head, saved_state

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from sheet_sandbox.server import running_sandbox

TOKEN = "123456:SECRET-routes-token-0123456789"
DEFAULT_CHAT, EMEA, FINANCE = -1001000000001, -1001000000002, -1001000000003
EMEA_TOPIC = 7


def config_text(sandbox, folder: Path) -> str:
    return sandbox_config_head(sandbox, folder, DEFAULT_CHAT) + f"""
[profiles.stock]
owner = "@olga"
checks = [{{ kind = "threshold", range = "Stock!C2:C20", aggregate = "min", fail = "< 0" }}]

[profiles.finance]
checks = [{{ kind = "threshold", range = "Stock!C2:C20", aggregate = "min", fail = "< 0" }}]

[[sheets]]
id = "{A}"
name = "Store EMEA"
profile = "stock"
tags = ["emea"]
owner = "@ivan"

[[sheets]]
id = "{B}"
name = "Store Home"
profile = "stock"

[[sheets]]
id = "{C}"
name = "Ledger"
profile = "finance"

[[telegram.routes]]
tags = ["emea"]
chat_id = "{EMEA}"
message_thread_id = {EMEA_TOPIC}

[[telegram.routes]]
profiles = ["finance"]
chat_id = "{FINANCE}"
"""


@pytest.fixture
def site(tmp_path) -> Iterator[tuple[object, Path, ManualClock]]:
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth's JWTs: real time
    with running_sandbox(clock=clock, latency="off") as sandbox:
        for sid in (A, B, C):  # every spreadsheet fails its threshold
            sandbox.google.store.put_control(sid, {"title": "S", "tabs": {"Stock": [["SKU", "P", "Q"],
                                                                                    ["A-1", "Tea", -5]]}})
        sandbox.telegram.add_token(TOKEN)
        sandbox.telegram.add_chat(DEFAULT_CHAT, title="Ops")
        sandbox.telegram.add_chat(EMEA, title="EMEA", topics=[EMEA_TOPIC])
        sandbox.telegram.add_chat(FINANCE, title="Finance")
        path = tmp_path / "monitor.toml"
        path.write_text(config_text(sandbox, tmp_path))
        yield sandbox, path, clock


def run(path: Path, clock: ManualClock) -> None:
    run_once(load_config(path, {"TELEGRAM_BOT_TOKEN": TOKEN}), clock=clock, messages_to=io.StringIO())


def test_each_chat_hears_of_its_own_spreadsheets_in_one_message_naming_their_owners(site):
    sandbox, path, clock = site
    run(path, clock)
    [home] = sandbox.telegram.messages(DEFAULT_CHAT)[:1]
    [emea] = sandbox.telegram.messages(EMEA)
    [ledger] = sandbox.telegram.messages(FINANCE)
    assert emea.message_thread_id == EMEA_TOPIC and ledger.message_thread_id is None
    assert "Store EMEA" in emea.text and "owner: @ivan" in emea.text  # the sheet's own owner wins
    assert "Store Home" in home.text and "owner: @olga" in home.text  # the profile's owner
    assert "Ledger" in ledger.text and "owner" not in ledger.text
    assert "Store EMEA" not in home.text + ledger.text and "Ledger" not in home.text
    assert "Failing now: 1" in emea.text and "Failing now: 1" in home.text  # each chat counts its own


def test_a_chat_refusing_every_message_holds_back_only_its_own(site):
    sandbox, path, clock = site
    sandbox.telegram.block_chat(FINANCE)
    run(path, clock)
    assert len(sandbox.telegram.messages(EMEA)) == 1 and sandbox.telegram.messages(DEFAULT_CHAT)
    outbox = saved_state(path).outbox
    assert outbox.halted is None and list(outbox.halts) == [str(FINANCE)]
    assert [entry.chat_id for entry in outbox.pending] == [str(FINANCE)]  # kept for when it works
    status = invoke(path, "status")
    assert f"Telegram refuses chat {FINANCE} since" in status.output and "bot was kicked" in status.output
    sandbox.telegram.block_chat(FINANCE, blocked=False)
    clock.advance(60)
    run(path, clock)
    assert "Ledger" in sandbox.telegram.messages(FINANCE)[0].text
    assert saved_state(path).outbox.halts == {}
