"""`sheet-monitor init` (monitor.app.starter): a starter config check-config takes, the cron lines and
the systemd units for this machine's paths, the units docs/operations.md shows, and no file replaced
without --force."""

from __future__ import annotations

import re
import stat
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from config_fixtures import SHEET_A, SHEET_B, secrets_folder
from paths import DOCS

from monitor.app.starter import StarterError, starter_files, starter_for, this_machine, write_starter
from monitor.app.starter_texts import Place, Starter, config_text, cron_text, systemd_units
from monitor.cli.main import cli
from monitor.config import ConfigError, load_config
from monitor.config.schema import config_schema

URL = f"https://docs.google.com/spreadsheets/d/{SHEET_A}/edit#gid=0"
HOME = Path("/home/sheetmon/sheet-monitor")
DOCS_PLACE = Place(folder=HOME, bin=HOME / ".venv" / "bin", user="sheetmon")


def init(*args: str):
    return CliRunner().invoke(cli, ["init", *args])


def test_the_starter_config_loads_with_its_keys_in_place_and_its_spreadsheets(tmp_path):
    secrets_folder(tmp_path)
    result = init("--dir", str(tmp_path), "--sheet", URL, "--sheet", SHEET_B)
    assert result.exit_code == 0, result.output
    config = load_config(tmp_path / "monitor.toml", {})
    assert [sheet.id for sheet in config.sheets] == [SHEET_A, SHEET_B]
    assert config.google.credentials == (tmp_path / "secrets" / "sa-1.json",)
    assert config.run.state_dir == tmp_path / "state"
    assert [check.kind for check in config.sheets[0].checks] == ["freshness"]


def test_without_spreadsheets_the_one_thing_check_config_asks_for_is_a_spreadsheet(tmp_path):
    secrets_folder(tmp_path)
    assert init("--dir", str(tmp_path)).exit_code == 0
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path / "monitor.toml", {})
    assert len(refused.value.issues) == 1
    assert "no spreadsheets are configured" in str(refused.value)


def test_the_starter_config_passes_its_schema_and_names_it_for_editors():
    for starter in (Starter(), Starter(sheets=(SHEET_A,), credentials=("/keys/a.json", "b.json"),
                                       chat_id="-1001234567890")):
        text = config_text(starter)
        assert text.startswith("#:schema ./monitor.schema.json\n")
        assert list(jsonschema.Draft202012Validator(config_schema()).iter_errors(tomllib.loads(text))) == []


def test_a_chat_id_is_configured_and_the_token_file_named_for_cron_and_systemd(tmp_path):
    place = this_machine(tmp_path)
    files = starter_files(place, starter_for(place, [SHEET_A], [], "-1001234567890"))
    assert tomllib.loads(files[place.config][0])["telegram"]["chat_id"] == "-1001234567890"
    assert f"\nTELEGRAM_BOT_TOKEN_FILE={tmp_path / 'secrets' / 'telegram-token'}\n" in files[
        tmp_path / "sheet-monitor.cron"][0]
    run = files[tmp_path / "systemd" / "sheet-monitor-run.service"][0]
    assert f"LoadCredential=telegram-token:{tmp_path / 'secrets' / 'telegram-token'}\n" in run
    without = starter_files(place, starter_for(place, [SHEET_A], [], None))
    assert "LoadCredential" not in without[tmp_path / "systemd" / "sheet-monitor-run.service"][0]
    assert "\n# TELEGRAM_BOT_TOKEN_FILE=" in without[tmp_path / "sheet-monitor.cron"][0]


def test_key_files_inside_the_folder_are_written_relative_to_it_others_absolute(tmp_path):
    place = this_machine(tmp_path)
    starter = starter_for(place, [], [tmp_path / "keys" / "a.json", Path("/etc/keys/b.json")], None)
    assert starter.credentials == ("keys/a.json", "/etc/keys/b.json")


