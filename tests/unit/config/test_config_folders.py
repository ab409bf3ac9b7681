"""[[folders]] in the config: a folder by id or URL with a profile and tags, each mistake at its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_fixtures import FULL, error_of, load, secrets_folder

FOLDER_ID = "1FoLdEr_0000000000000000000000000"
CROSS = ('{ kind = "cross_sheet", range = "Sales!B2:B", other = "Store 014", other_range = "Stock!F2:F", '
         'name = "sales match stock" }')


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


def test_a_folder_by_url_with_its_profile_tags_and_recursion(folder):
    line = FULL.count("\n") + 2
    config = load(folder, FULL + f"""
[[folders]]
id = "https://drive.google.com/drive/u/0/folders/{FOLDER_ID}?usp=sharing"
profile = "stock"
tags = ["stores"]
recursive = true
owner = "@olga"
""")
    (found,) = config.folders
    assert (found.id, found.recursive, found.tags, found.owner) == (FOLDER_ID, True, ("stores",), "@olga")
    sheet = found.sheet("1Sheet", "Store 900")
    assert (sheet.name, sheet.profile, sheet.tags) == ("Store 900", "stock", ("stores",))
    assert sheet.owner == "@olga"
    assert sheet.checks == next(p for p in config.profiles if p.name == "stock").checks
    assert sheet.origin.endswith(f"monitor.toml:{line} (folder)")


def test_folders_alone_are_enough_to_configure(folder):
    text = FULL[:FULL.index("[[sheets]]")] + f'[[folders]]\nid = "{FOLDER_ID}"\nprofile = "sales"\n'
    config = load(folder, text)
    assert config.sheets == () and [f.id for f in config.folders] == [FOLDER_ID]


@pytest.mark.parametrize(("table", "says"), [
    ('id = "https://docs.google.com/spreadsheets/d/1abc/edit"\nprofile = "stock"',
     "a spreadsheet's URL, not a folder's"),
    (f'id = "{FOLDER_ID}"\nprofile = "nope"', "unknown profile 'nope'"),
    (f'id = "{FOLDER_ID}"', "profile"),
    (f'id = "{FOLDER_ID}"\nprofile = "stock"\nrecursive = "yes"', "recursive"),
    (f'id = "{FOLDER_ID}"\nprofile = "stock"\nsheets = []', "sheets"),
])
def test_a_folders_mistake_is_told_at_its_line(folder, table, says):
    message = error_of(folder, FULL + "\n[[folders]]\n" + table + "\n")
    assert says in message
    assert "monitor.toml:5" in message.splitlines()[1] or "monitor.toml:6" in message.splitlines()[1]


def test_a_folder_twice_and_a_profile_with_cross_sheet_checks_are_refused(folder):
    text = FULL + f"""
[profiles.linked]
checks = [{CROSS}]

[[folders]]
id = "{FOLDER_ID}"
profile = "stock"

[[folders]]
id = "https://drive.google.com/drive/folders/{FOLDER_ID}"
profile = "stock"

[[folders]]
id = "1Other"
profile = "linked"
"""
    message = error_of(folder, text)
    assert f"folder '{FOLDER_ID}' is listed twice" in message
    assert "profile 'linked' has cross-sheet checks" in message
