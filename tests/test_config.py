"""The config loader: a full valid file, and every kind of mistake reported with place and fix."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pydantic
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from monitor.checks import FreshnessCheck, ThresholdCheck, evaluate_all, ranges_of
from monitor.config import DEFAULTS, ConfigError, checks_fingerprint, load_config, resolve_config_path
from monitor.core.durations import format_duration, parse_positive_duration
from monitor.core.invalid import InvalidValue

TOKEN = "7357:AAH-test-token-never-shown"
SHEET_A = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgVE2upms"
SHEET_B = "1Cdef0000000000000000000000000000000000000bb"
SHEET_C = "1Cdef0000000000000000000000000000000000000cc"


@pytest.fixture(scope="module")
def pem_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@pytest.fixture
def folder(tmp_path: Path, pem_key: str) -> Path:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    for n in (1, 2):
        (secrets / f"sa-{n}.json").write_text(json.dumps({
            "type": "service_account", "client_email": f"sa-{n}@proj.iam.gserviceaccount.com",
            "private_key": pem_key, "token_uri": "https://oauth2.googleapis.com/token"}))
    return tmp_path


FULL = f"""\
[run]
budget = "4m30s"
round_interval = "5m"
state_dir = "state"

[google]
credentials = ["secrets/sa-1.json", "secrets/sa-2.json"]
read_requests_per_minute = 60
project_read_requests_per_minute = 300
request_timeout = "30s"
api_endpoint = "http://127.0.0.1:8931/"

[breaker]
failure_threshold = 4
cooldown = "15m"
max_cooldown = "1h"

[telegram]
chat_id = "-1001234567890"
message_thread_id = 42
api_base = "http://127.0.0.1:8932"

[alerts]
summary = "every_round"
digest_at = "08:30"
timezone = "Europe/Moscow"
reminder_every = "4h"

[watchdog]
max_silence = "20m"
reminder_every = "2h"
heartbeat_url = "https://example.org/ping/abc"

[profiles.stock]
checks = [
  {{ kind = "formula_errors", range = "Stock!A1:H500" }},
  {{ kind = "not_empty", range = "Stock!A2:A", min_rows = 3 }},
  {{ kind = "threshold", range = "Stock!F2:F", aggregate = "min", warn = "< 5", fail = "< 0" }},
  {{ kind = "freshness", range = "Stock!E2:E", warn = "> 2h", fail = "> 1d" }},
]

[profiles.sales]
checks = [
  {{ kind = "row_count", range = "'Sales 2026'!A2:A", min = 1, max = 5000 }},
  {{ kind = "freshness", source = "modified_time", fail = "> 1d", name = "file edited" }},
]

[[sheets]]
id = "{SHEET_A}"
name = "Store 014"
profile = "stock"
tags = ["moscow"]

[[sheets]]
id = "{SHEET_B}"
name = "Sales North"
profile = "sales"
checks = [{{ kind = "threshold", range = "Sales!B2:B", aggregate = "sum", fail = "== 0" }}]
"""


def write(folder: Path, text: str, csv: str | None = None) -> Path:
    path = folder / "monitor.toml"
    path.write_text(textwrap.dedent(text))
    if csv is not None:
        (folder / "sheets.csv").write_text(textwrap.dedent(csv))
    return path


def load(folder: Path, text: str, csv: str | None = None, env: dict | None = None, **kw):
    env = {"TELEGRAM_BOT_TOKEN": TOKEN} if env is None else env
    return load_config(write(folder, text, csv), env, **kw)


def error_of(folder: Path, text: str, csv: str | None = None, env: dict | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load(folder, text, csv, env)
    message = str(info.value)
    assert TOKEN not in message
    return message


MINIMAL = f"""\
[google]
credentials = ["secrets/sa-1.json"]

