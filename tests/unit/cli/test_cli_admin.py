"""The operator commands through the real CLI (click's CliRunner on ``monitor.cli.main.cli``): what they
print, their exit codes, the keys of their ``--json``, and what they change in the saved state.

The run lock and repairs are in test_cli_lock, check-config and check in test_cli_check, help and
tables in test_cli_docs.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from cli_fixtures import A, B, C, invoke, json_of, saved_state, seed, state_dir, state_file, write_config
from click.testing import CliRunner

from monitor.cli.main import cli
from monitor.core.timefmt import parse_utc
from monitor.engine.incidents import Incident
from monitor.engine.maintenance import start_maintenance
from monitor.engine.tasks import PENDING
from monitor.state import changing_state


@pytest.fixture
def config(tmp_path):
    return write_config(tmp_path / "site")


# -- status


def test_status_without_a_state_file_says_there_was_no_run_yet(config):
    result = invoke(config, "status")
    assert result.exit_code == 0
    assert "No run yet" in result.stdout
    data = json_of(invoke(config, "status", "--json"))
    assert data["has_run"] is False and data["last_run"] is None and data["dlq_size"] == 0
    assert data["queue"] == {"pending": 0, "processing": 0, "done": 0, "failed": 0}
    assert not state_dir(config).exists()  # reading created nothing


def test_status_with_an_unreadable_state_exits_1_naming_the_file_and_the_way_back(config):
    state_dir(config).mkdir()
    state_file(config).write_text("{torn")
    (state_dir(config) / "properties.json.bak").write_text("")
    result = invoke(config, "status")
    assert result.exit_code == 1
    assert str(state_file(config)) in result.stderr
    assert "copy a good version" in result.stderr
    assert state_file(config).read_text() == "{torn"  # left as it was, for inspection


def test_status_json_has_every_fact(config):
    seed(config)
    data = json_of(invoke(config, "status", "--json"))
    assert {"last_run", "current_round", "queue", "oldest_pending", "next_retry_at", "dlq_size",
            "open_breakers", "outbox_size", "outbox_halted", "muted", "api_degraded", "quota_last_run",
            "health", "set_aside", "state_file", "has_run", "change_feed"} <= set(data)
    assert data["has_run"] is True and data["state_file"] == str(state_file(config))
    assert data["dlq_size"] == 1 and data["open_breakers"] == [C]
    assert data["queue"] == {"pending": 0, "processing": 0, "done": 2, "failed": 1}
    assert data["quota_last_run"]["reads"] == 3
    assert data["last_run"]["outcome"] == "ok" and data["last_run"]["duration_seconds"] == 40.0
    assert data["outbox_halted"]["status"] == 401 and data["set_aside"] == []
    human = invoke(config, "status")
    assert human.exit_code == 0
    assert re.search(r"dead letters\s+1", human.stdout) and "sa-1.json 3" in human.stdout
    assert "1 messages waiting; Telegram refuses the chat since" in human.stdout
    assert "401 Unauthorized" in human.stdout


# -- sheets


def test_sheets_lists_every_configured_spreadsheet_worst_first(config):
    seed(config)
    data = json_of(invoke(config, "sheets", "--json"))
    assert [row["id"] for row in data["sheets"]] == [A, C, B]
    assert [row["shown"] for row in data["sheets"]] == ["error", "skipped", "ok"]
    assert {"id", "name", "shown", "health", "since", "last_checked_at", "findings", "muted_until",
            "in_dlq", "read_at", "unchanged"} <= set(data["sheets"][0])
    human = invoke(config, "sheets")
    assert "skipped (breaker_open; was ok)" in human.stdout and "error (DLQ)" in human.stdout
    only_ok = json_of(invoke(config, "sheets", "--status", "ok", "--json"))
    assert [row["id"] for row in only_ok["sheets"]] == [B]
    assert invoke(config, "sheets", "--status", "bogus").exit_code == 2


def test_sheets_and_status_show_what_a_maintenance_window_covers_and_what_was_escalated(tmp_path):
    now = datetime.now(UTC).replace(microsecond=0)
    window = (f'\n[[maintenance]]\nstart = "{(now - timedelta(hours=1)).isoformat()}"\n'
              f'end = "{(now + timedelta(hours=1)).isoformat()}"\nsheets = ["Store 2"]\nreason = "moving"\n')
    config = write_config(tmp_path / "site", extra=window)
    seed(config, now)  # A dead-lettered, B fine, C paused by its breaker
    with changing_state(state_dir(config), actor="test", now=now) as session:
        start_maintenance(session.state, now, now + timedelta(hours=3), "@ivan", "servers", [C])
        opened = now - timedelta(hours=3)
        session.state.incidents[A] = Incident("abcdefgh", A, "Store 1", "access_lost", opened,
                                              escalated_at=now - timedelta(hours=1))
    rows = {row["id"]: row for row in json_of(invoke(config, "sheets", "--json"))["sheets"]}
    assert [rows[sid]["shown"] for sid in (A, B, C)] == ["error", "maintenance", "maintenance"]
    assert (rows[B]["maintenance_reason"], parse_utc(rows[B]["maintenance_until"])) == (
        "moving", now + timedelta(hours=1))
    assert rows[A]["escalated_at"] is not None and rows[B]["escalated_at"] is None
    human = invoke(config, "sheets").stdout
    assert "maintenance until" in human and "(moving)" in human and "error (DLQ) (escalated" in human
    assert json_of(invoke(config, "status", "--json"))["maintenance"] == [B, C]
    assert re.search(r"in maintenance\s+2", invoke(config, "status").stdout)


def test_sheets_before_any_run_shows_them_unknown(config):
    data = json_of(invoke(config, "sheets", "--json"))
    assert [row["shown"] for row in data["sheets"]] == ["unknown"] * 3


# -- dlq


def test_dlq_list_show_and_their_errors(config):
    seed(config)
    entries = json_of(invoke(config, "dlq", "list", "--json"))["entries"]
    assert [e["id"] for e in entries] == [A]
    keys = {"error_class", "http_status", "message", "first_failed_at", "last_failed_at", "occurrences"}
    assert keys <= set(entries[0])
    shown = json_of(invoke(config, "dlq", "show", A, "--json"))["entry"]
    assert shown["last_error"]["http_status"] == 403 and shown["history"]
    assert shown["task"]["target"] == A and shown["task"]["status"] == "failed"
    human = invoke(config, "dlq", "show", A)
    assert human.exit_code == 0 and "PERMISSION_DENIED" in human.stdout
    missing = invoke(config, "dlq", "show", B)
    assert missing.exit_code == 1 and "not in the dead-letter queue" in missing.stderr


def test_dlq_retry_requeues_in_the_current_round_and_keeps_the_entry(config):
    seed(config)
    result = invoke(config, "dlq", "retry", A, "--json")
    assert result.exit_code == 0
    assert json_of(result)["retried"] == [{"id": A, "due": "current_round", "breaker_was": None,
                                           "muted_until": None}]
    state = saved_state(config)
    task = next(t for t in state.round.tasks.values() if t.target == A)
    assert task.status is PENDING and task.attempts == 0 and A in state.dlq


def test_dlq_retry_needs_an_id_or_all_but_not_both(config):
    seed(config)
    assert invoke(config, "dlq", "retry").exit_code == 2
    assert invoke(config, "dlq", "retry", A, "--all").exit_code == 2
    assert invoke(config, "dlq", "retry", B).exit_code == 1  # not dead-lettered
    assert [r["id"] for r in json_of(invoke(config, "dlq", "retry", "--all", "--json"))["retried"]] == [A]


def test_dlq_purge_one_then_all(config):
    seed(config)
    assert invoke(config, "dlq", "purge", B).exit_code == 1
    assert json_of(invoke(config, "dlq", "purge", A, "--json"))["purged"] == [A]
    assert len(saved_state(config).dlq) == 0
    result = invoke(config, "dlq", "purge")
    assert result.exit_code == 0 and "Purged 0 entries" in result.stdout


# -- breakers


def test_breakers_lists_and_resets(config):
    seed(config)
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
    assert len(saved_state(config).breakers) == 0
    again = invoke(config, "breakers", "reset", C)
    assert again.exit_code == 0 and "already closed" in again.stdout
    assert invoke(config, "breakers", "reset", "1notConfigured").exit_code == 2


# -- mute / unmute


def test_mute_then_unmute(config):
    result = invoke(config, "mute", B, "--for", "2h", "--reason", "stock count", "--json")
    assert result.exit_code == 0
    mute = json_of(result)["mute"]
    assert mute["reason"] == "stock count" and mute["for"] == "2h"
    until = parse_utc(mute["until"])
    assert timedelta(minutes=119) < until - datetime.now(UTC) <= timedelta(hours=2)
    assert saved_state(config).mutes[B].until == until
    rows = json_of(invoke(config, "sheets", "--json"))["sheets"]
    assert next(r for r in rows if r["id"] == B)["shown"] == "muted"
    assert "muted until" in invoke(config, "sheets").stdout
    assert json_of(invoke(config, "status", "--json"))["muted"] == [B]
    assert json_of(invoke(config, "unmute", B, "--json"))["unmute"]["was_muted"] is True
    assert len(saved_state(config).mutes) == 0
    assert "was not muted" in invoke(config, "unmute", B).stdout


def test_mute_refuses_unknown_ids_bad_durations_and_a_missing_reason(config):
    assert invoke(config, "mute", "1unknown", "--for", "1h", "--reason", "x").exit_code == 2
    bad = invoke(config, "mute", A, "--for", "soon", "--reason", "x")
    assert bad.exit_code == 2 and "bad duration" in bad.stderr
    assert invoke(config, "mute", A, "--for", "1h").exit_code == 2
    assert invoke(config, "mute", A, "--for", "1h", "--reason", "  ").exit_code == 2
    assert not state_file(config).exists()


def test_unmute_of_an_id_neither_configured_nor_muted_exits_2(config):
    seed(config)
    result = invoke(config, "unmute", "1notConfigured")
    assert result.exit_code == 2 and "not a configured spreadsheet" in result.stderr
