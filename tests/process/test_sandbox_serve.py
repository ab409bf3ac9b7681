"""``sheet-monitor sandbox serve`` as an admin runs it: a real process, gspread, real tokens."""

from __future__ import annotations

import io
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import tomllib
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import gspread
import pytest
import requests
from click.testing import CliRunner
from paths import REPO

from monitor.app.run import run_once
from monitor.cli.main import cli
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.engine.heartbeat import RunOutcome
from monitor.google.client import build_gspread_client
from monitor.state import read_state
from sheet_sandbox import dataset as ds

ROOT = REPO
STARTUP_SECONDS = 20  # importing and generating take about a second; a slow CI box gets slack
# Stopping joins every server thread, each within its poll interval: well under a second idle, but
# it ran past 10 s twice on a machine the suite's other workers kept busy. What is tested is that
# it exits, and with 0, on its own.
EXIT_SECONDS = 30


@contextmanager
def served(*args: str, latency: tuple[str, ...] = ("--latency", "off")):
    """Run ``python -m monitor.cli sandbox serve ARGS``; yield (process, stdout lines so far).

    Latency is off unless ``latency`` gives other flags. Waits for the "serving" line, so every file
    the command writes exists when the block starts. Leaving the block sends SIGTERM and insists
    that the process exits 0 on its own.
    """
    command = [sys.executable, "-m", "monitor.cli", "sandbox", "serve", *latency, *args]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in process.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        while not seen or not seen[-1].startswith("serving"):
            line = lines.get(timeout=STARTUP_SECONDS)
            assert line is not None, f"serve exited early: {process.wait()} {process.stderr.read()}"
            seen.append(line)
        yield process, seen
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        reader.join(timeout=5)
    assert code == 0, process.stderr.read()


def test_serve_prints_its_url_first_and_gspread_reads_a_generated_sheet_with_issued_keys(tmp_path):
    creds, config_file = tmp_path / "creds", tmp_path / "conf" / "monitor.toml"
    with served("--generate", "50", "--seed", "7", "--write-credentials", str(creds),
                "--credentials", "3", "--write-config", str(config_file)) as (_, lines):
        base_url = lines[0]
        assert base_url.startswith("http://127.0.0.1:")
        expected = ds.generate(50, 7)  # ids and kinds do not depend on the time of generation
        healthy = expected.healthy()[0]
        removed = expected.of_kind("access_removed")[0]

        credential_files = sorted(creds.glob("sa-*.json"))
        assert [p.name for p in credential_files] == ["sa-1.json", "sa-2.json", "sa-3.json"]
        client = build_gspread_client(credential_files[1], endpoint=base_url, timeout=5)
        spreadsheet = client.open_by_key(healthy.id)  # google-auth's jwt-bearer flow runs first
        assert spreadsheet.title == healthy.title
        answer = spreadsheet.values_batch_get(["Stock!A1:H2"])
        assert answer["valueRanges"][0]["values"][0] == list(ds.STOCK_HEADER)
        with pytest.raises(PermissionError):  # gspread's answer to Google's 403
            client.open_by_key(removed.id)

        config = tomllib.loads(config_file.read_text(encoding="utf-8"))
        assert config["google"]["api_endpoint"] == base_url
        assert config["google"]["credentials"] == [f"../creds/sa-{n}.json" for n in (1, 2, 3)]
        assert [s["id"] for s in config["sheets"]] == [s.id for s in expected.sheets]
        telegram_line = next(line for line in lines if line.startswith("telegram: "))
        assert config["telegram"]["api_base"] == telegram_line.split()[1]


