"""Routes ([[telegram.routes]]) and owners in the config: where each spreadsheet's alerts go, who
answers for it, and every mistake reported at its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_fixtures import FULL, SHEET_A, SHEET_B, error_of, load, secrets_folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


ROUTES = """
[[telegram.routes]]
tags = ["moscow"]
chat_id = "-1002222222222"
message_thread_id = 7

[[telegram.routes]]
profiles = ["sales", "stock"]
chat_id = "@finance_alerts"
"""


def test_the_first_route_that_takes_a_spreadsheet_decides_and_the_rest_go_to_the_default(folder):
    config = load(folder, FULL + ROUTES)
    by_id = config.sheets_by_id
    first, second = config.telegram.routes
    assert config.telegram.route_for(by_id[SHEET_A].tags, by_id[SHEET_A].profile) == first
    assert (first.chat_id, first.message_thread_id) == ("-1002222222222", 7)
    assert config.telegram.route_for(by_id[SHEET_B].tags, by_id[SHEET_B].profile) == second
    assert config.telegram.route_for(("kazan",), None) is None


def test_an_owner_comes_from_the_sheet_else_its_profile_also_in_the_csv(folder):
    text = FULL.replace('[profiles.stock]\n', '[profiles.stock]\nowner = "@olga"\n').replace(
        'name = "Sales North"', 'name = "Sales North"\nowner = "Ivan P."')
    text = text.replace('tags = ["moscow"]', 'tags = ["moscow"]\n') + 'sheets_file = "sheets.csv"\n'
    text = 'sheets_file = "sheets.csv"\n' + text.replace('sheets_file = "sheets.csv"\n', "")
    csv = f"id,profile,owner\n{'c' * 44},stock,@anna\n{'d' * 44},stock,\n"
    config = load(folder, text, csv)
    owners = {sheet.id: sheet.owner for sheet in config.sheets}
    assert owners == {SHEET_A: "@olga", SHEET_B: "Ivan P.", "c" * 44: "@anna", "d" * 44: "@olga"}


def test_route_mistakes_are_reported_at_their_line(folder):
    text = FULL + ROUTES.replace('profiles = ["sales", "stock"]', 'profiles = ["sales", "stok"]')
    stok = next(n for n, line in enumerate(text.splitlines(), 1) if "stok" in line)
    message = error_of(folder, text)
    assert f"monitor.toml:{stok}: telegram.routes[1].profiles: unknown profile 'stok' in a route" in message
    assert "did you mean 'stock'?" in message
    text = FULL + ROUTES + '\n[[telegram.routes]]\nchat_id = "-1003"\n'
    message = error_of(folder, text)
    empty = len(text.splitlines()) - 1  # the third route's header
    assert f"monitor.toml:{empty}: telegram.routes[2]: a route names no tags and no profiles" in message


def test_routes_need_a_default_chat(folder):
    text = FULL.replace('chat_id = "-1001234567890"\n', "") + ROUTES
    message = error_of(folder, text, env={})
    assert "telegram: routes are set but there is no default chat_id" in message
