"""`suggest FOLDER_URL`: a Drive folder's spreadsheets listed and read with real gspread against the
sandbox over HTTP, before any config exists (`--credentials`, `--endpoint`); the folders it cannot
propose for exit 2, saying what to do."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from monitor.cli.main import cli
from monitor.config import load_config
from monitor.core.clock import ManualClock
from sheet_sandbox import dataset
from sheet_sandbox.cli import folder_url
from sheet_sandbox.server import running_sandbox


@pytest.fixture
def drive(tmp_path):
    """(sandbox, key, folder id, dataset): six generated stores and the catalogue filed in "Stores"."""
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth: real time
    data, [folder] = dataset.filed(dataset.generate(7, seed=3, now=clock.now()))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        dataset.apply(data, sandbox.google)
        [key] = sandbox.write_credentials(tmp_path / "secrets", 1)
        yield sandbox, key, folder, data


def suggest(sandbox, key, *args: str):
    return CliRunner().invoke(cli, ["suggest", *args, "--credentials", str(key),
                                    "--endpoint", sandbox.base_url], catch_exceptions=False)


def test_a_folder_gets_its_table_and_its_most_spreadsheets_profile_which_init_takes(drive, tmp_path):
    sandbox, key, folder, data = drive
    result = suggest(sandbox, key, folder_url(folder))
    assert result.exit_code == 0, result.stderr
    written = tomllib.loads(result.stdout)
    [table] = written["folders"]
    assert table == {"id": folder, "name": "Stores", "profile": "suggested"}
    [catalogue] = data.of_kind("catalogue")
    assert [(sheet["id"], sheet["profile"]) for sheet in written["sheets"]] == [(catalogue.id, "suggested_2")]
    kinds = {check["kind"] for check in written["profiles"]["suggested"]["checks"]}
    assert "cross_sheet" not in kinds and "headers" in kinds  # a folder's profile cannot hold one
    assert "left out, as a folder's profile cannot compare" in result.stdout
    assert "Drive listed 1 folder" in result.stderr and "sheet-monitor init --suggested" in result.stderr

    (tmp_path / "suggested.toml").write_text(result.stdout)
    done = CliRunner().invoke(cli, ["init", "--dir", str(tmp_path), "--endpoint", sandbox.base_url,
                                    "--suggested", str(tmp_path / "suggested.toml")])
    assert done.exit_code == 0, done.output
    config = load_config(tmp_path / "monitor.toml", {})
    assert [f.id for f in config.folders] == [folder] and [s.id for s in config.sheets] == [catalogue.id]


def test_a_folder_the_key_cannot_see_exits_2_naming_the_account_to_share_it_with(drive):
    sandbox, key, _, _ = drive
    result = suggest(sandbox, key, folder_url("1unsharedFolder".ljust(33, "x")))
    assert result.exit_code == 2
    assert "no such folder" in result.stderr and "share it with monitor-1@" in result.stderr
    assert sandbox.google.stats.snapshot()["by_endpoint"].get("GET /v4/spreadsheets/{id}", 0) == 0


def test_a_file_that_is_not_a_folder_exits_2(drive):
    sandbox, key, _, data = drive
    store = data.healthy()[0]
    result = suggest(sandbox, key, f"https://drive.google.com/open?id={store.id}")
    assert result.exit_code == 2
    assert "is not a folder" in result.stderr


def test_a_folder_with_no_spreadsheet_exits_2_and_names_it(drive):
    sandbox, key, _, _ = drive
    empty = "1emptyFolder".ljust(33, "e")
    folder = {"title": "Archive", "mimeType": "application/vnd.google-apps.folder"}
    sandbox.google.store.put_control(empty, folder)
    result = suggest(sandbox, key, folder_url(empty))
    assert result.exit_code == 2
    assert "the folder 'Archive' holds no Google Sheets" in result.stderr and "--recursive" in result.stderr


def test_a_spreadsheet_url_given_as_a_folder_and_an_endpoint_without_keys_exit_2(drive, tmp_path):
    sandbox, key, _, _ = drive
    result = suggest(sandbox, key, "https://drive.google.com/drive/folders/")
    assert result.exit_code == 2 and "folder" in result.stderr
    alone = CliRunner().invoke(cli, ["suggest", folder_url("1x" * 17), "--endpoint", sandbox.base_url])
    assert alone.exit_code == 2 and "--endpoint goes with --credentials" in alone.stderr
