"""A [[folders]] folder through whole runs (``run_once``, real gspread against the sandbox's Drive,
the state in a folder): its spreadsheets monitored, a new one picked up and told once, one gone
dropped and told once, Drive listed only when its change feed cannot tell."""

from __future__ import annotations

import io
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import STOCK_PROFILE, invoke, json_of, sandbox_config_head, saved_state
from click.testing import CliRunner
from redis_fixtures import REDIS_URL

from monitor.app.folders import folders_brought_up_to_date
from monitor.app.run import run_once
from monitor.cli.main import cli
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.engine.events import FolderSheetsAdded
from monitor.google.client import CredentialCache
from monitor.state import changing_state, own_lock, read_state
from monitor.state.shared import SharedState, prepare
from monitor.storage.redis_store import RedisLocation
from sheet_sandbox.server import running_sandbox

TOKEN = "123456:SECRET-folder-token-0123456789"
CHAT = -1001000000078
NEXT_ROUND = 6 * 60
FOLDER, OTHER = "1StoresFolder".ljust(33, "f"), "1OtherFolder".ljust(33, "o")
FOLDER_MIME = "application/vnd.google-apps.folder"
LIST = "GET /drive/v3/files"


def sid(n: int) -> str:
    return f"1folderSheet{n:04d}".ljust(44, "x")