@pytest.mark.parametrize("given", ["not an id!", "https://docs.google.com/spreadsheets/d/e/2PACX/pubhtml"])
def test_a_spreadsheet_that_is_neither_an_id_nor_its_url_is_refused(tmp_path, given):
    result = init("--dir", str(tmp_path), "--sheet", given)
    assert result.exit_code == 2
    assert f"--sheet {given!r}" in result.output
    assert not (tmp_path / "monitor.toml").exists()


# -- this machine's paths


def test_the_cron_lines_run_this_installation_every_5_minutes_and_the_watchdog_every_15(tmp_path):
    place = this_machine(tmp_path)
    text = cron_text(place, telegram=False)
    lines = [line for line in text.splitlines() if line and line[0] in "*0123456789"]
    assert lines == [
        f"*/5 * * * * {place.bin}/sheet-monitor run >> {tmp_path}/logs/run.log 2>&1",
        f"2-59/15 * * * * {place.bin}/sheet-watchdog 2>> {tmp_path}/logs/watchdog.log",
    ]
    assert f"\nSHEET_MONITOR_CONFIG={tmp_path}/monitor.toml\n" in text


def test_the_executables_are_those_of_the_running_installation(tmp_path):
    script = tmp_path / "venv" / "bin" / "sheet-monitor"
    script.parent.mkdir(parents=True)
    script.touch()
    assert this_machine(tmp_path, argv0=str(script)).bin == script.parent
    # Not started through its console script (python -m monitor.cli, a test): this interpreter's.
    fallback = this_machine(tmp_path, argv0=sys.argv[0]).bin
    assert (fallback / "sheet-monitor").exists() and (fallback / "sheet-watchdog").exists()


def test_a_folder_cron_or_systemd_would_misread_is_refused(tmp_path):
    for name in ("with space", "100%"):
        with pytest.raises(StarterError, match="cron and systemd read as syntax"):
            this_machine(tmp_path / name)


def test_the_units_are_those_docs_operations_shows():
    docs = (DOCS / "operations.md").read_text(encoding="utf-8")
    for name, text in systemd_units(DOCS_PLACE, telegram=True).items():
        shown = re.search(rf"`{re.escape(name)}`:\n\n```ini\n(.*?)```", docs, re.S)
        assert shown is not None, f"docs/operations.md shows no {name}"
        assert shown.group(1) == text, name


# -- writing


def test_nothing_is_replaced_without_force_and_nothing_written_then(tmp_path):
    assert init("--dir", str(tmp_path), "--sheet", SHEET_A).exit_code == 0
    (tmp_path / "monitor.toml").write_text("# mine\n")
    (tmp_path / "systemd" / "sheet-watchdog.timer").unlink()
    result = init("--dir", str(tmp_path), "--sheet", SHEET_B)
    assert result.exit_code == 2
    assert f"{tmp_path / 'monitor.toml'} and 5 other files init writes already exist" in result.output
    assert "--force" in result.output
    assert (tmp_path / "monitor.toml").read_text() == "# mine\n"
    assert not (tmp_path / "systemd" / "sheet-watchdog.timer").exists()
    assert init("--dir", str(tmp_path), "--sheet", SHEET_B, "--force").exit_code == 0
    assert SHEET_B in (tmp_path / "monitor.toml").read_text()
    assert (tmp_path / "systemd" / "sheet-watchdog.timer").exists()


def test_what_it_writes_and_makes_and_their_modes(tmp_path):
    place = this_machine(tmp_path / "site")
    written = write_starter(place, starter_files(place, Starter()), force=False)
    assert sorted(path.relative_to(place.folder).as_posix() for path in written.files) == [
        "monitor.schema.json", "monitor.toml", "sheet-monitor.cron", "systemd/sheet-monitor-run.service",
        "systemd/sheet-monitor-run.timer", "systemd/sheet-watchdog.service", "systemd/sheet-watchdog.timer"]
    assert written.folders == (place.folder / "secrets", place.logs)
    assert stat.S_IMODE((place.folder / "monitor.toml").stat().st_mode) == 0o600  # it names spreadsheets
    assert stat.S_IMODE(place.logs.stat().st_mode) == 0o700
    assert stat.S_IMODE((place.folder / "secrets").stat().st_mode) == 0o700


