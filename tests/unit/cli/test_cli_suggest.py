"""`suggest URL...` and `check URL` of a spreadsheet the config does not list: real gspread against the
sandbox over HTTP, on generated stores."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from cli_fixtures import A, invoke, json_of, state_file, write_config

from monitor.app.suggest import suggest_for
from monitor.config import load_config
from monitor.core.clock import ManualClock
from sheet_sandbox import dataset
from sheet_sandbox.server import running_sandbox


@pytest.fixture
def stores(tmp_path):
    """(sandbox, config path, healthy stores, the catalogue, a store with formula errors): generated
    spreadsheets served without their faults; the config lists none of them."""
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth: real time
    data = dataset.generate(40, seed=11, now=clock.now())
    healthy = data.healthy()[:3]
    [catalogue] = data.of_kind("catalogue")
    [broken, *_] = data.of_kind("formula_errors")
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        for entry in [*healthy, catalogue, broken]:
            sandbox.google.store.put_control(entry.id, data.payloads[entry.id])
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        path = write_config(tmp_path / "site", ids=(A,), credentials=credentials, endpoint=sandbox.base_url)
        yield sandbox, clock, path, healthy, catalogue, broken


def url(sheet_id: str) -> str:
    return f"https://docs.google.com/spreadsheets/d/{sheet_id}/edit#gid=0"


def reads(sandbox) -> dict:
    return sandbox.google.stats.snapshot()["by_endpoint"]


def test_suggest_reads_each_spreadsheet_once_and_its_proposal_passes_check_config_and_check(stores, tmp_path):
    sandbox, _, site, healthy, catalogue, _ = stores
    # A newcomer's config: only where the keys are and the state goes, no spreadsheet yet.
    credentials = [str(p) for p in load_config(site, {}).google.credentials]
    path = tmp_path / "new" / "monitor.toml"
    path.parent.mkdir()
    path.write_text(f'[run]\nstate_dir = "state"\n\n[google]\ncredentials = {json.dumps(credentials)}\n'
                    f'api_endpoint = "{sandbox.base_url}"\n')
    assert invoke(path, "check-config", "--offline").exit_code == 2  # nothing to monitor yet
    result = invoke(path, "suggest", url(healthy[0].id), healthy[1].id, url(healthy[2].id), catalogue.id)
    assert result.exit_code == 0, result.stderr
    assert reads(sandbox) == {"GET /v4/spreadsheets/{id}": 4}  # one read each, nothing more
    text = result.stdout
    assert "[profiles.suggested]" in text and "[profiles.suggested_2]" in text
    assert "# column 'Updated' holds dates, newest " in text and "freshness warn > 1d" in text
    assert f'other = "{catalogue.title}"' in text  # the stores' SKUs are the catalogue's
    assert "Read 4 spreadsheets of 4, 4 reads of quota; nothing was recorded." in result.stderr
    proposed = path.parent / "proposed.toml"
    proposed.write_text(path.read_text() + "\n" + text)
    checked = invoke(proposed, "check-config", "--offline")
    assert checked.exit_code == 0, checked.output
    for entry in [catalogue, *healthy]:  # the catalogue first: its read lends the stores its SKUs
        one = invoke(proposed, "check", entry.id, "--json")
        assert one.exit_code == 0 and json_of(one)["health"] == "ok", one.stdout
    assert not state_file(path).exists()


def test_check_url_of_an_unlisted_spreadsheet_judges_it_by_the_suggested_checks_or_a_profile(stores):
    sandbox, _, path, healthy, _, broken = stores
    assert invoke(path, "check", "Store 9").exit_code == 2  # a name must be a configured one
    result = invoke(path, "check", url(healthy[0].id))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{healthy[0].title} ({healthy[0].id}): ok")
    assert "Not in the config: judged by the " in result.stdout and "`sheet-monitor suggest` proposes" \
        in result.stdout
    assert "Spent 2 reads of sa-1.json's quota" in result.stderr  # the suggestion's read, then the check's
    data = json_of(invoke(path, "check", healthy[0].id, "--json"))
    assert data["judged_by"] == "suggested" and data["quota_spent"]["reads"] == 2
    by_profile = invoke(path, "check", url(broken.id), "--profile", "stock", "--json")
    assert by_profile.exit_code == 1  # the profile's formula_errors check fails
    data = json_of(by_profile)
    assert data["judged_by"] == "profile" and data["health"] == "fail" and data["quota_spent"]["reads"] == 1
    unknown = invoke(path, "check", url(broken.id), "--profile", "nope")
    assert unknown.exit_code == 2 and "--profile nope: no such profile" in unknown.stderr
    assert "its profiles: stock" in unknown.stderr


def test_a_spreadsheet_that_cannot_be_read_is_named_and_the_others_are_still_proposed(stores):
    sandbox, _, path, healthy, _, _ = stores
    missing = "1" + "m" * 43
    result = invoke(path, "suggest", missing, healthy[0].id)
    assert result.exit_code == 1
    assert f"{missing}: could not be read (HTTP 404)" in result.stderr
    assert result.stdout.count("[[sheets]]") == 1 and healthy[0].id in result.stdout
    check = invoke(path, "check", missing)
    assert check.exit_code == 1 and "could not be read" in check.stdout
    assert invoke(path, "suggest", "not a spreadsheet").exit_code == 2
    assert invoke(path, "suggest", healthy[0].id, "--name", "two words").exit_code == 2


def test_suggest_paces_its_reads_through_the_runs_quota(stores):
    sandbox, clock, path, healthy, catalogue, broken = stores
    path.write_text(path.read_text().replace('request_timeout = "5s"',
                                             'request_timeout = "5s"\nread_requests_per_minute = 2'))
    config = load_config(path, {})
    sandbox.google.quota.set_limits(read_per_user=2)  # Google refuses a third read within the minute
    started = clock.now()
    suggestion = suggest_for(config, [entry.id for entry in [*healthy, catalogue]], clock)
    assert suggestion.reads == 4 and not suggestion.unread
    # Two reads a minute: the third and the fourth wait for the first two's minute to pass.
    assert clock.now() - started >= timedelta(seconds=60)
    assert sandbox.google.stats.snapshot()["quota_exceeded"] == 0


def test_suggest_tries_a_failure_that_passes_again_and_names_one_that_lasts(stores):
    sandbox, clock, path, healthy, catalogue, broken = stores
    config = load_config(path, {})
    passing, lasting, refused = (entry.id for entry in healthy)
    sandbox.google.faults.add({"spreadsheet": passing, "statuses": [503, 429]})  # then answers
    sandbox.google.faults.add({"spreadsheet": lasting, "statuses": [503], "repeat": True})
    sandbox.google.faults.add({"spreadsheet": refused, "statuses": [403], "repeat": True})
    started = clock.now()
    suggestion = suggest_for(config, [passing, lasting, refused], clock)
    assert [survey.id for survey in suggestion.surveys] == [passing]
    assert {unread.sheet_id for unread in suggestion.unread} == {lasting, refused}
    by_sheet = sandbox.google.stats.snapshot()["by_spreadsheet"]
    tries = {sheet: sum(by_sheet[sheet].values()) for sheet in (passing, lasting, refused)}
    assert tries == {passing: 3, lasting: 3, refused: 1}  # a 403 cannot pass: tried once
    assert clock.now() - started >= timedelta(seconds=3 + 9)  # the runs' backoff after each 503
