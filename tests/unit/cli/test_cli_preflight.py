"""check-config's checks of the machine, through the real CLI: the state folder can be written, the run
lock taken, every key loads and signs, and (unless --offline) Google's token service, the sandbox
here, issues a token for it. Each check is one line, ok or a problem with its fix; a key's problem
exits 2 (the config's files), a state folder's exits 1 (the machine)."""

from __future__ import annotations

import errno
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import A, invoke, json_of, write_config
from failing_disk import fail_writes_under
from key_files import damaged_key, unknown_account

from monitor.core.clock import ManualClock
from sheet_sandbox.server import running_sandbox


@pytest.fixture(scope="module")
def sandbox():
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as served:
        yield served


@pytest.fixture
def keys(sandbox, tmp_path) -> list[Path]:
    return sandbox.write_credentials(tmp_path / "secrets", 2)


def config_with(folder: Path, sandbox, credentials: list[Path]) -> Path:
    return write_config(folder, credentials=credentials, endpoint=sandbox.base_url)


def lines_of(result, word: str) -> list[str]:
    return [line.strip() for line in result.stdout.splitlines() if line.strip().startswith(word)]


def test_every_check_passes_with_good_keys_and_google_issues_each_a_token(sandbox, keys, tmp_path):
    config = config_with(tmp_path / "site", sandbox, keys)
    before = sandbox.google.auth.tokens_issued()
    result = invoke(config, "check-config")
    assert result.exit_code == 0, result.output
    assert sandbox.google.auth.tokens_issued() == before + 2
    ok = lines_of(result, "ok")
    assert any(line.startswith("ok       state folder:") and "can be written by user" in line for line in ok)
    assert any(line.startswith("ok       run lock:") for line in ok)
    assert sum("the key loads and signs, and Google issued a token" in line for line in ok) == 2
    assert lines_of(result, "problem") == []
    assert result.stdout.rstrip().endswith("Ready: the config is valid and every check passed.")


def test_offline_loads_and_signs_every_key_without_asking_for_a_token(sandbox, keys, tmp_path):
    config = config_with(tmp_path / "site", sandbox, keys)
    before = sandbox.google.auth.tokens_issued()
    result = invoke(config, "check-config", "--offline")
    assert result.exit_code == 0 and sandbox.google.auth.tokens_issued() == before
    assert sum("the key loads and signs (token not asked: --offline)" in line
               for line in lines_of(result, "ok")) == 2


def test_a_damaged_private_key_is_a_problem_of_the_config_exit_2(sandbox, keys, tmp_path):
    damaged = damaged_key(tmp_path / "secrets", keys[0])
    config = config_with(tmp_path / "site", sandbox, [damaged, keys[1]])
    result = invoke(config, "check-config", "--offline")
    assert result.exit_code == 2
    [problem] = lines_of(result, "problem")
    assert problem.startswith(f"problem  credential {damaged}: its private_key does not load")
    assert any(line.startswith("fix: add a new JSON key") for line in lines_of(result, "fix:"))
    assert "PRIVATE KEY" not in result.output


def test_an_account_google_does_not_know_exits_2_naming_it(sandbox, keys, tmp_path):
    gone = unknown_account(tmp_path / "secrets", f"{sandbox.base_url}/token")
    config = config_with(tmp_path / "site", sandbox, [gone, keys[0]])
    result = invoke(config, "check-config", "--json")
    assert result.exit_code == 2
    checks = {check["name"]: check for check in json_of(result)["checks"]}
    refused = checks[f"credential {gone}"]
    assert not refused["ok"] and refused["usage"]
    assert "Google does not know this service account" in refused["detail"]
    assert "the account was deleted" in refused["fix"]
    assert checks[f"credential {keys[0]}"]["ok"]