def test_its_output_lists_the_files_and_the_next_steps(tmp_path):
    result = init("--dir", str(tmp_path))
    assert f"wrote {tmp_path / 'monitor.toml'}" in result.output
    assert f"put the service account's JSON key in {tmp_path / 'secrets' / 'sa-1.json'}" in result.output
    assert "list your spreadsheets" in result.output
    assert f"sheet-monitor check-config --config {tmp_path / 'monitor.toml'}" in result.output


FOLDER = "1storesFolder0000001fffffffffffff"
FOLDER_URL = f"https://drive.google.com/drive/folders/{FOLDER}"
SUGGESTED = f"""\
# Suggested by `sheet-monitor suggest`
[profiles.stock]
checks = [
  {{ kind = "formula_errors", range = "Stock!A1:H" }},
]

[profiles.stock_2]
checks = [
  {{ kind = "not_empty", range = "Catalogue!A2:D" }},
]

[[folders]]
id = "{FOLDER}"
name = "Stores"
profile = "stock"

[[sheets]]
id = "{SHEET_B}"
name = "Catalogue"
profile = "stock_2"
"""


def test_a_folder_is_written_with_the_profile_given_and_check_config_access_is_the_next_step(tmp_path):
    secrets_folder(tmp_path)
    result = init("--dir", str(tmp_path), "--folder", FOLDER_URL, "--profile", "stores")
    assert result.exit_code == 0, result.output
    config = load_config(tmp_path / "monitor.toml", {})
    [folder] = config.folders
    assert folder.id == FOLDER and folder.profile.name == "stores" and config.sheets == ()
    assert f"sheet-monitor check-config --access --config {tmp_path / 'monitor.toml'}" in result.output
    assert "put the service account's JSON key" not in result.output  # it is there already
    assert "list your spreadsheets" not in result.output  # the folder's are


def test_a_suggestion_is_written_whole_with_the_sandbox_endpoint_and_loads(tmp_path):
    secrets_folder(tmp_path)
    (tmp_path / "suggested.toml").write_text(SUGGESTED)
    result = init("--dir", str(tmp_path), "--suggested", str(tmp_path / "suggested.toml"),
                  "--endpoint", "http://127.0.0.1:8790", "--sheet", SHEET_A)
    assert result.exit_code == 0, result.output
    config = load_config(tmp_path / "monitor.toml", {})
    assert str(config.google.api_endpoint).rstrip("/") == "http://127.0.0.1:8790"
    assert [folder.profile.name for folder in config.folders] == ["stock"]
    assert {sheet.id: sheet.checks[0].kind for sheet in config.sheets} == {
        SHEET_A: "formula_errors", SHEET_B: "not_empty"}  # --sheet takes the suggestion's first profile
    assert "starter" not in config.profiles


@pytest.mark.parametrize(("args", "says"), [
    (("--folder", URL), "--folder"),  # a spreadsheet's URL
    (("--endpoint", "127.0.0.1:8790"), "not an http(s) address"),
    (("--suggested", "{dir}/missing.toml"), "cannot be read"),
    (("--suggested", "{dir}/not.toml"), "not TOML"),
    (("--suggested", "{dir}/google.toml"), "holds no [profiles.NAME]"),
    (("--suggested", "{dir}/suggested.toml", "--profile", "other"), "'other' is not in"),
    (("--suggested", "{dir}/suggested.toml", "--folder", FOLDER), "already"),
])
def test_what_init_cannot_use_exits_2_saying_which_option(tmp_path, args, says):
    (tmp_path / "suggested.toml").write_text(SUGGESTED)
    (tmp_path / "not.toml").write_text("[profiles\n")
    (tmp_path / "google.toml").write_text('[google]\ncredentials = ["a.json"]\n')
    result = init("--dir", str(tmp_path), *(arg.format(dir=tmp_path) for arg in args))
    assert result.exit_code == 2
    assert says in result.output
    assert not (tmp_path / "monitor.toml").exists()
