"""Many malformed configs through `check-config` (and the watchdog): each one exits 2 with an error
that names the file and line to change, and a fix.

A table, not a test per mistake: each row is one edit to a known-good config (or its sheets CSV), the
file the error must point into, and words the problem must contain.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from config_fixtures import FULL, SHEET_A, SHEET_B, TOKEN, secrets_folder

from monitor.cli.main import cli
from monitor.config import ConfigError, load_config

TOML, CSV = "monitor.toml", "sheets.csv"
GOOD_CSV = f"id,name,profile,tags\n{SHEET_A},Store 014,stock,moscow\n"


def with_csv(toml: str) -> str:
    """A config whose sheets come from sheets.csv (sheets_file must precede every [section])."""
    return 'sheets_file = "sheets.csv"\n' + toml.split("[[sheets]]")[0]


CSV_CONFIG = with_csv(FULL)


@dataclass(frozen=True)
class Case:
    name: str
    toml: str
    says: str  # words the problem must contain
    csv: str | None = None
    points_into: str = TOML  # the file whose line the error names
    command: tuple[str, ...] = ("check-config",)
    env: dict | None = None


def edit(old: str, new: str, base: str = FULL) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


CASES = [
    # -- wrong types
    Case("budget is a number", edit('budget = "4m30s"', "budget = 270"), "has no unit"),
    Case("change detection as a word",
         edit('state_dir = "state"', 'state_dir = "state"\nchange_detection = "yes"'),
         "change_detection"),
    Case("quota as a string", edit("read_requests_per_minute = 60", 'read_requests_per_minute = "sixty"'),
         "read_requests_per_minute"),
    Case("no reads in flight",
         edit('request_timeout = "30s"', 'request_timeout = "30s"\nmax_concurrent_reads = 0'),
         "max_concurrent_reads"),
    Case("too many reads in flight",
         edit('request_timeout = "30s"', 'request_timeout = "30s"\nmax_concurrent_reads = 500'), "64"),
    Case("credentials not paths",
         edit('credentials = ["secrets/sa-1.json", "secrets/sa-2.json"]', "credentials = [1]"),
         "credentials must be a list of file paths"),
    Case("threshold zero", edit("failure_threshold = 4", "failure_threshold = 0"), "failure_threshold"),
    Case("chat id as a float", edit('chat_id = "-1001234567890"', "chat_id = 1.5"), "chat_id"),
    Case("negative topic", edit("message_thread_id = 42", "message_thread_id = -1"), "message_thread_id"),
    Case("summary mode unknown", edit('summary = "every_round"', 'summary = "sometimes"'), "summary"),
    Case("digest at 25:00", edit('digest_at = "08:30"', 'digest_at = "25:00"'), "digest_at"),
    Case("unknown time zone", edit('timezone = "Europe/Moscow"', 'timezone = "Mars/Base"'), "Mars/Base"),
    Case("empty state folder", edit('state_dir = "state"', 'state_dir = ""'), "folder path"),
    Case("endpoint not a URL", edit('api_endpoint = "http://127.0.0.1:8931/"', 'api_endpoint = "not a url"'),
         "api_endpoint"),
    Case("section as a value",
         "breaker = 3\n" + FULL.replace("[breaker]\n", "[breaker_]\n"), "must be a table"),
    # -- unknown keys
    Case("misspelt key",
         edit('round_interval = "5m"', 'round_intervall = "5m"'), "did you mean 'round_interval'"),
    Case("unknown section", FULL + "\n[alert]\nsummary = 'on_change'\n", "did you mean 'alerts'"),
    Case("token in the file", edit("message_thread_id = 42", 'message_thread_id = 42\nbot_token = "x"'),
         "secrets never live in the config file"),
    Case("unknown sheet key", edit('name = "Store 014"', 'nmae = "Store 014"'), "nmae"),
    Case("unknown check key", edit('aggregate = "sum"', 'aggregate = "sum", rnage = "X!A:A"'), "rnage"),
    Case("key the loader fills",
         edit('request_timeout = "30s"', 'request_timeout = "30s"\ncredential_projects = 1'),
         "unknown key 'credential_projects'"),
    Case("sheets_file inside a sheet",
         edit('name = "Store 014"', 'name = "Store 014"\nsheets_file = "x.csv"'),
         "sheets_file ended up inside"),
    # -- durations
    Case("duration in words", edit('cooldown = "15m"', 'cooldown = "15 minutes"'), "bad duration"),
    Case("cap below cooldown", edit('max_cooldown = "1h"', 'max_cooldown = "5m"'), "shorter than cooldown"),
    Case("max_age in words", edit('state_dir = "state"', 'state_dir = "state"\nmax_age = "soon"'), "max_age"),
    Case("reminder in words", edit('reminder_every = "4h"', 'reminder_every = "often"'), "reminder_every"),
    Case("unreadable_after in words",
         edit('max_cooldown = "1h"', 'max_cooldown = "1h"\nunreadable_after = "a while"'),
         "unreadable_after"),
    # -- ranges
    Case("three-part range", edit('"Stock!F2:F"', '"Stock!F2:F:G"'), "malformed A1 range"),
    Case("range without a tab", edit('range = "Stock!A2:A"', 'range = "A2:A"'), "does not name a tab"),
    Case("unquoted tab with a bang", edit('range = "Stock!A2:A"', 'range = "Stock!!A2:A"'),
         "must be quoted"),
    Case("empty range", edit('range = "Stock!A2:A"', 'range = ""'), "range"),
    Case("row zero", edit('range = "Stock!A2:A"', 'range = "Stock!A0:A"'), "malformed A1 range"),
    # -- spreadsheets
    Case("same id twice", edit(f'id = "{SHEET_B}"', f'id = "{SHEET_A}"'), "listed twice"),
    Case("id too short", edit(f'id = "{SHEET_A}"', 'id = "abc def"'), "id"),
    Case("tags not strings", edit('tags = ["moscow"]', "tags = [1]"), "tags must be a list"),
    Case("sheet without checks", edit('profile = "stock"\n', ""), "has no checks"),
    Case("empty sheet list", "sheets = []\n" + FULL.split("[[sheets]]")[0], "no spreadsheets are configured"),
    Case("no sheets at all", FULL.split("[[sheets]]")[0], "no spreadsheets are configured"),
    Case("sheets as a table", FULL.split("[[sheets]]")[0] + "[sheets]\nid = 1\n", "array of tables"),
    # -- the CSV
    Case("CSV with only its header", CSV_CONFIG, "lists no spreadsheet", csv="id,name,profile,tags\n"),
    Case("CSV bad id",
         CSV_CONFIG, "id", csv="id,name,profile,tags\nnot an id,Store,stock,\n", points_into=CSV),
    Case("CSV empty profile", CSV_CONFIG, "empty profile", csv=f"id,name,profile\n{SHEET_A},Store,\n",
         points_into=CSV),
    Case("CSV unknown column", CSV_CONFIG, "unknown column", csv=f"id,nmae,profile\n{SHEET_A},Store,stock\n",
         points_into=CSV),
    Case("CSV too many cells",
         CSV_CONFIG, "more cells", csv=f"id,name,profile\n{SHEET_A},Store, North,stock\n",
         points_into=CSV),
    Case("CSV without a profile column", CSV_CONFIG, "no 'profile' column", csv=f"id,name\n{SHEET_A},Store\n",
         points_into=CSV),
    Case("CSV id twice",
         CSV_CONFIG, "listed twice", csv=GOOD_CSV + f"{SHEET_A},Again,stock,\n", points_into=CSV),
    Case("CSV unknown profile", CSV_CONFIG, "unknown profile", csv=f"id,name,profile\n{SHEET_A},Store,stok\n",
         points_into=CSV),
    Case("CSV file missing", CSV_CONFIG, "not found"),
    Case("sheets_file a number",
         'sheets_file = 5\n' + FULL.split("[[sheets]]")[0], "sheets_file must be a file path"),
    # -- profiles and checks
    Case("unknown profile", edit('profile = "stock"', 'profile = "stok"'), "unknown profile"),
    Case("profile without checks",
         edit("[profiles.sales]\nchecks = [", "[profiles.sales]\nalways_read = true\nx = ["),
         "profile has no checks"),
    Case("profile as a value", edit("[profiles.stock]", "[profiles]\nstock = 3\n[profiles.x]"), "profile"),
    Case("profile max_age in words",
         edit("[profiles.sales]\n", '[profiles.sales]\nmax_age = "daily"\n'), "max_age"),
    Case("unknown check kind", edit('kind = "not_empty"', 'kind = "notempty"'), "unknown check kind"),
    Case("check without kind", edit('{ kind = "not_empty", range', '{ range'), "has no kind"),
    Case("threshold without aggregate", edit('aggregate = "min", ', ""), "aggregate"),
    Case("row count min above max", edit("min = 1, max = 5000", "min = 10, max = 5"), "min"),
    Case("checks not a list", edit('checks = [{ kind = "threshold"', 'checks = 3\nx = [{ kind = "threshold"'),
         "checks must be a list"),
    Case("two checks with one name",
         edit('min_rows = 3 }', 'min_rows = 3, name = "a" }')
         .replace('range = "Stock!A1:H500" }', 'range = "Stock!A1:H500", name = "a" }'), "both named"),
    # -- the watchdog's settings
    Case("silence as a number", edit('max_silence = "20m"', "max_silence = 20"), "has no unit"),
    Case("heartbeat URL not a URL",
         edit('heartbeat_url = "https://example.org/ping/abc"', 'heartbeat_url = "nope"'),
         "heartbeat_url"),
    Case("no failed runs",
         edit('reminder_every = "2h"', 'reminder_every = "2h"\nfailed_runs = 0'), "failed_runs"),
    Case("stuck grace in words",
         edit('reminder_every = "2h"', 'reminder_every = "2h"\nstuck_grace = "a bit"'),
         "stuck_grace"),
    Case("unknown watchdog key", edit('reminder_every = "2h"', 'reminder_every = "2h"\nmax_silnce = "1h"'),
         "did you mean 'max_silence'"),
    Case("watchdog with a chat but no token", FULL, "neither", command=("watchdog",), env={}),
    Case("watchdog with a token but no chat", edit('chat_id = "-1001234567890"\n', ""), "no chat",
         command=("watchdog",)),
    # -- the file itself
    Case("TOML syntax", edit('budget = "4m30s"', "budget = 4m30s"), "TOML syntax error"),
    Case("string never closed", FULL + 'x = """never closed\n', "at the end of the file"),
    Case("no credentials",
         edit('credentials = ["secrets/sa-1.json", "secrets/sa-2.json"]\n', ""), "credential"),
    Case("credential file missing", edit("secrets/sa-2.json", "secrets/sa-9.json"), "sa-9.json"),
]


