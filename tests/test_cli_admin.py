"""Operator commands through click's CliRunner: exit codes, --json keys, the run lock, and a DLQ retry
that brings a spreadsheet back through real runs against the sandbox."""

from __future__ import annotations

import functools
import io
import json
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from monitor import admin
from monitor.app.run import run_once
from monitor.cli.main import cli
from monitor.cli.output import render_table
from monitor.cli.state_access import changing_state
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.core.timefmt import format_utc
from monitor.engine.health import SheetHealth
from monitor.engine.tasks import Round
from monitor.sandbox.server import running_sandbox
from monitor.state import events
from monitor.state.runner_state import RunnerState, dump_state, load_state
from monitor.storage import FileStore, FlockLock

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def throwaway_key() -> str:
    """A real RSA key in PEM, made at test time (keys are never committed)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def sheet_id(n: int) -> str:
    return f"1adminSheet{n:04d}".ljust(44, "x")


A, B, C, D = sheet_id(1), sheet_id(2), sheet_id(3), sheet_id(4)


def write_config(folder: Path, ids=(A, B, C), credentials: list[Path] | None = None,
                 endpoint: str | None = None, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if credentials is None:
        credentials = [folder / "sa-1.json"]
        credentials[0].write_text(json.dumps({
            "type": "service_account", "client_email": "a@example.iam.gserviceaccount.com",
            "private_key": throwaway_key(), "token_uri": "https://oauth2.example/token"}))
    lines = [
        "[run]", 'state_dir = "state"', 'budget = "4m"', 'round_interval = "5m"', "",
        "[google]", f"credentials = {json.dumps([str(p) for p in credentials])}",
        'request_timeout = "5s"',
    ]
    if endpoint:
        lines.append(f'api_endpoint = "{endpoint}"')
    lines += ["", "[profiles.stock]", "checks = [",
              '  { kind = "formula_errors", range = "Stock!A1:C20" },',
              '  { kind = "threshold", range = "Stock!C2:C20", aggregate = "min", '
              'warn = "< 5", fail = "< 0" },',
              "]", ""]
    for n, sid in enumerate(ids, start=1):
        lines += ["[[sheets]]", f'id = "{sid}"', f'name = "Store {n}"', 'profile = "stock"', ""]
    path = folder / "monitor.toml"
    path.write_text("\n".join(lines) + extra)
    return path


def invoke(config: Path, *args: str):
    return CliRunner().invoke(cli, [*args, "--config", str(config)], catch_exceptions=False)


def json_of(result) -> dict:
    data = json.loads(result.stdout)
    assert data["version"] == admin.JSON_VERSION
    return data


def save_state(config: Path, state: RunnerState) -> None:
    with FileStore.in_dir(config.parent / "state") as store:
        store.set_properties(dump_state(state))


def saved_state(config: Path) -> RunnerState:
    with FileStore.in_dir(config.parent / "state", read_only=True) as store:
        return load_state(store.get_properties())


def seeded(config: Path) -> RunnerState:
    """A state as a run would leave it: A dead-lettered (403), B fine, C behind an open breaker."""
    now = datetime.now(UTC)
    state = RunnerState()
    state.round = Round.build([A, B, C], now - timedelta(minutes=1))
    for task in state.round.tasks.values():
        task.status = "failed" if task.target == A else "done"
    state.sheets = {A: SheetHealth(health="error", last_checked_at=format_utc(now)),
                    B: SheetHealth(health="ok", last_checked_at=format_utc(now)),
                    C: SheetHealth(health="ok", skipped="breaker_open")}
    error = {"error_class": "permanent", "http_status": 403, "google_status": "PERMISSION_DENIED",
             "message": "The caller does not have permission"}
    state.dlq.record(A, "Store 1", {"id": "t1", "history": [{"at": format_utc(now), "outcome": "permanent",
                                                              "error": error}]}, error, now)
    state.breakers = {C: {"state": "open", "consecutive_failures": 3, "opened_at": format_utc(now),
                          "cooldown_seconds": 900.0, "reopen_count": 0, "first_opened_at": format_utc(now),
                          "probe_started_at": None}}
    state.heartbeat = {"run_id": "run-x", "started_at": format_utc(now - timedelta(seconds=50)),
                       "finished_at": format_utc(now - timedelta(seconds=10)), "outcome": "ok",
                       "stats": {"duration_seconds": 40.0, "stop_reason": "round_done", "tasks": 3,
                                 "reads_by_credential": {"/x/sa-1.json": 3}}}
    state.outbox = {"pending": [{"key": "k1", "text": "x"}],
                    "halted": {"at": format_utc(now), "status": 401, "description": "Unauthorized"}}
    save_state(config, state)
    return state


@pytest.fixture
def config(tmp_path) -> Path:
    return write_config(tmp_path / "site")


# -- status


def test_status_without_a_state_file_says_there_was_no_run_yet(config):
    result = invoke(config, "status")
    assert result.exit_code == 0
    assert "No run yet" in result.stdout
    data = json_of(invoke(config, "status", "--json"))
    assert data["has_run"] is False and data["last_run"] is None and data["dlq_size"] == 0
    assert not (config.parent / "state" / "properties.json").exists()  # reading created nothing


def test_status_with_an_unreadable_state_exits_1_naming_the_file_and_the_way_back(config):
    state_dir = config.parent / "state"
    state_dir.mkdir()
    (state_dir / "properties.json").write_text("{torn")
    (state_dir / "properties.json.bak").write_text("")
    result = invoke(config, "status")
    assert result.exit_code == 1
    assert str(state_dir / "properties.json") in result.stderr
    assert "copy a good version" in result.stderr


def test_status_json_has_every_fact(config):
    seeded(config)
    data = json_of(invoke(config, "status", "--json"))
    assert {"last_run", "current_round", "queue", "oldest_pending", "next_retry_at", "dlq_size",
            "open_breakers", "outbox_size", "muted", "quota_last_run", "health", "state_file"} <= set(data)
    assert data["dlq_size"] == 1 and data["open_breakers"] == [C]
    assert data["quota_last_run"]["reads"] == 3
    assert data["last_run"]["outcome"] == "ok"
    human = invoke(config, "status")
    assert human.exit_code == 0
    assert re.search(r"dead letters\s+1", human.stdout) and "sa-1.json 3" in human.stdout
    assert "1 messages waiting; Telegram refuses the chat since" in human.stdout
    assert "401 Unauthorized" in human.stdout


# -- sheets


def test_sheets_lists_every_configured_spreadsheet_worst_first(config):
    seeded(config)
    data = json_of(invoke(config, "sheets", "--json"))
    assert [row["id"] for row in data["sheets"]] == [A, C, B]
    assert [row["shown"] for row in data["sheets"]] == ["error", "skipped", "ok"]
    assert {"id", "name", "shown", "health", "since", "last_checked_at", "findings", "muted_until"} <= set(
        data["sheets"][0])
    human = invoke(config, "sheets")
    assert "skipped (breaker_open; was ok)" in human.stdout and "error (DLQ)" in human.stdout
    only_ok = json_of(invoke(config, "sheets", "--status", "ok", "--json"))
    assert [row["id"] for row in only_ok["sheets"]] == [B]
    assert invoke(config, "sheets", "--status", "bogus").exit_code == 2


def test_sheets_before_any_run_shows_them_unknown(config):
    data = json_of(invoke(config, "sheets", "--json"))
    assert {row["shown"] for row in data["sheets"]} == {"unknown"}


# -- dlq


def test_dlq_list_show_and_their_errors(config):
    seeded(config)
    entries = json_of(invoke(config, "dlq", "list", "--json"))["entries"]
    assert [e["id"] for e in entries] == [A]
    keys = {"error_class", "http_status", "message", "first_failed_at", "last_failed_at", "occurrences"}
    assert keys <= set(entries[0])
    shown = json_of(invoke(config, "dlq", "show", A, "--json"))["entry"]
    assert shown["last_error"]["http_status"] == 403 and shown["history"]
    human = invoke(config, "dlq", "show", A)
    assert human.exit_code == 0 and "PERMISSION_DENIED" in human.stdout
    missing = invoke(config, "dlq", "show", B)
    assert missing.exit_code == 1 and "not in the dead-letter queue" in missing.stderr


def test_dlq_retry_requeues_in_the_current_round_and_keeps_the_entry(config):
    seeded(config)
    result = invoke(config, "dlq", "retry", A, "--json")
    assert result.exit_code == 0
    assert json_of(result)["retried"] == [{"id": A, "due": "current_round", "breaker_was": None,
                                           "muted_until": None}]
    state = saved_state(config)
    task = next(t for t in state.round.tasks.values() if t.target == A)
    assert task.status == "pending" and A in state.dlq


def test_dlq_retry_needs_an_id_or_all_but_not_both(config):
    seeded(config)
    assert invoke(config, "dlq", "retry").exit_code == 2
    assert invoke(config, "dlq", "retry", A, "--all").exit_code == 2
    assert invoke(config, "dlq", "retry", B).exit_code == 1  # not dead-lettered
    assert [r["id"] for r in json_of(invoke(config, "dlq", "retry", "--all", "--json"))["retried"]] == [A]


def test_dlq_purge_one_then_all(config):
    seeded(config)
    assert invoke(config, "dlq", "purge", B).exit_code == 1
    assert json_of(invoke(config, "dlq", "purge", A, "--json"))["purged"] == [A]
    assert len(saved_state(config).dlq) == 0
    result = invoke(config, "dlq", "purge")
    assert result.exit_code == 0 and "Purged 0 entries" in result.stdout


# -- breakers


def test_breakers_lists_and_resets(config):
    seeded(config)
    listed = CliRunner().invoke(cli, ["breakers"], env={"SHEET_MONITOR_CONFIG": str(config)})
    assert listed.exit_code == 0 and "open" in listed.stdout and C in listed.stdout
    assert json_of(invoke(config, "breakers", "--json"))["breakers"][0]["id"] == C
    before_subcommand = CliRunner().invoke(cli, ["breakers", "--config", str(config), "list", "--json"])
    assert json_of(before_subcommand)["breakers"][0]["id"] == C
    json_first = CliRunner().invoke(cli, ["breakers", "--json", "list", "--config", str(config)])
    assert json_of(json_first)["breakers"][0]["id"] == C
    rows = json_of(invoke(config, "breakers", "list", "--json"))["breakers"]
    assert rows[0]["id"] == C and rows[0]["state"] == "open" and rows[0]["next_probe_at"]
    reset = json_of(invoke(config, "breakers", "reset", C, "--json"))
    assert reset["breaker"] == {"id": C, "was": "open", "state": "closed"}
    assert saved_state(config).breakers == {}
    again = invoke(config, "breakers", "reset", C)
    assert again.exit_code == 0 and "already closed" in again.stdout
    assert invoke(config, "breakers", "reset", "1notConfigured").exit_code == 2


# -- mute / unmute


def test_mute_then_unmute(config):
    result = invoke(config, "mute", B, "--for", "2h", "--reason", "stock count", "--json")
    assert result.exit_code == 0
    mute = json_of(result)["mute"]
    assert mute["reason"] == "stock count" and mute["for"] == "2h"
    until = datetime.fromisoformat(mute["until"].replace("Z", "+00:00"))
    assert timedelta(minutes=119) < until - datetime.now(UTC) <= timedelta(hours=2)
    rows = json_of(invoke(config, "sheets", "--json"))["sheets"]
    assert next(r for r in rows if r["id"] == B)["shown"] == "muted"
    assert "muted until" in invoke(config, "sheets").stdout
    assert json_of(invoke(config, "status", "--json"))["muted"] == [B]
    assert json_of(invoke(config, "unmute", B, "--json"))["unmute"]["was_muted"] is True
    assert saved_state(config).mutes == {}
    assert "was not muted" in invoke(config, "unmute", B).stdout


def test_mute_refuses_unknown_ids_bad_durations_and_a_missing_reason(config):
    assert invoke(config, "mute", "1unknown", "--for", "1h", "--reason", "x").exit_code == 2
    bad = invoke(config, "mute", A, "--for", "soon", "--reason", "x")
    assert bad.exit_code == 2 and "bad duration" in bad.stderr
    assert invoke(config, "mute", A, "--for", "1h").exit_code == 2
    assert invoke(config, "mute", A, "--for", "1h", "--reason", "  ").exit_code == 2
    assert not (config.parent / "state" / "properties.json").exists()


# -- the run lock


@pytest.mark.parametrize("args", [
    ("mute", A, "--for", "1h", "--reason", "x"), ("unmute", A), ("dlq", "retry", A), ("dlq", "purge"),
    ("breakers", "reset", C),
])
def test_a_change_while_a_run_holds_the_lock_waits_then_exits_1_changing_nothing(config, args):
    seeded(config)
    before = (config.parent / "state" / "properties.json").read_bytes()
    lock = FlockLock.in_dir(config.parent / "state")
    assert lock.try_acquire()
    try:
        result = invoke(config, *args, "--wait", "0.1")
    finally:
        lock.release()
    assert result.exit_code == 1
    assert "a run is in progress" in result.stderr
    assert (config.parent / "state" / "properties.json").read_bytes() == before


def test_a_change_waits_for_a_run_that_ends_within_the_wait(config):
    seeded(config)
    lock = FlockLock.in_dir(config.parent / "state")
    assert lock.try_acquire()
    releaser = threading.Timer(0.15, lock.release)
    releaser.start()
    try:
        result = invoke(config, "breakers", "reset", C, "--wait", "5")
    finally:
        releaser.join()
    assert result.exit_code == 0 and "breaker closed" in result.stdout
    assert saved_state(config).breakers == {}


def test_a_change_that_finds_the_state_damaged_restores_it_and_leaves_an_event_for_the_next_run(config):
    seeded(config)
    save_state(config, saved_state(config))  # a second write: the backup now holds a good copy
    (config.parent / "state" / "properties.json").write_text("{torn")
    result = invoke(config, "unmute", A)
    assert result.exit_code == 0
    state = saved_state(config)
    assert [e["kind"] for e in state.events] == [events.STATE_RESTORED]
    assert state.events[0]["run_id"] == "admin-unmute" and A in state.dlq


def test_a_failing_change_that_restored_the_state_still_leaves_the_event(config):
    seeded(config)
    save_state(config, saved_state(config))
    (config.parent / "state" / "properties.json").write_text("{torn")
    result = invoke(config, "dlq", "purge", B)  # B is not in the DLQ: the command itself fails
    assert result.exit_code == 1
    assert [e["kind"] for e in saved_state(config).events] == [events.STATE_RESTORED]


def test_readers_do_not_need_the_lock(config):
    seeded(config)
    lock = FlockLock.in_dir(config.parent / "state")
    assert lock.try_acquire()
    try:
        for args in (("status",), ("sheets",), ("dlq", "list"), ("breakers", "list")):
            assert invoke(config, *args).exit_code == 0
    finally:
        lock.release()


# -- check-config


def test_check_config_prints_the_plan_and_the_quota_arithmetic(config):
    result = invoke(config, "check-config")
    assert result.exit_code == 0
    assert "3 spreadsheets, 1 credential at 60/min: a full round needs at least 0.1 min of quota; " \
           "round_interval 5m: fits" in result.stdout
    data = json_of(invoke(config, "check-config", "--json"))
    assert {"spreadsheets", "reads_per_round", "credentials", "round_seconds", "fits", "credentials_needed",
            "summary", "warnings", "valid"} <= set(data)
    assert data["spreadsheets"] == 3 and data["reads_per_round"] == 3 and data["ranges"] == 6


def test_check_config_warns_about_a_budget_as_long_as_the_interval(tmp_path):
    path = write_config(tmp_path / "site")
    path.write_text(path.read_text().replace('budget = "4m"', 'budget = "6m"'))
    result = invoke(path, "check-config")
    assert result.exit_code == 0
    assert "Warnings" in result.stdout and 'set budget = "4m30s"' in result.stdout


def test_check_config_exits_2_on_errors_and_a_missing_credential_file(tmp_path):
    path = write_config(tmp_path / "site", credentials=[tmp_path / "missing.json"])
    result = invoke(path, "check-config")
    assert result.exit_code == 2 and "missing.json not found" in result.stderr
    # Read-only commands do not need the credential files.
    assert invoke(path, "status").exit_code == 0
    assert invoke(tmp_path / "nowhere.toml", "check-config").exit_code == 2


# -- check ID (real gspread against the sandbox)


def stock(quantity: float = 10, formula_error: bool = False) -> dict:
    rows = [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity], ["A-2", "Milk", 12]]
    if formula_error:
        rows[2][1] = "#REF!"
    return {"title": "Store", "tabs": {"Stock": rows}}


@pytest.fixture
def sandbox_site(tmp_path):
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time.
    clock = ManualClock(start=datetime.now(UTC))
    with running_sandbox(clock=clock, telegram=False) as sandbox:
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        sandbox.google.store.put_control(A, stock())
        sandbox.google.store.put_control(B, stock(quantity=-3, formula_error=True))
        sandbox.google.store.put_control(D, stock())
        # C is never created: the sandbox answers 404.
        fresh = ('\n[profiles.fresh]\n'
                 'checks = [{ kind = "freshness", source = "modified_time", warn = "> 1d" }]\n'
                 f'\n[[sheets]]\nid = "{D}"\nname = "Store 4"\nprofile = "fresh"\n')
        path = write_config(tmp_path / "site", credentials=credentials, endpoint=sandbox.base_url,
                            extra=fresh)
        yield sandbox, clock, path


def test_check_reads_one_spreadsheet_and_records_nothing(sandbox_site):
    sandbox, _, path = sandbox_site
    result = invoke(path, "check", B, "--json")
    assert result.exit_code == 0
    data = json_of(result)
    assert data["health"] == "fail" and data["quota_spent"]["reads"] == 1
    by_kind = {r["kind"]: r for r in data["results"]}
    assert by_kind["formula_errors"]["cells"] == ["Stock!B3"]
    assert by_kind["threshold"]["status"] == "fail" and by_kind["threshold"]["cells"] == ["Stock!C2"]
    human = invoke(path, "check", B)
    assert "Stock!B3" in human.stdout and "quota" in human.stderr
    assert sandbox.google.stats.snapshot()["by_endpoint"]["GET /v4/spreadsheets/{id}/values:batchGet"] == 2
    assert not (path.parent / "state" / "properties.json").exists()


def test_check_of_a_freshness_on_the_files_modified_time_spends_a_drive_read(sandbox_site):
    _, _, path = sandbox_site
    data = json_of(invoke(path, "check", D, "--json"))
    assert data["health"] == "ok" and data["results"][0]["message"].startswith("last modified")
    assert data["quota_spent"]["reads"] == 0 and data["quota_spent"]["drive_reads"] == 1


def test_check_of_an_unreadable_spreadsheet_exits_1_and_of_an_unknown_id_2(sandbox_site):
    _, _, path = sandbox_site
    missing = invoke(path, "check", C)
    assert missing.exit_code == 1 and "404" in missing.stdout
    assert json_of(invoke(path, "check", C, "--json"))["error"]["http_status"] == 404
    assert invoke(path, "check", "1notConfigured").exit_code == 2


# -- dlq retry through real runs


def test_dlq_retry_after_access_is_restored_brings_it_back_healthy_with_a_recovered_event(sandbox_site):
    sandbox, clock, path = sandbox_site
    config = load_config(path, {})
    sandbox.google.faults.add({"spreadsheet": A, "statuses": [403], "repeat": True})
    run_once(config, clock=clock, messages_to=io.StringIO())
    assert A in saved_state(path).dlq and saved_state(path).sheets[A].health == "error"

    sandbox.google.faults.clear(A)  # someone shared the spreadsheet with the service account again
    clock.advance(30)
    retried = invoke(path, "dlq", "retry", A, "--json")
    assert json_of(retried)["retried"][0]["due"] == "current_round"

    result = run_once(config, clock=clock, messages_to=io.StringIO())
    state = saved_state(path)
    assert state.sheets[A].health == "ok" and A not in state.dlq
    recovered = [e for e in result.new_events if e["kind"] == events.RECOVERED]
    assert [e["spreadsheet_id"] for e in recovered] == [A]
    assert result.report.tasks == 1  # only the retried spreadsheet: the round was otherwise done


def test_a_retry_between_rounds_puts_the_spreadsheet_first_in_the_next_round(sandbox_site):
    sandbox, clock, path = sandbox_site
    config = load_config(path, {})
    sandbox.google.store.put_control(C, stock())
    sandbox.google.faults.add({"spreadsheet": C, "statuses": [403], "repeat": True})
    run_once(config, clock=clock, messages_to=io.StringIO())
    first_round = saved_state(path).round
    assert [t.target for t in first_round.tasks.values()] == [A, B, C, D]  # never checked: config order

    sandbox.google.faults.clear(C)
    clock.advance(6 * 60)  # the round is done and its interval has passed
    with changing_state(config, clock.now(), "test", wait=1) as state:
        assert admin.dlq_retry(state, [C], clock.now(), config.run.round_interval)[0]["due"] == "next_round"
    run_once(config, clock=clock, messages_to=io.StringIO())
    state = saved_state(path)
    assert state.round.id != first_round.id
    assert state.round.to_dict()["tasks"][0]["target"] == C
    assert C not in state.dlq and "retry_first" not in state.flags


# -- every command documented


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        path = (*prefix, name)
        yield path, command
        if isinstance(command, click.Group):
            yield from _command_paths(command, path)


def _docs_text() -> str:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(f.read_text(encoding="utf-8") for f in files if f.exists())


OPERATOR_COMMANDS = [("status",), ("sheets",), ("dlq",), ("dlq", "list"), ("dlq", "show"), ("dlq", "retry"),
                     ("dlq", "purge"), ("breakers",), ("breakers", "list"), ("breakers", "reset"), ("mute",),
                     ("unmute",), ("check-config",), ("check",)]


@pytest.mark.parametrize("path", [path for path, _ in _command_paths(cli)], ids=" ".join)
def test_every_command_has_help(path):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0
    command = dict(_command_paths(cli))[path]
    assert (command.help or "").strip(), f"sheet-monitor {' '.join(path)} has no help text"


@pytest.mark.parametrize("path", [path for path, _ in _command_paths(cli)], ids=" ".join)
def test_every_command_appears_in_the_docs(path):
    assert re.search(rf"sheet-monitor {' '.join(path)}(?![\w-])", _docs_text())


def test_the_operator_commands_listed_here_are_all_registered():
    registered = {path for path, _ in _command_paths(cli)}
    assert set(OPERATOR_COMMANDS) <= registered


# -- tables


def test_a_table_is_cut_to_the_terminal_width_widest_column_first():
    rows = [("Store 1", "a" * 44, "fail", "1 cell shows #REF! in a very long message about it")]
    table = render_table(("name", "id", "health", "message"), rows, width=80)
    lines = [click.unstyle(line) for line in table]
    assert all(len(line) <= 80 for line in lines)
    assert "…" in lines[1] and "Store 1" in lines[1] and "fail" in lines[1]


def test_ids_are_never_cut_even_when_the_table_cannot_fit():
    table = render_table(("name", "id", "message"), [("Store 1", "b" * 44, "m" * 60)], width=60, uncut=(1,))
    assert "b" * 44 in click.unstyle(table[1])


def test_a_table_without_a_width_keeps_every_character_and_aligns_columns():
    table = render_table(("a", "b"), [("x", "long value"), ("longer", None)])
    lines = [click.unstyle(line) for line in table]
    assert lines == ["a       b", "x       long value", "longer  -"]
