"""A credential that cannot read at all, through real gspread and google-auth against the sandbox: a
service account Google does not know (``invalid_grant``, "account not found"), a key Google refuses
every time, a private key whose PEM is damaged.

It is the credential's own problem, not the spreadsheets' and not Google failing: the run stops using
it, the other credentials read every spreadsheet, nothing is dead-lettered, and people hear once which
file and which account, and what to do; once more when it reads again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from key_files import damaged_key, unknown_account
from run_fixtures import kinds, of_run
from sandbox_bench import sandbox_bench
from test_run import World

from monitor.engine.events import ApiDegraded, CredentialRefused, CredentialWorksAgain, DeadLettered
from monitor.engine.health import OK
from monitor.engine.heartbeat import RunOutcome


@pytest.fixture
def world(tmp_path):
    with sandbox_bench(World, tmp_path) as bench:
        yield bench


def refused(run) -> list[CredentialRefused]:
    return [event for event in of_run(run) if isinstance(event, CredentialRefused)]


def test_an_account_google_does_not_know_is_told_once_and_the_other_credential_reads_everything(
        world: World, tmp_path):
    ids = world.add_sheets(6)
    [good] = world.credentials
    gone = unknown_account(tmp_path / "secrets", f"{world.sandbox.base_url}/token")
    world.use_credentials([gone, good])
    run = world.run()
    assert run.report.outcome == RunOutcome.OK and run.report.counts.tasks_done == 6
    assert {run.state.health[sid].health for sid in ids} == {OK}
    [event] = refused(run)
    assert event.credential == str(gone) and event.email == "gone@monitor-proj.iam.gserviceaccount.com"
    assert "Google does not know this service account" in event.problem
    assert "account not found" in event.problem and "the account was deleted" in event.fix
    assert not {DeadLettered.KIND, ApiDegraded.KIND} & set(kinds(of_run(run)))
    assert {task.attempts for task in run.state.round.tasks.values()} == {1}  # the refusal cost none
    told = world.told()
    assert f"Credential {gone}" in told and "gone@monitor-proj.iam.gserviceaccount.com" in told
    assert "Google API degraded" not in told

    again = world.run()  # the next round: still refused, not told again
    assert refused(again) == []


def test_a_run_whose_only_credential_is_unknown_stops_at_once_and_says_why(world: World, tmp_path):
    world.add_sheets(5)
    world.use_credentials([unknown_account(tmp_path / "secrets", f"{world.sandbox.base_url}/token")])
    run = world.run()
    assert run.report.stop_reason == "no_usable_credential" and run.report.outcome == RunOutcome.DEGRADED
    assert len(refused(run)) == 1 and ApiDegraded.KIND not in kinds(of_run(run))
    assert world.reads() == 0
    assert all(task.attempts == 0 for task in run.state.round.tasks.values())  # no spreadsheet blamed


def test_a_key_refused_every_time_is_the_keys_problem_after_three_refusals(world: World):
    world.add_sheets(4)
    world.fault("/token", statuses=[400], repeat=True)
    run = world.run()
    [event] = refused(run)
    assert "Google refuses its key 3 times in a row" in event.problem
    assert "Invalid JWT Signature." in event.problem
    assert "private_key_id" in event.fix
    assert ApiDegraded.KIND not in kinds(of_run(run)) and DeadLettered.KIND not in kinds(of_run(run))
    assert run.report.stop_reason == "no_usable_credential"
    assert all(task.attempts == 0 for task in run.state.round.tasks.values())  # no spreadsheet blamed


def test_a_damaged_private_key_is_told_with_its_file_and_the_other_credential_reads(world: World, tmp_path):
    ids = world.add_sheets(4)
    [good] = world.credentials
    damaged = damaged_key(tmp_path / "secrets", Path(good))
    world.use_credentials([damaged, good])
    run = world.run()
    assert run.report.counts.tasks_done == 4 and {run.state.health[sid].health for sid in ids} == {OK}
    [event] = refused(run)
    assert event.credential == str(damaged) and "does not load as an RSA private key" in event.problem
    assert "add a new JSON key" in event.fix and "BEGIN" not in event.problem + event.fix


def test_a_credential_that_reads_again_is_told_once(world: World, tmp_path):
    world.add_sheets(3)
    [good] = world.credentials
    damaged = damaged_key(tmp_path / "secrets", Path(good))
    world.use_credentials([damaged])
    world.run()
    damaged.write_text(Path(good).read_text())  # a new key in the same file
    world.use_credentials([damaged])
    run = world.run()
    assert [type(event) for event in of_run(run) if isinstance(event, CredentialWorksAgain)] == [
        CredentialWorksAgain]