[[sheets]]
id = "{SHEET_A}"
checks = [{{ kind = "not_empty", range = "Data!A2:A" }}]
"""


# ---------------------------------------------------------------------------------------- valid


def test_full_config_resolves_every_value(folder: Path) -> None:
    config = load(folder, FULL)

    assert config.run.budget == timedelta(minutes=4, seconds=30)
    assert config.run.state_dir == folder.resolve() / "state"
    assert config.google.credentials == (folder.resolve() / "secrets/sa-1.json",
                                         folder.resolve() / "secrets/sa-2.json")
    assert config.google.api_endpoint == "http://127.0.0.1:8931"
    assert config.google.reads_per_minute == 120
    assert config.breaker.max_cooldown == timedelta(hours=1)
    assert config.telegram.enabled and config.telegram.message_thread_id == 42
    assert config.telegram.bot_token.get_secret_value() == TOKEN
    assert config.alerts.digest_at == time(8, 30)
    assert config.alerts.tzinfo.key == "Europe/Moscow"
    assert config.watchdog.max_silence == timedelta(minutes=20)
    assert config.warnings == ()

    store, sales = config.sheets
    assert (store.name, store.profile, store.tags, store.origin) == (
        "Store 014", "stock", ("moscow",), f"{folder / 'monitor.toml'}:49")
    assert store.ranges == ("Stock!A1:H500", "Stock!A2:A", "Stock!F2:F", "Stock!E2:E")
    assert store.id == SHEET_A
    threshold = store.checks[2]
    assert isinstance(threshold, ThresholdCheck) and threshold.name == "threshold min Stock!F2:F"
    assert threshold.warn.holds(4) and not threshold.warn.holds(5) and threshold.fail.holds(-1)
    freshness = store.checks[3]
    assert isinstance(freshness, FreshnessCheck)
    assert (freshness.warn_age, freshness.fail_age) == (timedelta(hours=2), timedelta(days=1))
    assert store.checks[1].min_rows == 3 and store.checks[0].a1.sheet == "Stock"

    # profile checks first, then the sheet's own
    assert [c.kind for c in sales.checks] == ["row_count", "freshness", "threshold"]
    assert sales.checks[1].name == "file edited" and sales.checks[1].range is None
    assert sales.ranges == ("'Sales 2026'!A2:A", "Sales!B2:B")
    assert sales.needs_modified_time and not store.needs_modified_time
    assert config.sheets_by_id[SHEET_B] is sales


def test_configured_checks_are_what_the_evaluator_reads(folder: Path) -> None:
    sales = load(folder, FULL).sheets[1]
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    results = evaluate_all(sales.checks, [
        {"range": "'Sales 2026'!A2:A3", "values": [["a"], ["b"]]},
        {"range": "Sales!B2:B3", "values": [[0], [0]]}],
                           now, modified_time=now - timedelta(days=2))
    assert [(r.check_name, r.status) for r in results] == [
        ("row_count 'Sales 2026'!A2:A", "ok"), ("file edited", "fail"),
        ("threshold sum Sales!B2:B", "fail")]


def test_omitted_sections_take_the_documented_defaults(folder: Path) -> None:
    config = load(folder, MINIMAL, env={})

    assert config.run.budget == timedelta(minutes=6)
    assert config.run.round_interval == timedelta(minutes=5)
    assert config.google.read_requests_per_minute == DEFAULTS["google.read_requests_per_minute"].value
    assert config.google.request_timeout == timedelta(seconds=30)
    assert config.breaker.failure_threshold == 3
    assert config.alerts.summary == "on_change" and config.alerts.timezone == "UTC"
    assert config.watchdog.max_silence == timedelta(minutes=15)
    assert config.sheets[0].name == SHEET_A  # no name: the id stands in
    assert not config.telegram.enabled
    assert any("budget" in w and "4m30s" in w for w in config.warnings)
    assert any("printed" in w for w in config.warnings)
    unused = load(folder, MINIMAL + '\n[profiles.spare]\nchecks = [{ kind = "not_empty", '
                                     'range = "A!A:A" }]\n', env={})
    assert "profiles not used by any spreadsheet: spare" in unused.warnings


def test_config_is_frozen(folder: Path) -> None:
    config = load(folder, MINIMAL, env={})
    with pytest.raises(pydantic.ValidationError):
        config.run.budget = timedelta(seconds=1)  # type: ignore[misc]


def test_fingerprint_is_stable_and_changes_only_with_checks_or_sheet_set(folder: Path) -> None:
    first = load(folder, FULL)
    again = load(folder, FULL)
    renamed = load(folder, FULL.replace('"Store 014"', '"Store 15"'))
    edited = load(folder, FULL.replace('warn = "< 5"', 'warn = "< 6"'))
    fewer = load(folder, FULL.split("[[sheets]]")[0] + "[[sheets]]" + FULL.split("[[sheets]]")[1])

    assert first.fingerprint == again.fingerprint == renamed.fingerprint
    assert edited.fingerprint != first.fingerprint
    assert edited.sheets[0].fingerprint != first.sheets[0].fingerprint
    assert edited.sheets[1].fingerprint == first.sheets[1].fingerprint
    assert fewer.fingerprint != first.fingerprint


def test_csv_sheets_join_the_toml_ones_with_semicolon_tags(folder: Path) -> None:
    csv = f"""\
    id,name,profile,tags
    # comment lines and blank lines are skipped

    {SHEET_B},"Store, North",stock,north; retail
    {SHEET_C},,stock,
    """
    config = load(folder, 'sheets_file = "sheets.csv"\n' + FULL.split("[[sheets]]")[0], csv)
    assert [(s.id, s.name, s.tags) for s in config.sheets] == [
        (SHEET_B, "Store, North", ("north", "retail")), (SHEET_C, SHEET_C, ())]
    assert config.sheets[0].origin.endswith("sheets.csv:4")


def test_sheets_of_one_profile_share_its_checks_and_what_follows_from_them(folder: Path) -> None:
    ids = [f"{SHEET_A[:-2]}{n:02d}" for n in range(3)]
    csv = "id,profile\n" + "".join(f"{sheet_id},stock\n" for sheet_id in ids)
    config = load(folder, 'sheets_file = "sheets.csv"\n' + FULL.split("[[sheets]]")[0], csv)
    first, *others = config.sheets
    assert [s.id for s in config.sheets] == ids
    for sheet in others:  # computed once for the profile, not once per spreadsheet
        assert sheet.checks is first.checks and sheet.ranges is first.ranges
        assert sheet.fingerprint == first.fingerprint
    assert first.ranges == ranges_of(first.checks) == ("Stock!A1:H500", "Stock!A2:A", "Stock!F2:F",
                                                        "Stock!E2:E")
    assert first.fingerprint == checks_fingerprint(first.checks)
    assert not first.needs_modified_time


def test_config_path_comes_from_option_then_environment_then_default() -> None:
    env = {"SHEET_MONITOR_CONFIG": "/etc/monitor.toml"}
    assert resolve_config_path("cli.toml", env) == Path("cli.toml")
    assert resolve_config_path(None, env) == Path("/etc/monitor.toml")
    assert resolve_config_path(None, {}) == Path("monitor.toml")


# ---------------------------------------------------------------------------------------- errors


def test_unknown_key_names_line_key_and_the_allowed_keys(folder: Path) -> None:
    message = error_of(folder, FULL.replace('round_interval = "5m"', 'round_intervall = "5m"'))
    assert "monitor.toml:3: run.round_intervall: unknown key 'round_intervall'" in message
    assert "did you mean 'round_interval'?" in message and "budget" in message


def test_unknown_key_inside_an_inline_check_points_at_its_line(folder: Path) -> None:
    message = error_of(folder, FULL.replace('fail = "> 1d", name', 'fail = "> 1d", nmae')
                       .replace('aggregate = "sum"', 'aggregate = "sum", rnage = "X!A:A"'))
    assert "monitor.toml:45: profiles.sales.checks[1].nmae: unknown key 'nmae'" in message
    assert "did you mean 'name'?" in message
    assert "monitor.toml:58: sheets[1].checks[0].rnage: unknown key 'rnage'" in message


def test_quoted_and_multi_line_tables_are_located(folder: Path) -> None:
    text = MINIMAL.replace('checks = [{ kind = "not_empty", range = "Data!A2:A" }]',
                           'profile = "my stock"') + textwrap.dedent("""
        [profiles."my stock"]
        checks = [
          # a comment with a } brace and a [ bracket
          { kind = "not_empty", range = "Data!A2:A", name = "a, {b} [c]" },

          { kind = "row_count", range = "Data!A2:A", min = "ten" },
        ]
        """)
    message = error_of(folder, text)
    assert 'monitor.toml:13: profiles."my stock".checks[1].min: input should be a valid integer' in (
        message)


def test_unknown_section_is_an_error(folder: Path) -> None:
    message = error_of(folder, FULL + "\n[alert]\nsummary = 'on_change'\n")
    assert ":60: alert: unknown top-level key or section 'alert'" in message
    assert "did you mean 'alerts'?" in message


def test_bad_duration_says_the_accepted_forms(folder: Path) -> None:
    message = error_of(folder, FULL.replace('cooldown = "15m"', 'cooldown = "15 minutes"')
                       .replace('max_silence = "20m"', "max_silence = 20"))
    assert "monitor.toml:15: breaker.cooldown: bad duration '15 minutes'" in message
    assert "monitor.toml:30: watchdog.max_silence: the number 20 has no unit" in message
    assert '"90s", "15m", "2h", "1d"' in message


def test_malformed_range_points_at_the_check_line(folder: Path) -> None:
    message = error_of(folder, FULL.replace('"Stock!F2:F"', '"Stock!F2:F:G"'))
    assert "monitor.toml:38: profiles.stock.checks[2].range: malformed A1 range" in message
    assert 'e.g. "Stock!A2:A"' in message


def test_range_must_name_a_tab(folder: Path) -> None:
    message = error_of(folder, FULL.replace('range = "Stock!A2:A"', 'range = "A2:A"'))
    assert "monitor.toml:37: profiles.stock.checks[1].range: range 'A2:A' does not name a tab" in message
    assert 'fix: prefix the tab name: "TAB!A2:A", e.g. "Stock!A2:A"' in message


def test_unknown_check_kind_lists_the_kinds(folder: Path) -> None:
    message = error_of(folder, FULL.replace('kind = "not_empty"', 'kind = "notempty"'))
    assert "monitor.toml:37: profiles.stock.checks[1].kind: unknown check kind 'notempty'" in message
    assert "did you mean 'not_empty'?" in message
    assert "formula_errors, not_empty, row_count, threshold, freshness" in message


def test_bad_condition_and_bad_age_are_reported_with_forms(folder: Path) -> None:
    message = error_of(folder, FULL.replace('warn = "< 5"', 'warn = "less than 5"')
                       .replace('warn = "> 2h"', 'warn = "< 2h"'))
    assert "profiles.stock.checks[2].warn: bad condition 'less than 5'" in message
    assert '"< 5", ">= 0"' in message
    assert "monitor.toml:39: profiles.stock.checks[3].warn: bad age condition '< 2h'" in message


def test_check_parameters_are_checked_per_kind(folder: Path) -> None:
    message = error_of(folder, FULL.replace("min = 1, max = 5000", "min = 9, max = 5")
                       .replace('aggregate = "min", ', 'aggregate = "avg", ')
                       .replace('source = "modified_time", ', 'source = "modified_time", '
                                'range = "Sales!A:A", '))
    assert "profiles.sales.checks[0]: min (9) is greater than max (5)" in message
    assert "profiles.stock.checks[2].aggregate: 'avg' is not allowed" in message
    assert "'min', 'max', 'sum', 'count' or 'value'" in message
    assert 'profiles.sales.checks[1]: a freshness check on source = "modified_time" takes no' in message


def test_unknown_profile_names_the_sheet_and_the_defined_profiles(folder: Path) -> None:
    message = error_of(folder, FULL.replace('profile = "sales"', 'profile = "sale"'))
    assert "monitor.toml:57: sheets[1].profile: unknown profile 'sale'" in message
    assert "did you mean 'sales'?" in message and "stock, sales" in message


def test_duplicate_ids_name_both_places(folder: Path) -> None:
    csv = f"""\
    id,name,profile
    {SHEET_C},C,stock
    {SHEET_A},Again,stock
    """
    message = error_of(folder, 'sheets_file = "sheets.csv"\n' + FULL, csv)
    assert f"sheets.csv:3: id: spreadsheet id '{SHEET_A}' is listed twice" in message
    assert "first at " in message and "monitor.toml:50 (sheets[0].id)" in message


def test_csv_bad_rows_report_the_csv_line(folder: Path) -> None:
    csv = f"""\
    id,name,profile,tags
    {SHEET_B},B,stock,x
    https://docs.google.com/spreadsheets/d/{SHEET_C}/edit,C,stock
    {SHEET_A},A,nope
    """
    message = error_of(folder, 'sheets_file = "sheets.csv"\n' + FULL.split("[[sheets]]")[0], csv)
    assert "sheets.csv:3: id: this is a URL, not a spreadsheet id" in message
    assert f'write only the id: "{SHEET_C}"' in message
    assert "sheets.csv:4: profile: unknown profile 'nope'" in message


def test_csv_header_must_name_known_columns(folder: Path) -> None:
    message = error_of(folder, 'sheets_file = "sheets.csv"\n' + MINIMAL, "id,nmae,profile\n")
    assert "sheets.csv:1: nmae: unknown column 'nmae'" in message and "did you mean 'name'" in message


def test_missing_sheets_file_is_reported(folder: Path) -> None:
    message = error_of(folder, 'sheets_file = "missing.csv"\n' + MINIMAL)
    assert "monitor.toml:1: sheets_file: sheets file" in message and "not found" in message


def test_sheets_file_written_after_a_sheets_table_gets_a_hint(folder: Path) -> None:
    message = error_of(folder, MINIMAL + 'sheets_file = "sheets.csv"\n')
    assert "monitor.toml:7: sheets[0].sheets_file: sheets_file ended up inside" in message
    assert "move sheets_file" in message
    message = error_of(folder, MINIMAL.replace('credentials = ["secrets/sa-1.json"]',
                                               'credentials = ["secrets/sa-1.json"]\nsheets_file = "x"'))
    assert "monitor.toml:3: google.sheets_file: 'sheets_file' ended up inside this section" in message
    assert "before the first [section]" in message


def test_sheet_without_checks_and_duplicate_check_names(folder: Path) -> None:
    text = MINIMAL + f"""