def test_serve_loads_a_dataset_folder_with_its_faults(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    store = {"title": "Store 1", "tabs": {"Stock": [["SKU", "Quantity"], ["A-1", 3]]}}
    (folder / "store-1.json").write_text(json.dumps(store))
    (folder / "faults.json").write_text(json.dumps([{"spreadsheet": "store-1", "statuses": [503]}]))
    # Only the control API is used here, which latency never holds: Google's latency stays on.
    with served("--dataset", str(folder), "--no-telegram", latency=()) as (_, lines):
        base_url = lines[0]
        assert not any(line.startswith("telegram") for line in lines)
        assert "latency: Google latency model at full scale: median 380 ms" in lines
        latency = requests.get(f"{base_url}/_sandbox/latency", timeout=5).json()
        assert (latency["model"], latency["scale"], latency["seed"]) == ("google", 1.0, 0)
        assert any(line.startswith("feed delay: Google's change-feed delay at full scale: ")
                   for line in lines)
        feed = requests.get(f"{base_url}/_sandbox/feed_delay", timeout=5).json()
        assert (feed["model"], feed["period_seconds"], feed["seed"]) == ("google", 180.0, 0)
        stored = requests.get(f"{base_url}/_sandbox/spreadsheets/store-1", timeout=5).json()
        assert stored["tabs"] == store["tabs"]
        faults = requests.get(f"{base_url}/_sandbox/faults", timeout=5).json()["faults"]
        assert [(f["spreadsheet"], f["statuses"]) for f in faults] == [("store-1", [503])]


def test_serve_spreads_credentials_over_projects_and_delays_answers_as_its_flags_say(tmp_path):
    creds = tmp_path / "creds"
    with served("--no-telegram", "--seed", "3", "--write-credentials", str(creds), "--credentials", "3",
                "--projects", "2", "--feed-delay-scale", "0.1",
                latency=("--latency-scale", "0.05")) as (_, lines):
        base_url = lines[0]
        assert "latency: Google latency model at 1/20 scale: median 19 ms" in lines
        assert any(line.startswith("feed delay: Google's change-feed delay at 1/10 scale: ")
                   and "every 18 s per file" in line for line in lines)
        feed = requests.get(f"{base_url}/_sandbox/feed_delay", timeout=5).json()
        assert (feed["scale"], feed["seed"], feed["active"]) == (0.1, 3, True)
        assert "projects: sheet-monitor-sandbox-1 (2), sheet-monitor-sandbox-2 (1)" in lines
        files = [json.loads(path.read_text()) for path in sorted(creds.glob("sa-*.json"))]
        projects = [f["project_id"] for f in files]
        assert projects == ["sheet-monitor-sandbox-1"] * 2 + ["sheet-monitor-sandbox-2"]
        assert files[2]["client_email"].endswith("@sheet-monitor-sandbox-2.iam.gserviceaccount.com")

        client = build_gspread_client(creds / "sa-3.json", endpoint=base_url, timeout=5)
        with pytest.raises(gspread.exceptions.SpreadsheetNotFound):
            client.open_by_key("no-such-sheet")  # a token, then a read: two answers, both delayed
        stats = requests.get(f"{base_url}/_sandbox/stats", timeout=5).json()
        assert stats["latency"]["delayed"] == 2 and stats["latency"]["total_seconds"] > 0
        assert (stats["latency"]["scale"], stats["latency"]["seed"]) == (0.05, 3)
        assert stats["quota"]["read"]["projects"] == {"sheet-monitor-sandbox-2": 1}


def test_serve_with_the_feed_delay_off_says_so_and_serves_without_it():
    with served("--no-telegram", "--feed-delay", "off") as (_, lines):
        assert "feed delay: no change-feed delay (Drive shows every edit at once)" in lines
        feed = requests.get(f"{lines[0]}/_sandbox/feed_delay", timeout=5).json()
        assert (feed["model"], feed["active"]) == ("off", False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--generate", "5", "--dataset", "."], "not both"),
        (["--credentials", "2"], "--credentials N needs --write-credentials"),
        (["--generate", "5", "--write-config", "x.toml"], "needs --write-credentials"),
        (["--write-credentials", "c", "--write-config", "x.toml"], "needs a dataset"),
        (["--generate", "0"], "--generate"),
        (["--port", "70000"], "--port"),
        (["--latency", "slow"], "--latency"),
        (["--latency", "off", "--latency-scale", "0.5"], "--latency-scale applies to --latency google"),
        (["--latency-scale", "-1"], "--latency-scale"),
        (["--feed-delay", "slow"], "--feed-delay"),
        (["--feed-delay", "off", "--feed-delay-scale", "0.5"],
         "--feed-delay-scale applies to --feed-delay google"),
        (["--feed-delay-scale", "11"], "--feed-delay-scale"),
        (["--projects", "2"], "--projects P needs --write-credentials"),
        (["--folder"], "--folder needs a dataset to file"),
        (["--write-credentials", "c", "--credentials", "1", "--projects", "2"],
         "every project needs at least one account"),
    ],
)
def test_bad_flags_exit_2_with_a_message_that_names_the_flag(args, message):
    result = CliRunner().invoke(cli, ["sandbox", "serve", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_an_unreadable_dataset_folder_exits_2_naming_the_file(tmp_path):
    (tmp_path / "broken.json").write_text("{")
    result = CliRunner().invoke(cli, ["sandbox", "serve", "--dataset", str(tmp_path)])
    assert result.exit_code == 2
    assert "broken.json" in result.output


def test_seed_data_the_sandbox_refuses_exits_2_naming_the_spreadsheet(tmp_path):
    (tmp_path / "bad-sheet.json").write_text(json.dumps({"title": "", "tabs": {}}))
    result = CliRunner().invoke(cli, ["sandbox", "serve", "--dataset", str(tmp_path)])
    assert result.exit_code == 2
    assert "bad-sheet" in result.output and "title" in result.output


def test_a_port_in_use_exits_1_and_says_how_to_fix_it():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["sandbox", "serve", "--port", str(port)])
    assert result.exit_code == 1
    assert f"127.0.0.1:{port}" in result.output and "--port" in result.output


def test_ctrl_c_right_after_the_url_line_still_stops_cleanly(tmp_path):
    """The signal lands while credentials are still being written: exit 0, no traceback."""
    command = [sys.executable, "-m", "monitor.cli", "sandbox", "serve", "--latency", "off",
               "--generate", "20", "--write-credentials", str(tmp_path), "--credentials", "3"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout.readline().startswith("http://127.0.0.1:")
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, errors
    assert "Traceback" not in errors and "Aborted" not in errors


# ---- keys are private, and never committed ------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_written_keys_are_private_and_git_add_all_commits_none_of_them(tmp_path):
    """The project's .gitignore, in a repository where the docs' commands write keys: `git add -A`
    stages the config and nothing secret; the keys' folder is 0700 whatever the umask allowed."""
    repo = tmp_path / "site"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text((ROOT / ".gitignore").read_text())
    with served("--generate", "5", "--no-telegram", "--write-credentials", str(repo / "secrets"),
                "--write-config", str(repo / "monitor.toml")):
        pass
    with served("--no-telegram", "--write-credentials", str(repo / "demo" / "creds")):  # docs/sandbox.md's
        pass
    keys = sorted((repo / "secrets").glob("*.json")) + sorted((repo / "demo" / "creds").glob("*.json"))
    assert [key.name for key in keys] == ["sa-1.json", "sa-1.json"]
    assert {oct(key.parent.stat().st_mode & 0o777) for key in keys} == {"0o700"}
    assert {oct(key.stat().st_mode & 0o777) for key in keys} == {"0o600"}
    # Keys as people keep them beside those: Google's download, renamed ones, the bot token.
    for name in ("my-project-1a2b3c4d5e6f.json", "ops/service-account.json", "ops/telegram-token"):
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text("secret")
    git(repo, "add", "-A")
    assert git(repo, "diff", "--cached", "--name-only").split() == [".gitignore", "monitor.toml"]


def test_a_keys_folder_made_by_mkdir_is_made_private_and_one_shared_with_other_files_is_told(tmp_path):
    made, shared = tmp_path / "made", tmp_path / "shared"
    for folder in (made, shared):
        folder.mkdir(mode=0o755)
        folder.chmod(0o755)
    (shared / "notes.txt").write_text("not a key")
    with served("--no-telegram", "--write-credentials", str(made)) as (process, _):
        pass
    assert made.stat().st_mode & 0o777 == 0o700 and "warning" not in process.stderr.read()
    with served("--no-telegram", "--write-credentials", str(shared)) as (process, _):
        pass
    assert shared.stat().st_mode & 0o777 == 0o755
    assert (f"warning: the credentials folder {shared} can be entered by others (mode 0755) and holds "
            "files that are not the monitor's (notes.txt)") in process.stderr.read()


# ---- the docs' own dataset folder ------------------------------------------------------------


def docs_dataset_example() -> dict[str, str]:
    """docs/sandbox.md's hand-written dataset folder, file by file, as the docs print it."""
    text = (ROOT / "docs" / "sandbox.md").read_text(encoding="utf-8")
    block = text[text.index("A hand-written folder is just:"):]
    block = block[block.index("```") + 3:]
    block = block[:block.index("```")]
    files = dict(line.split(maxsplit=1) for line in block.strip().splitlines())
    assert files, "docs/sandbox.md lost its hand-written dataset example"
    return files


def test_the_docs_dataset_example_gives_a_config_that_checks_and_runs(tmp_path, monkeypatch):
    """Written as the docs print it, served with --write-config: check-config passes, a run judges
    every spreadsheet of it (after the two 503s its faults.json asks for)."""
    example = docs_dataset_example()
    for name, content in example.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    folder = tmp_path / next(iter(example)).split("/")[0]
    spreadsheets = [Path(name).stem for name in example if Path(name).name != ds.FAULTS_FILE]
    config_file = tmp_path / "monitor.toml"
    with served("--dataset", str(folder), "--write-credentials", str(tmp_path / "secrets"),
                "--write-config", str(config_file)) as (_, lines):
        assert "0 broken on purpose" in next(line for line in lines if line.startswith("spreadsheets: "))
        token = next(line for line in lines if line.startswith("export ")).split("=", 1)[1]
        monkeypatch.setenv("TELEGRAM_BOT_TOKEN", token)
        checked = CliRunner().invoke(cli, ["check-config", "--config", str(config_file)])
        assert checked.exit_code == 0, checked.output
        clock = ManualClock(start=datetime.now(UTC))  # google-auth signs with the real clock
        report = run_once(load_config(config_file, os.environ), clock=clock, messages_to=io.StringIO()).report
    assert report.outcome is RunOutcome.OK
    state = read_state(tmp_path / "state")
    assert [sheet["id"] for sheet in tomllib.loads(config_file.read_text())["sheets"]] == spreadsheets
    assert {state.health[sid].health for sid in spreadsheets} == {"ok"}  # no formula error, a row of data
