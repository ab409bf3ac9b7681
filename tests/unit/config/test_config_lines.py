"""Each mistake of a malformed config is told once, at its own line: a table of shapes whose position
is easy to lose (arrays of tables at any depth, misspelt tables, sub-tables, multi-line strings, a check
a profile shares), and of causes whose follow-ons would bury them (a misspelt [[sheet]], a profile's
typo that drops a spreadsheet others compare with, a profile name many spreadsheets repeat).

Each row is a config whose wrong lines end with the comment ``# <-``: the errors are exactly one per
marked line, each naming that line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from config_fixtures import FULL, SHEET_A, SHEET_B, TOKEN, secrets_folder

from monitor.config import ConfigError, load_config

MARK = "# <-"
SALES_CHECKS = '''checks = [
  { kind = "row_count", range = "'Sales 2026'!A2:A", min = 1, max = 5000 },
  { kind = "freshness", source = "modified_time", fail = "> 1d", name = "file edited" },
]
'''
B_CHECKS = 'checks = [{ kind = "threshold", range = "Sales!B2:B", aggregate = "sum", fail = "== 0" }]'
CROSS = ('{{ kind = "cross_sheet", range = "Stock!A2:A", other = "{other}", other_range = "Items!A2:A", '
         'match = "keys" }}')
HEAD = FULL.split("[profiles.stock]")[0]


@dataclass(frozen=True)
class Case:
    name: str
    toml: str


def edit(old: str, new: str, base: str = FULL) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


def stores(count: int, profile: str = "store", mark_first: bool = False) -> str:
    """``count`` spreadsheets "Store N" of ``profile`` (the first one's profile marked)."""
    return "".join(f'\n[[sheets]]\nid = "1Store{n:040d}"\nname = "Store {n}"\nprofile = "{profile}"'
                   f'{"  " + MARK if mark_first and n == 0 else ""}\n' for n in range(count))


MASTER_PROFILES = f'''[profiles.store]
checks = [{CROSS.format(other="Master")}]

[profiles.master]
checks = [{{ kind = "not_empty", range = "Items!A2:A" }}]
'''

MASTER = 'id = "1Master00000000000000000000000000000000000"\nname = "Master"\n'
NOWHERE_PROFILE = MASTER_PROFILES.replace(f"[{CROSS.format(other='Master')}]",
                                          f"[{CROSS.format(other='Nowhere')}]  {MARK}")


def header(old: str, new: str) -> str:
    """FULL with the header ``old`` replaced, and the rest of that table kept."""
    return edit(f"{old}\n", f"{new}\n")


CASES = [
    # -- tables misspelt or misplaced: the header's own line, and nothing that follows from it
    Case("[[sheet]] for [[sheets]]",
         FULL.replace("[[sheets]]", "[[sheet]]  # <-", 1).replace("[[sheets]]", "[[sheet]]")),
    Case("[profile.sales] for [profiles.sales], with the spreadsheet naming it",
         header("[profiles.sales]", "[profile.sales]  # <-")),
    Case("[runs] for [run]", header("[run]", "[runs]  # <-")),
    Case("sheets = [] inside a section", FULL.split("[[sheets]]")[0] + "sheets = []  # <-\n"),
    Case("sheets_file inside a section",
         FULL.split("[[sheets]]")[0].replace("[alerts]\n", '[alerts]\nsheets_file = "sheets.csv"  # <-\n')),
    Case("a sub-table of a spreadsheet",
         edit('tags = ["moscow"]\n', 'tags = ["moscow"]\n[sheets.extra]  # <-\nx = 1\n')),
    # -- arrays of tables below the top
    Case("a profile's checks as [[profiles.NAME.checks]], a key misspelt in the second",
         edit("[profiles.sales]\n" + SALES_CHECKS,
              '[profiles.sales]\n[[profiles.sales.checks]]\nkind = "row_count"\nrange = "Sales!A2:A"\n'
              'min = 1\n[[profiles.sales.checks]]\nkind = "freshness"\nsource = "modified_time"\n'
              'fail = "> 1d"\nrnage = "X!A:A"  # <-\n')),
    Case("a check of [[profiles.NAME.checks]] wrong as a whole",
         edit("[profiles.sales]\n" + SALES_CHECKS,
              '[profiles.sales]\n[[profiles.sales.checks]]\nkind = "row_count"\nrange = "Sales!A2:A"\n'
              'min = 1\n[[profiles.sales.checks]]  # <-\nkind = "freshness"\nsource = "modified_time"\n')),
    Case("a spreadsheet's checks as [[sheets.checks]] under the second spreadsheet",
         edit(B_CHECKS, '[[sheets.checks]]\nkind = "threshold"\nrange = "Sales!B2:B"\n'
              'aggregate = "summ"  # <-\nfail = "== 0"')),
    Case("the second of two [[telegram.routes]]",
         edit("[alerts]", '[[telegram.routes]]\nchat_id = "-100"\ntags = ["a"]\n\n[[telegram.routes]]\n'
              'chat_id = "-101"\ntagz = ["b"]  # <-\n\n[alerts]')),
    Case("the second of two routes written inline",
         edit('api_base = "http://127.0.0.1:8932"', 'api_base = "http://127.0.0.1:8932"\nroutes = [\n'
              '  { chat_id = "-100", tags = ["a"] },\n  { chat_id = "-101", tagz = ["b"] },  # <-\n]')),
    # -- keys written in other shapes
    Case("a quoted key", edit('round_interval = "5m"', '"round_intervall" = "5m"  # <-')),
    Case("a dotted key before any table", edit("[run]\n", 'report.kep = "7d"  # <-\n[run]\n')),
    Case("a section as an inline table",
         "breaker = { failure_threshold = 0 }  # <-\n"
         + edit('[breaker]\nfailure_threshold = 4\ncooldown = "15m"\nmax_cooldown = "1h"\n', "")),
    Case("a header spaced and quoted",
         header("[profiles.sales]", '[ profiles . "sales" ]\nmax_age = "daily"  # <-')),
    Case("a header with a comment",
         header("[profiles.sales]", '[profiles.sales]  # finance\nmax_age = "daily"  # <-')),
    Case("a commented-out header above",
         header("[profiles.sales]", '# [run]\n[profiles.sales]\nmax_age = "daily"  # <-')),
    Case("a header-like line inside a multi-line string",
         edit('name = "Sales North"', 'name = """Sales\n[run]\nNorth"""\nnmae = "x"  # <-')),
    Case("a key-like line inside a multi-line string",
         edit('name = "Sales North"', "name = '''Sales\ntags = 1\n'''\ntags = 3  # <-")),
    Case("a list over several lines, its third element wrong",
         edit('credentials = ["secrets/sa-1.json", "secrets/sa-2.json"]',
              'credentials = [\n  "secrets/sa-1.json",\n  "secrets/sa-2.json",\n'
              '  "secrets/sa-9.json",  # <-\n]')),
    Case("the fourth check of a profile", edit('fail = "> 1d" },\n]', 'fail = "> 1dd" },  # <-\n]')),
    # -- values whose problem involves two keys: the key to change
    Case("max_cooldown below cooldown", edit('max_cooldown = "1h"', 'max_cooldown = "5m"  # <-')),
    # -- spreadsheets
    Case("a spreadsheet without id", edit(f'[[sheets]]\nid = "{SHEET_B}"\n', "[[sheets]]  # <-\n")),
    Case("an id twice: the second", edit(f'id = "{SHEET_B}"', f'id = "{SHEET_A}"  # <-')),
    Case("an unknown check kind", edit('{ kind = "not_empty", range = "Stock!A2:A", min_rows = 3 },',
                                       '{ kind = "notempty", range = "Stock!A2:A", min_rows = 3 },  # <-')),
    # -- cross-sheet checks: at the check's line, once for a profile's
    Case("a spreadsheet's own cross-sheet check naming a spreadsheet not configured",
         edit(B_CHECKS, f"checks = [{CROSS.format(other='Nowhere')}]  # <-")),
    Case("a profile's cross-sheet check naming a spreadsheet not configured, shared by five",
         HEAD + NOWHERE_PROFILE + stores(5)),
    Case("a cross-sheet check comparing with its own spreadsheet",
         edit(B_CHECKS, f"checks = [{CROSS.format(other=SHEET_B)}]  # <-")),
    # -- one cause, told once
    Case("a profile's typo on the spreadsheet 49 others compare with",
         HEAD + MASTER_PROFILES + stores(49) + f'\n[[sheets]]\n{MASTER}profile = "mastr"  # <-\n'),
    Case("a bad id on the spreadsheet 49 others compare with",
         HEAD + MASTER_PROFILES + stores(49) + '\n[[sheets]]\nid = "1 Master"  # <-\nname = "Master"\n'
         'profile = "master"\n'),
    Case("one unknown profile named by 40 spreadsheets",
         FULL.split("[[sheets]]")[0] + stores(40, "stok", mark_first=True)),
    Case("spreadsheets under a misspelt [[sheet]] that others compare with",
         HEAD + MASTER_PROFILES + stores(3) + f'\n[[sheet]]  # <-\n{MASTER}profile = "master"\n'),
    # -- the file itself
    Case("a TOML syntax error", edit('budget = "4m30s"', "budget = 4m30s  # <-")),
    Case("a key written twice",
         edit('round_interval = "5m"', 'round_interval = "5m"\nround_interval = "6m"  # <-')),
]


def marked_lines(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), start=1) if line.rstrip().endswith(MARK)]