[[sheets]]
id = "{SHEET_B}"

[[sheets]]
id = "{SHEET_C}"
checks = [{{ kind = "not_empty", range = "A!A:A" }}, {{ kind = "not_empty", range = "A!A:A" }}]
"""
    message = error_of(folder, text)
    assert f"monitor.toml:9: sheets[1].id: spreadsheet '{SHEET_B}' has no checks" in message
    assert "both named 'not_empty A!A:A'" in message and 'distinct name = "..."' in message


def test_missing_credentials_file_and_wrong_json_never_echo_key_material(
        folder: Path, pem_key: str) -> None:
    (folder / "secrets/sa-2.json").write_text(json.dumps(
        {"type": "authorized_user", "private_key": pem_key, "refresh_token": "r-secret"}))
    (folder / "secrets/broken.json").write_text('{"private_key": "' + pem_key[:60])
    text = MINIMAL.replace('["secrets/sa-1.json"]',
                           '[\n  "secrets/nope.json",\n  "secrets/sa-2.json",\n'
                           '  "secrets/broken.json",\n]')
    message = error_of(folder, text)
    assert "monitor.toml:3: google.credentials[0]: credentials file" in message
    assert "nope.json not found" in message and "relative paths are resolved" in message
    assert "monitor.toml:4: google.credentials[1]:" in message
    assert "a 'authorized_user' credential, not a service-account key" in message
    assert "monitor.toml:5: google.credentials[2]:" in message and "is not valid JSON" in message
    assert "Service accounts > Keys > Add key > JSON" in message
    assert "PRIVATE KEY" not in message and "r-secret" not in message


def test_the_same_service_account_twice_is_an_error(folder: Path) -> None:
    text = MINIMAL.replace('["secrets/sa-1.json"]', '["secrets/sa-1.json", "secrets/sa-1.json"]')
    assert "is the same service account as credentials[0]" in error_of(folder, text)


def test_read_only_commands_may_load_without_secrets(folder: Path) -> None:
    text = FULL.replace("secrets/sa-2.json", "secrets/missing.json")
    config = load(folder, text, env={}, require_secrets=False)
    assert not config.telegram.enabled and config.telegram.chat_id == "-1001234567890"
    config = load(folder, text, env={"TELEGRAM_BOT_TOKEN_FILE": str(folder / "absent")},
                  require_secrets=False)
    assert config.telegram.bot_token is None


def test_chat_id_without_token_is_an_error_naming_the_variable(folder: Path) -> None:
    message = error_of(folder, FULL, env={})
    assert "monitor.toml:19: telegram.chat_id: chat_id is set but neither TELEGRAM_BOT_TOKEN" in message
    assert "cron does not read your shell profile" in message


def test_token_without_chat_id_is_an_error_that_never_shows_the_token(folder: Path) -> None:
    message = error_of(folder, FULL.replace('chat_id = "-1001234567890"', ""))
    assert "telegram.chat_id: TELEGRAM_BOT_TOKEN is set but there is no chat" in message


def test_token_is_read_from_a_file_and_never_appears_in_repr(folder: Path) -> None:
    token_file = folder / "token"
    token_file.write_text(TOKEN + "\n")
    config = load(folder, FULL, env={"TELEGRAM_BOT_TOKEN_FILE": str(token_file)})
    assert config.telegram.bot_token.get_secret_value() == TOKEN
    for text in (repr(config), str(config), repr(config.telegram), config.model_dump_json()):
        assert TOKEN not in text


def test_token_problems_in_the_environment_are_reported(folder: Path) -> None:
    message = error_of(folder, FULL, env={"TELEGRAM_BOT_TOKEN": TOKEN,
                                          "TELEGRAM_BOT_TOKEN_FILE": "/x"})
    assert "environment: TELEGRAM_BOT_TOKEN_FILE: both TELEGRAM_BOT_TOKEN and" in message
    message = error_of(folder, FULL, env={"TELEGRAM_BOT_TOKEN_FILE": str(folder / "none")})
    assert "cannot read the token file" in message


def test_a_token_written_in_the_file_is_refused_without_echo(folder: Path) -> None:
    message = error_of(folder, FULL.replace("message_thread_id = 42",
                                            f'message_thread_id = 42\nbot_token = "{TOKEN}"'))
    assert "monitor.toml:21: telegram.bot_token: secrets never live in the config file" in message


def test_a_token_pasted_into_chat_id_or_api_base_is_not_repeated(folder: Path) -> None:
    pasted = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    message = error_of(folder, FULL.replace('"-1001234567890"', f'"{pasted}"')
                       .replace('"http://127.0.0.1:8932"', f'"https://api.telegram.org/bot{pasted}"'))
    assert "telegram.chat_id: chat_id holds what looks like the bot token" in message
    assert "telegram.api_base: api_base contains what looks like the bot token" in message
    assert pasted not in message


def test_bad_timezone_digest_time_and_summary(folder: Path) -> None:
    message = error_of(folder, FULL.replace("Europe/Moscow", "Moscow")
                       .replace('"08:30"', '"8.30am"').replace('"every_round"', '"always"'))
    assert "monitor.toml:26: alerts.timezone: unknown time zone 'Moscow'" in message
    assert 'IANA zone name such as "Europe/Moscow"' in message
    assert "monitor.toml:25: alerts.digest_at: bad time of day '8.30am'" in message
    assert "monitor.toml:24: alerts.summary: 'always' is not allowed" in message
    assert "'on_change' or 'every_round'" in message


def test_toml_syntax_error_keeps_line_and_column(folder: Path) -> None:
    message = error_of(folder, FULL.replace('budget = "4m30s"', "budget = 4m30s"))
    assert "monitor.toml:2:" in message and "TOML syntax error" in message


def test_all_errors_are_reported_together(folder: Path) -> None:
    message = error_of(folder, FULL.replace('"15m"', '"soon"').replace('"stock"\ntags', '"x"\ntags')
                       .replace("failure_threshold = 4", "failure_threshold = 0"))
    assert message.startswith("configuration errors (3):")
    lines = [int(line.split(":")[1]) for line in message.splitlines()[1::2]]
    assert lines == sorted(lines)
    assert "breaker.failure_threshold: input should be greater than 0 (got 0)" in message


def test_missing_config_file_says_how_to_point_at_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="SHEET_MONITOR_CONFIG"):
        load_config(tmp_path / "absent.toml", {})


# ---------------------------------------------------------------------------------------- durations


@pytest.mark.parametrize(("text", "expected"), [
    ("90s", timedelta(seconds=90)), ("15m", timedelta(minutes=15)), ("2h", timedelta(hours=2)),
    ("1d", timedelta(days=1)), ("1h30m", timedelta(minutes=90)),
])
def test_durations_parse_and_print_back(text: str, expected: timedelta) -> None:
    assert parse_positive_duration(text) == expected
    assert parse_positive_duration(format_duration(expected)) == expected


@pytest.mark.parametrize("bad", ["", "15", "0s", "5 minutes", 15, True, None])
def test_bad_durations_name_the_accepted_forms(bad: object) -> None:
    with pytest.raises(InvalidValue) as info:
        parse_positive_duration(bad)
    assert '"90s"' in info.value.fix


def test_docs_list_every_key_with_its_default() -> None:
    docs = (Path(__file__).parents[1] / "docs/configuration.md").read_text()
    for key, default in DEFAULTS.items():
        section, leaf = key.split(".")
        assert f"## `[{section}]" in docs, section
        value = default.value
        shown = "" if value is None else json.dumps(value)
        assert f"| `{leaf}` | `{shown}` |" in docs or (value is None and f"| `{leaf}` |" in docs), key


def test_a_config_without_a_google_table_says_credentials_are_missing(tmp_path):
    path = tmp_path / "monitor.toml"
    path.write_text('[run]\nbudget = "4m"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path, {})
    assert "no service-account credentials configured" in str(caught.value)
    assert "must be a list" not in str(caught.value)
