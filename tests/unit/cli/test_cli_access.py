"""`check-config --access`: Drive asked once per spreadsheet and folder (files.get with a field mask,
Drive's quota, not Sheets'), and every one the credentials cannot open listed with the account to
share it with and the command to recheck; real gspread against the sandbox."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cli_fixtures import invoke, json_of, sheet_id, write_config

from monitor.core.clock import ManualClock
from sheet_sandbox.model import XLSX_MIME
from sheet_sandbox.server import running_sandbox

FOLDER = "1accessFolder".ljust(33, "f")
SHARED, UNSHARED, MISSING, EXCEL = sheet_id(21), sheet_id(22), sheet_id(23), sheet_id(24)


@pytest.fixture
def site(tmp_path):
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as sandbox:
        store = sandbox.google.store
        for sid in (SHARED, UNSHARED):
            store.put_control(sid, {"title": "S", "tabs": {"Stock": [["a"]]}})
        store.put_control(EXCEL, {"title": "Upload", "tabs": {"Stock": [["a"]]}, "mimeType": XLSX_MIME})
        store.put_control(FOLDER, {"title": "Stores", "mimeType": "application/vnd.google-apps.folder"})
        sandbox.google.faults.add({"spreadsheet": UNSHARED, "statuses": [403], "repeat": True})
        [key] = sandbox.write_credentials(tmp_path / "secrets", 1)
        extra = f'\n[[folders]]\nid = "{FOLDER}"\nprofile = "stock"\n'
        path = write_config(tmp_path / "site", (SHARED, UNSHARED, MISSING, EXCEL), [key], sandbox.base_url,
                            extra)
        yield sandbox, path


def test_every_file_the_credentials_cannot_open_is_listed_with_whom_to_share_it(site):
    sandbox, path = site
    sandbox.google.stats.reset()
    result = invoke(path, "check-config", "--access")
    assert result.exit_code == 2, result.output
    out = result.output
    listed = out[out.index("Cannot open"):]
    assert "Cannot open (3 of 5 asked)" in listed
    assert "share with " in listed and ".iam.gserviceaccount.com" in listed
    assert f"Store 2 ({UNSHARED})" in listed and "not shared with the account" in listed
    assert f"Store 3 ({MISSING})" in listed
    assert f"Store 4 ({EXCEL})" in listed and "not a Google Sheets spreadsheet" in listed
    assert "Store 1 (" not in listed and "Stores" not in listed
    assert "then recheck: sheet-monitor check-config --access" in listed
    assert "problem  spreadsheet access: 3 files the credentials cannot open" in out
    by_endpoint = sandbox.google.stats.snapshot()["by_endpoint"]
    assert by_endpoint["GET /drive/v3/files/{fileId}"] == 5  # once each: four spreadsheets, a folder
    assert not any(endpoint.startswith("GET /v4/") for endpoint in by_endpoint)  # no Sheets read


def all_open(sandbox) -> None:
    sandbox.google.faults.clear(UNSHARED)
    sandbox.google.store.put_control(MISSING, {"title": "S", "tabs": {"Stock": [["a"]]}})
    sandbox.google.store.put_control(EXCEL, {"title": "Now a sheet", "tabs": {"Stock": [["a"]]}})


def test_all_open_is_ready_and_json_says_what_was_asked(site):
    sandbox, path = site
    all_open(sandbox)
    result = invoke(path, "check-config", "--access", "--json")
    assert result.exit_code == 0, result.output
    access = json_of(result)["access"]
    assert access["asked"] == 5 and access["cannot_open"] == [] and access["requests"] == 5


def test_no_answer_from_drive_is_not_called_unshared(site, monkeypatch):
    monkeypatch.setattr("monitor.app.access.RETRY_AFTER_SECONDS", 0.01)  # the pause before asking again
    sandbox, path = site
    all_open(sandbox)
    sandbox.google.faults.add({"spreadsheet": SHARED, "statuses": [503], "repeat": True})
    result = invoke(path, "check-config", "--access", "--json")
    access = json_of(result)["access"]
    [unanswered] = [entry for entry in access["cannot_open"] if entry["id"] == SHARED]
    assert unanswered["answered"] is False and "no answer" in unanswered["problem"]
    assert access["requests"] == 6  # asked again once
    assert result.exit_code == 1  # Google's or the network's, not the config's


def test_access_cannot_go_offline(site):
    _, path = site
    result = invoke(path, "check-config", "--access", "--offline")
    assert result.exit_code == 2 and "leave out --offline" in result.output