def test_the_table_holds_enough_distinct_shapes():
    assert len(CASES) >= 30 and len({case.name for case in CASES}) == len(CASES)
    assert all(marked_lines(case.toml) for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_mistake_is_told_once_at_its_own_line(case: Case, tmp_path: Path) -> None:
    folder = secrets_folder(tmp_path)
    config = folder / "monitor.toml"
    config.write_text(case.toml)
    with pytest.raises(ConfigError) as refused:
        load_config(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    told = [(re.fullmatch(rf"{re.escape(str(config))}:(\d+)(?::\d+)?", issue.where), issue)
            for issue in refused.value.issues]
    assert all(where for where, _ in told), str(refused.value)
    assert [int(where.group(1)) for where, _ in told] == marked_lines(case.toml), str(refused.value)


def test_an_unknown_profile_many_csv_rows_name_is_one_error_at_the_first(tmp_path: Path) -> None:
    folder = secrets_folder(tmp_path)
    (folder / "sheets.csv").write_text("id,name,profile\n" + "".join(
        f"1Store{n:040d},Store {n},stok\n" for n in range(49)))
    config = folder / "monitor.toml"
    config.write_text('sheets_file = "sheets.csv"\n' + FULL.split("[[sheets]]")[0])
    with pytest.raises(ConfigError) as refused:
        load_config(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    [issue] = refused.value.issues
    assert issue.where.endswith("sheets.csv:2") and issue.key == "profile"
    assert issue.problem == "unknown profile 'stok', named by 49 spreadsheets (the first here)"
    assert "did you mean 'stock'?" in issue.fix
