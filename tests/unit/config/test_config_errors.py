"""The config loader: every kind of mistake in the TOML or the CSV reported with place and fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from config_fixtures import FULL, MINIMAL, SHEET_A, SHEET_B, SHEET_C, error_of, secrets_folder

from monitor.config import ConfigError, load_config


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


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
                       .replace('aggregate = "min", ', 'aggregate = "mean", ')
                       .replace('source = "modified_time", ', 'source = "modified_time", '
                                'range = "Sales!A:A", '))
    assert "profiles.sales.checks[0]: min (9) is greater than max (5)" in message
    assert "profiles.stock.checks[2].aggregate: 'mean' is not allowed" in message
    assert "'min', 'max', 'sum', 'count', 'value', 'avg', 'distinct' or 'percentile'" in message
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

def test_bad_timezone_digest_time_and_summary(folder: Path) -> None:
    message = error_of(folder, FULL.replace("Europe/Moscow", "Moscow")
                       .replace('"08:30"', '"8.30am"').replace('"every_round"', '"always"'))
    assert "monitor.toml:26: alerts.timezone: unknown time zone 'Moscow'" in message
    assert 'IANA zone name such as "Europe/Moscow"' in message
    assert "monitor.toml:25: alerts.digest_at: bad time of day '8.30am'" in message
    assert "monitor.toml:24: alerts.summary: 'always' is not allowed" in message
    assert "'on_change', 'every_round' or 'off'" in message


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


def test_how_often_a_profile_is_read_is_checked_where_it_is_written(tmp_path):
    path = tmp_path / "monitor.toml"
    path.write_text("\n".join([
        "[run]", 'max_age = "90"', 'change_detection = "yes"', "",
        "[profiles.p]", "alwys_read = true", 'checks = [{ kind = "not_empty", range = "A!A1:A" }]', "",
        "[profiles.q]", 'max_age = "0s"', "always_read = 1",
        'checks = [{ kind = "not_empty", range = "A!A1:A" }]', "",
        "[[sheets]]", 'id = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgVE2upms"', 'profile = "p"', "",
    ]))
    with pytest.raises(ConfigError) as caught:
        load_config(path, {}, require_secrets=False)
    message = str(caught.value)
    assert "monitor.toml:2: run.max_age: bad duration '90'" in message
    assert "monitor.toml:3: run.change_detection: input should be a valid boolean (got 'yes')" in message
    assert "monitor.toml:6: profiles.p.alwys_read: unknown key 'alwys_read'" in message
    assert "did you mean 'always_read'?" in message
    assert "monitor.toml:10: profiles.q.max_age: duration '0s' is zero" in message
    assert "monitor.toml:11: profiles.q.always_read" in message and "write true or false" in message
