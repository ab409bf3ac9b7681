"""The config loader: a full valid file resolved, defaults, fingerprints, durations, the docs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pydantic
import pytest
from config_fixtures import FULL, MINIMAL, SHEET_A, SHEET_B, SHEET_C, TOKEN, load, secrets_folder
from paths import REPO

from monitor.checks import FreshnessCheck, ThresholdCheck, evaluate_all, ranges_of
from monitor.config import DEFAULTS, checks_fingerprint, resolve_config_path
from monitor.core.durations import format_duration, parse_positive_duration
from monitor.core.invalid_value import InvalidValue
from monitor.engine.inspect import plans_of
from monitor.engine.settings import RunSettings


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


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

    assert config.run.budget == timedelta(minutes=4, seconds=30)
    assert config.run.round_interval == timedelta(minutes=5)
    assert config.google.read_requests_per_minute == DEFAULTS["google.read_requests_per_minute"].value
    assert config.google.request_timeout == timedelta(seconds=30)
    assert config.breaker.failure_threshold == 3
    assert config.alerts.summary == "on_change" and config.alerts.timezone == "UTC"
    assert config.watchdog.max_silence == timedelta(minutes=15)
    assert config.sheets[0].name == SHEET_A  # no name: the id stands in
    assert not config.telegram.enabled
    assert not any("budget" in w for w in config.warnings)  # the default fits the 5-minute cron line
    assert any("printed" in w for w in config.warnings)
    unused = load(folder, MINIMAL + '\n[profiles.spare]\nchecks = [{ kind = "not_empty", '
                                     'range = "A!A:A" }]\n', env={})
    assert "profiles not used by any spreadsheet or folder: spare" in unused.warnings


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
    docs = (REPO / "docs/configuration.md").read_text()
    for key, default in DEFAULTS.items():
        section, leaf = key.split(".")
        assert f"## `[{section}]" in docs, section
        value = default.value
        shown = "" if value is None else json.dumps(value)
        assert f"| `{leaf}` | `{shown}` |" in docs or (value is None and f"| `{leaf}` |" in docs), key


def test_a_profile_says_how_often_its_spreadsheets_are_read_and_the_run_section_for_the_rest(
        folder: Path) -> None:
    text = MINIMAL.replace("[google]", '[run]\nmax_age = "3h"\n\n[google]') + f"""
[profiles.prices]
always_read = true
max_age = "20m"
checks = [{{ kind = "not_empty", range = "Prices!A2:A" }}]

[profiles.archive]
checks = [{{ kind = "not_empty", range = "Old!A2:A" }}]

[[sheets]]
id = "{SHEET_B}"
profile = "prices"

[[sheets]]
id = "{SHEET_C}"
profile = "archive"
"""
    config = load(folder, text, env={})
    plans = {plan.id: plan for plan in plans_of(config)}
    assert (plans[SHEET_A].max_age, plans[SHEET_A].always_read) == (timedelta(hours=3), False)
    assert (plans[SHEET_B].max_age, plans[SHEET_B].always_read) == (timedelta(minutes=20), True)
    assert (plans[SHEET_C].max_age, plans[SHEET_C].always_read) == (timedelta(hours=3), False)
    assert config.run.change_detection is True
    assert plans[SHEET_B].fingerprint == config.sheets_by_id[SHEET_B].fingerprint


def test_suspects_wait_five_seconds_into_a_run_unless_the_config_says_otherwise(folder: Path) -> None:
    assert RunSettings.from_config(load(folder, MINIMAL, env={})).suspects_after == 5.0
    shorter = load(folder, '[run]\nsuspects_after = "1s"\n\n' + MINIMAL, env={})
    assert RunSettings.from_config(shorter).suspects_after == 1.0