def test_the_table_holds_enough_distinct_mistakes():
    assert len(CASES) >= 40 and len({case.name for case in CASES}) == len(CASES)


def invoked(case: Case, tmp_path: Path, *options: str) -> tuple[Path, Result]:
    """The case's config (and CSV) written, and its command run on it with ``options``."""
    folder = secrets_folder(tmp_path)
    config = folder / TOML
    config.write_text(case.toml)
    if case.csv is not None:
        (folder / CSV).write_text(case.csv)
    env = {"TELEGRAM_BOT_TOKEN": TOKEN} if case.env is None else case.env
    result = CliRunner().invoke(cli, [*case.command, *options, "--config", str(config)], env=env,
                                catch_exceptions=False)
    return config, result


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_malformed_config_names_file_line_and_fix_and_exits_2(case: Case, tmp_path: Path) -> None:
    _, result = invoked(case, tmp_path)
    output = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code == 2, output
    located = re.search(rf"{re.escape(case.points_into)}:(\d+)", output)
    assert located and int(located.group(1)) >= 1, output
    assert "fix:" in output and case.says in output, output
    assert TOKEN not in output


def test_the_quoted_tab_an_unquoted_bang_is_told_to_use_is_accepted(tmp_path: Path) -> None:
    folder = secrets_folder(tmp_path)
    config = folder / TOML
    config.write_text(edit('range = "Stock!A2:A"', 'range = "Stock!!A2:A"'))
    with pytest.raises(ConfigError) as refused:
        load_config(config, {"TELEGRAM_BOT_TOKEN": TOKEN})
    [issue] = refused.value.issues
    suggested = re.search(r'quote the tab name: "([^"]+)"', issue.fix).group(1)
    assert suggested == "'Stock!'!A2:A"
    config.write_text(edit('range = "Stock!A2:A"', f'range = "{suggested}"'))
    [stock, _] = load_config(config, {"TELEGRAM_BOT_TOKEN": TOKEN}).sheets
    assert suggested in stock.ranges


CHECK_CONFIG_CASES = [case for case in CASES if case.command == ("check-config",)]


@pytest.mark.parametrize("case", CHECK_CONFIG_CASES, ids=[case.name for case in CHECK_CONFIG_CASES])
def test_check_config_json_on_a_malformed_config_prints_its_problems_on_stdout_and_exits_2(
        case: Case, tmp_path: Path) -> None:
    config, result = invoked(case, tmp_path, "--json")
    assert result.exit_code == 2, result.output
    data = json.loads(result.stdout)  # a document, whatever stderr says beside it
    assert data["version"] == 1 and data["valid"] is False and data["config"] == str(config)
    assert data["problems"] and all(problem["problem"] and problem["fix"] for problem in data["problems"])
    assert any(case.says in f"{problem['key']}: {problem['problem']} {problem['fix']}"
               for problem in data["problems"])
    first = data["problems"][0]
    assert first["file"].endswith(case.points_into) and first["line"] >= 1
    assert first["where"].startswith(f"{first['file']}:{first['line']}")
    assert TOKEN not in result.stdout