def stock(name: str, quantity: int, parent: str = FOLDER) -> dict:
    return {"title": name, "parents": [parent],
            "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


@pytest.fixture
def site(tmp_path):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    with running_sandbox(clock=clock, latency="off", feed_delay="off") as sandbox:
        store = sandbox.google.store
        store.put_control(FOLDER, {"title": "Stores", "mimeType": FOLDER_MIME})
        store.put_control(OTHER, {"title": "Archive", "mimeType": FOLDER_MIME})
        for n, quantity in ((1, 10), (2, 12), (3, -1)):
            store.put_control(sid(n), stock(f"Store {n}", quantity))
        store.put_control(sid(9), stock("Not in it", 10, OTHER))
        sandbox.telegram.add_token(TOKEN)
        sandbox.telegram.add_chat(CHAT, title="Ops")
        path = tmp_path / "monitor.toml"
        path.write_text(sandbox_config_head(sandbox, tmp_path, CHAT) + STOCK_PROFILE + f"""
[[folders]]
id = "https://drive.google.com/drive/folders/{FOLDER}"
profile = "stock"
tags = ["stores"]
""")
        yield sandbox, clock, path


def run(path: Path, clock: ManualClock):
    return run_once(load_config(path, {"TELEGRAM_BOT_TOKEN": TOKEN}), clock=clock, messages_to=io.StringIO())


def heard(sandbox, since: int) -> list[str]:
    return [message.plain_text for message in sandbox.telegram.messages(CHAT)][since:]


def invoke_with_token(path: Path, *args: str):
    return CliRunner(env={"TELEGRAM_BOT_TOKEN": TOKEN}).invoke(cli, [*args, "--config", str(path)],
                                                              catch_exceptions=False)


def listings(sandbox) -> int:
    return sandbox.google.stats.snapshot()["by_endpoint"].get(LIST, 0)


def test_a_folders_spreadsheets_are_monitored_and_its_changes_told_once(site):
    sandbox, clock, path = site
    report = run(path, clock).report
    assert report.counts.tasks_done == 3
    first = "\n".join(heard(sandbox, 0))
    assert "Folder Stores: now monitoring Store 1, Store 2, Store 3" in first
    assert "1 new failure" in first  # Store 3's stock is below zero: judged in the same run
    assert "Not in it" not in first
    listed = listings(sandbox)
    assert listed == 1  # one files.list of the folder's spreadsheets, one page
    checked = invoke_with_token(path, "check-config", "--offline", "--json")
    plan = json_of(checked)
    assert "spreadsheets" in plan, checked.output
    assert plan["spreadsheets"] == 3  # the folder's, as the run listed them
    assert not any("not used" in warning for warning in plan["warnings"])

    told = len(heard(sandbox, 0))
    clock.advance(NEXT_ROUND)
    run(path, clock)
    assert "now monitoring" not in "\n".join(heard(sandbox, told))
    assert listings(sandbox) == listed  # the feed told nothing changed: no listing

    sandbox.google.store.put_control(sid(4), stock("Store 4", 20))
    told = len(heard(sandbox, 0))
    clock.advance(NEXT_ROUND)
    run(path, clock)
    [message] = heard(sandbox, told)
    assert "Folder Stores: now monitoring Store 4" in message
    assert "Store 1" not in message.split("now monitoring")[1]
    assert listings(sandbox) == listed  # the feed named it: no listing
    assert sid(4) in saved_state(path).health

    assert sandbox.google.store.delete(sid(3))
    told = len(heard(sandbox, 0))
    clock.advance(NEXT_ROUND)
    run(path, clock)
    said = "\n".join(heard(sandbox, told))
    assert "Store 3 is no longer in the folder" in said
    assert "removed from the config" not in said  # told once, as the folder's
    state = saved_state(path)
    assert sid(3) not in state.health and sid(3) not in state.folders.folders[FOLDER].sheets
    sheets = json_of(invoke(path, "sheets", "--json"))["sheets"]
    assert sorted(row["name"] for row in sheets) == ["Store 1", "Store 2", "Store 4"]

    told = len(heard(sandbox, 0))
    clock.advance(NEXT_ROUND)
    run(path, clock)
    later = "\n".join(heard(sandbox, told))
    assert "now monitoring" not in later and "no longer in the folder" not in later


def test_a_spreadsheet_listed_under_sheets_wins_over_its_folder(site):
    sandbox, clock, path = site
    path.write_text(path.read_text() + f'\n[[sheets]]\nid = "{sid(1)}"\nname = "Flagship"\n'
                    'profile = "stock"\n'
                    'tags = ["flagship"]\n')
    run(path, clock)
    first = "\n".join(heard(sandbox, 0))
    assert "now monitoring Store 2, Store 3" in first and "Store 1" not in first
    health = saved_state(path).health
    assert {sid(1), sid(2), sid(3)} <= health.keys()


def test_a_folder_drive_will_not_list_is_told_once(site):
    sandbox, clock, path = site
    sandbox.google.faults.add({"spreadsheet": FOLDER, "statuses": [404], "repeat": True})
    run(path, clock)
    first = "\n".join(heard(sandbox, 0))
    assert f"Google Drive would not list the folder {FOLDER}" in first
    assert "File not found" in first and "check-config --access" in first
    told = len(heard(sandbox, 0))
    clock.advance(NEXT_ROUND)
    run(path, clock)
    assert "would not list" not in "\n".join(heard(sandbox, told))


def test_runners_sharing_a_redis_state_tell_a_folders_new_spreadsheets_once(site, redis_location):
    # Two runners started by the same cron tick, both holding the state as it was: each asks Drive's
    # feed from the listings' position in a turn, with the state re-read, so the second finds the
    # first's listing and position and has nothing new to tell.
    sandbox, clock, path = site
    config = load_config(path, {"TELEGRAM_BOT_TOKEN": TOKEN})
    with changing_state(redis_location, actor="admin-test", now=clock.now()):
        pass  # the store as a first run leaves it: written whole once, changed by the document after
    with ExitStack() as stack:
        runners = []
        for name in ("host-a", "host-b"):
            location = RedisLocation(REDIS_URL, prefix=redis_location.prefix)
            prepare(location, name, 30.0)
            session = stack.enter_context(changing_state(location, actor=f"run-{name}", now=clock.now(),
                                                         runner=name, lock=own_lock(name)))
            sharing = SharedState(session, location, name, f"run-{name}", 30.0)
            stack.callback(sharing.close)
            runners.append((session, sharing))
        for session, sharing in runners:
            monitored = folders_brought_up_to_date(config, session, clock, sharing.run_id, 5.0,
                                                   CredentialCache(), sharing)
            assert {sid(1), sid(2), sid(3)} <= {sheet.id for sheet in monitored.sheets}
    told = [event for _, event in read_state(redis_location).events.pending()
            if isinstance(event, FolderSheetsAdded)]
    assert len(told) == 1 and listings(sandbox) == 1