def test_a_read_only_state_folder_is_a_problem_of_the_machine_exit_1(sandbox, keys, tmp_path, monkeypatch):
    config = config_with(tmp_path / "site", sandbox, keys)
    folder = tmp_path / "site" / "state"
    folder.mkdir()
    fail_writes_under(monkeypatch, folder, errno.EROFS)
    result = invoke(config, "check-config", "--offline")
    monkeypatch.undo()
    assert result.exit_code == 1
    problems = lines_of(result, "problem")
    assert problems[0] == f"problem  state folder: the state folder {folder} is on a read-only filesystem."
    assert any("mount -o remount,rw" in line for line in lines_of(result, "fix:"))
    assert any(line.startswith("problem  run lock:") for line in problems)
    assert result.stdout.rstrip().endswith(f"Not ready: {len(problems)} problems above.")


@pytest.mark.skipif(os.geteuid() == 0, reason="chmod does not bind root")
def test_a_state_folder_this_user_cannot_write_exit_1_with_chown(sandbox, keys, tmp_path):
    config = config_with(tmp_path / "site", sandbox, keys)
    folder = tmp_path / "site" / "state"
    folder.mkdir(mode=0o500)
    try:
        result = invoke(config, "check-config", "--offline")
    finally:
        folder.chmod(0o700)
    assert result.exit_code == 1
    assert f"the state folder {folder} is not writable by user" in result.stdout
    assert "chown" in result.stdout


def test_the_json_lists_every_check(sandbox, keys, tmp_path):
    config = config_with(tmp_path / "site", sandbox, keys)
    data = json_of(invoke(config, "check-config", "--offline", "--json"))
    assert [check["name"] for check in data["checks"]] == [
        "run budget", "state folder", "run lock", *(f"credential {key}" for key in keys)]
    assert all(check["ok"] for check in data["checks"])
    assert json.dumps(data).count("BEGIN") == 0


@pytest.mark.parametrize(("budget", "refused"), [("3s", True), ("4s", False)])
def test_a_budget_too_short_to_read_anything_is_refused_exit_2(sandbox, keys, tmp_path, budget, refused):
    # A run keeps 3 s to save and starts no read with less than 1 s left: in 3 s it reads nothing,
    # ever, and its round stays open; in 4 s it reads, a little.
    config = config_with(tmp_path / "site", sandbox, keys)
    config.write_text(config.read_text().replace('budget = "4m"', f'budget = "{budget}"'))
    result = invoke(config, "check-config", "--offline")
    problems = lines_of(result, "problem")
    if refused:
        assert result.exit_code == 2, result.output
        assert problems == [f"problem  run budget: run.budget ({budget}) leaves no time to read: a run "
                            "keeps 3s to save and needs 1s for a read at least"]
        assert "fix: set budget to 4s or more" in result.stdout
    else:
        assert result.exit_code == 0 and problems == [], result.output
        assert "leaves 1s for reading" in result.stdout  # a warning: reads are cut to 1 s


def test_a_run_given_a_budget_too_short_to_read_anything_is_a_usage_error(sandbox, keys, tmp_path):
    config = config_with(tmp_path / "site", sandbox, keys)
    result = invoke(config, "run", "--budget", "3")
    assert result.exit_code == 2
    assert "Invalid value for '--budget': 3.0 is not in the range x>=4.0" in result.output
    assert not (tmp_path / "site" / "state").exists()  # refused before anything was opened


def test_the_config_s_size_is_said_in_words_that_agree_with_its_numbers(sandbox, keys, tmp_path):
    config = write_config(tmp_path / "site", ids=(A,), credentials=keys, endpoint=sandbox.base_url)
    threshold = ('  { kind = "threshold", range = "Stock!C2:C20", aggregate = "min", '
                 'warn = "< 5", fail = "< 0" },\n')
    config.write_text(config.read_text().replace(threshold, ""))  # one check left, over one range
    result = invoke(config, "check-config", "--offline")
    assert result.exit_code == 0, result.output
    assert "spreadsheets 1 (1 check over 1 range)" in " ".join(result.stdout.split())
