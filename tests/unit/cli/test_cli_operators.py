"""The operator commands as a person uses them: `sheets` with findings and filters, `mute` and `unmute`
by name, URL or tag, `dlq purge` of every entry only after a question (or --all --yes), and `status`
saying when it shows the backup copy and whether an unfinished run is running or was killed."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from cli_fixtures import A, B, C, invoke, json_of, saved_state, seed, state_dir, state_file, write_config

from monitor.engine.health import FAIL, Finding, SheetHealth
from monitor.engine.heartbeat import Heartbeat
from monitor.state import changing_state
from monitor.storage import FlockLock

TAGS = {A: ["moscow", "retail"], B: ["kazan"], C: ["moscow"]}


@pytest.fixture
def config(tmp_path):
    path = write_config(tmp_path / "site")
    text = path.read_text()
    for n, sid in enumerate((A, B, C), start=1):
        tags = ", ".join(f'"{tag}"' for tag in TAGS[sid])
        text = text.replace(f'name = "Store {n}"', f'name = "Store {n}"\ntags = [{tags}]')
    path.write_text(text.replace('name = "Store 2"', 'name = "Kazan Central"'))
    return path


def with_findings(config, now: datetime) -> None:
    with changing_state(state_dir(config), actor="test", now=now) as session:
        session.state.health[B] = SheetHealth(FAIL, since=now, last_checked_at=now, findings=(
            Finding("threshold", "threshold", "fail", "min of Stock!C2:C20 is -3 (fail < 0)", ("Stock!C2",)),
            Finding("formula_errors", "formula_errors", "fail", "1 formula error: #REF!", ("Stock!B3",)),
        ))


# -- sheets


def test_sheets_shows_what_each_check_found_and_the_tags(config):
    now = seed(config)
    with_findings(config, now)
    human = invoke(config, "sheets")
    assert human.exit_code == 0
    row = next(line for line in human.stdout.splitlines() if line.startswith("Kazan Central"))
    assert "2: threshold, formula_errors" in row and "kazan" in row
    findings = human.stdout.split("Findings:\n")[1].splitlines()
    assert findings == [
        f"  Kazan Central ({B})",
        "    fail threshold: min of Stock!C2:C20 is -3 (fail < 0)",  # its cell is in the message already
        "    fail formula_errors: 1 formula error: #REF! (Stock!B3)",
    ]
    row = next(r for r in json_of(invoke(config, "sheets", "--json"))["sheets"] if r["id"] == B)
    assert row["findings"] == 2 and row["tags"] == ["kazan"]
    assert row["found"][1] == {"check": "formula_errors", "kind": "formula_errors", "status": "fail",
                               "message": "1 formula error: #REF!", "cells": ["Stock!B3"], "gid": None,
                               "owner": None}


def test_sheets_filters_by_tag_status_and_name(config):
    seed(config)
    ids = lambda *args: [row["id"] for row in json_of(invoke(config, "sheets", *args, "--json"))["sheets"]]  # noqa: E731
    assert ids("--tag", "moscow") == [A, C]
    assert ids("--tag", "moscow", "--tag", "kazan") == [A, C, B]
    assert ids("--tag", "moscow", "--status", "error") == [A]
    assert ids("--name", "kazan") == [B]  # part of the name, case does not matter
    assert ids("--name", "store", "--tag", "retail") == [A]
    nothing = invoke(config, "sheets", "--tag", "kazan", "--status", "fail")
    assert nothing.exit_code == 0 and nothing.stdout == "no spreadsheets shown as fail, tagged kazan\n"


# -- mute / unmute


def test_mute_by_tag_mutes_every_spreadsheet_with_it_and_unmute_by_tag_ends_them(config):
    result = invoke(config, "mute", "--tag", "moscow", "--for", "2h", "--reason", "stocktaking", "--json")
    assert result.exit_code == 0
    assert [m["id"] for m in json_of(result)["muted"]] == [A, C]
    assert set(saved_state(config).mutes) == {A, C}
    unmuted = invoke(config, "unmute", "--tag", "moscow")
    assert unmuted.stdout.splitlines() == [
        f"Store 1 ({A}): unmuted " + unmuted.stdout.splitlines()[0].split(": unmuted ")[1],
        f"Store 3 ({C}): unmuted " + unmuted.stdout.splitlines()[1].split(": unmuted ")[1],
    ]
    assert len(saved_state(config).mutes) == 0


def test_mute_by_name_and_url_at_once(config):
    url = f"https://docs.google.com/spreadsheets/d/{C}/edit#gid=0"
    result = invoke(config, "mute", "kazan central", url, "--for", "1h", "--reason", "moving")
    assert result.exit_code == 0
    assert [line.split(" muted until")[0] for line in result.stdout.splitlines()] == [
        f"Kazan Central ({B})", f"Store 3 ({C})"]
    assert set(saved_state(config).mutes) == {B, C}
    assert invoke(config, "unmute", "Kazan Central").exit_code == 0
    assert set(saved_state(config).mutes) == {C}


def test_mute_names_what_matched_when_it_cannot_choose(config):
    ambiguous = invoke(config, "mute", "Store", "--for", "1h", "--reason", "x")
    assert ambiguous.exit_code == 2
    assert f"'Store' fits 2 spreadsheets: Store 1 ({A}); Store 3 ({C})" in ambiguous.stderr
    unknown_tag = invoke(config, "mute", "--tag", "omsk", "--for", "1h", "--reason", "x")
    assert unknown_tag.exit_code == 2
    assert "no configured spreadsheet has the tag 'omsk'; the tags in use: kazan, moscow, retail" \
        in unknown_tag.stderr
    nothing = invoke(config, "mute", "--for", "1h", "--reason", "x")
    assert nothing.exit_code == 2 and "one or more IDs, URLs or names, or --tag TAG" in nothing.stderr
    assert not state_file(config).exists()


# -- dlq purge


def test_dlq_purge_of_every_entry_asks_first(config):
    seed(config)
    declined = invoke_with_input(config, "n\n", "dlq", "purge")
    assert declined.exit_code == 1
    assert "Forget all 1 entries of the dead-letter queue (Store 1)? [y/N]" in declined.stderr
    assert "nothing was purged" in declined.stderr
    assert A in saved_state(config).dlq
    script = invoke_with_input(config, "", "dlq", "purge", "--all")  # no answer: a no
    assert script.exit_code == 1 and A in saved_state(config).dlq
    agreed = invoke_with_input(config, "y\n", "dlq", "purge", "--all")
    assert agreed.exit_code == 0 and "Purged 1 entry" in agreed.stdout
    assert len(saved_state(config).dlq) == 0


def test_dlq_purge_all_yes_asks_nothing_and_an_id_with_all_is_refused(config):
    seed(config)
    assert invoke(config, "dlq", "purge", A, "--all").exit_code == 2
    result = invoke_with_input(config, "", "dlq", "purge", "--all", "--yes", "--json")
    assert result.exit_code == 0 and json_of(result)["purged"] == [A]
    assert "[y/N]" not in result.stderr


def invoke_with_input(config, answer: str, *args: str):
    from click.testing import CliRunner

    from monitor.cli.main import cli

    return CliRunner().invoke(cli, [*args, "--config", str(config)], input=answer, catch_exceptions=False)


# -- status


def unfinished_run(config, now: datetime) -> None:
    with changing_state(state_dir(config), actor="test", now=now) as session:
        session.state.heartbeat = Heartbeat(run_id="run-y", started_at=now - timedelta(seconds=30),
                                            budget_seconds=240)


def test_status_tells_a_run_that_is_running_from_one_that_was_killed(config):
    now = seed(config)
    unfinished_run(config, now)
    killed = invoke(config, "status")
    assert "killed: started" in killed.stdout and "the run lock is free" in killed.stdout
    assert json_of(invoke(config, "status", "--json"))["last_run"]["running"] is False
    lock = FlockLock.in_dir(state_dir(config))
    assert lock.acquire(timeout=0)  # as a run holds it
    try:
        running = invoke(config, "status")
        assert "running now: started" in running.stdout and "holds the run lock" in running.stdout
        assert json_of(invoke(config, "status", "--json"))["last_run"]["running"] is True
    finally:
        lock.release()


def test_status_says_when_it_shows_the_backup_because_the_state_file_is_unreadable(config):
    now = seed(config)
    unfinished_run(config, now + timedelta(seconds=1))  # a second writer: the first's snapshot is .bak
    state_file(config).write_text("{torn")
    result = invoke(config, "status")
    assert result.exit_code == 0
    warning = next(line for line in result.stdout.splitlines() if line.lstrip().startswith("warning"))
    assert f"UNREADABLE: showing its last good copy {state_file(config)}.bak" in warning
    assert "the next run restores it from there" in warning
    repairs = json_of(invoke(config, "status", "--json"))["repairs"]
    assert repairs["from_backup"] is True and str(state_file(config)) in repairs["reason"]
    assert state_file(config).read_text() == "{torn"  # a reader changes nothing
    # The copy and its journals lose nothing: the latest save is shown.
    assert json_of(invoke(config, "status", "--json"))["last_run"]["run_id"] == "run-y"
