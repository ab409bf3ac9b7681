"""`check-config`, `check ID` (real gspread against the sandbox over HTTP), and a `dlq retry` that brings a
spreadsheet back through real runs (``run_once``, in-process) against the sandbox."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from cli_fixtures import (
    A,
    B,
    C,
    D,
    invoke,
    json_of,
    saved_state,
    sheet_id,
    state_dir,
    state_file,
    write_config,
)
from paths import REPO

from monitor import admin
from monitor.app.run import run_once
from monitor.checks import Buckets, bucket_number
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.engine.events import ReadableAgain
from monitor.engine.health import ERROR, OK
from monitor.engine.history import SheetHistory
from monitor.state import changing_state
from sheet_sandbox.server import running_sandbox

# -- check-config


def test_check_config_prints_the_plan_and_the_quota_arithmetic(tmp_path):
    config = write_config(tmp_path / "site")
    result = invoke(config, "check-config", "--offline")
    assert result.exit_code == 0
    assert "3 spreadsheets, 1 credential at 60/min: a full round needs at least 0.1 min of quota; " \
           "round_interval 5m: fits" in result.stdout
    data = json_of(invoke(config, "check-config", "--offline", "--json"))
    assert {"spreadsheets", "reads_per_round", "credentials", "round_seconds", "fits", "credentials_needed",
            "summary", "warnings", "valid"} <= set(data)
    assert data["spreadsheets"] == 3 and data["reads_per_round"] == 3 and data["ranges"] == 6
    assert data["valid"] is True
    assert not state_dir(config).exists()  # the plan reads no state


def test_check_config_is_not_ready_with_a_budget_that_outlasts_the_interval(tmp_path):
    path = write_config(tmp_path / "site")
    path.write_text(path.read_text().replace('budget = "4m"', 'budget = "6m"'))
    result = invoke(path, "check-config", "--offline")
    assert result.exit_code == 2  # the config's problem, as a key's would be
    checks = result.stdout.split("\nChecks:\n")[1]
    assert checks.startswith("  problem  run budget: budget 6m does not end before the next round_interval "
                             "(5m) tick")
    assert 'fix: set budget = "4m30s" under [run]' in checks
    assert checks.rstrip().endswith("Not ready: 1 problem above.") and "Ready:" not in result.stdout
    data = json_of(invoke(path, "check-config", "--offline", "--json"))
    assert not any("budget" in warning for warning in data["warnings"])  # said once, as a problem
    [budget] = [check for check in data["checks"] if check["name"] == "run budget"]
    assert budget["ok"] is False and budget["usage"] is True and "4m30s" in budget["fix"]


@pytest.mark.parametrize(("budget", "fits"), [("4m50s", True), ("4m51s", False), ("5m", False)])
def test_a_budget_fits_when_it_leaves_10_seconds_of_the_interval(tmp_path, budget, fits):
    path = write_config(tmp_path / "site")
    path.write_text(path.read_text().replace('budget = "4m"', f'budget = "{budget}"'))
    result = invoke(path, "check-config", "--offline")
    assert result.exit_code == (0 if fits else 2), result.stdout
    line = next(line for line in result.stdout.splitlines() if "run budget:" in line)
    assert line.split()[0] == ("ok" if fits else "problem")
    if fits:
        assert f"{budget} leaves 10s of round_interval (5m, the cron line's interval)" in line


def test_the_default_budget_fits_the_documented_cron_line(tmp_path):
    """crontab.example and the README start a run every 5 minutes; a config that sets neither budget
    nor round_interval must be ready for that line."""
    root = REPO
    [run_line] = [line for line in (root / "crontab.example").read_text().splitlines()
                  if line.endswith("run.log 2>&1") and not line.startswith("#")]
    assert run_line.split()[0] == "*/5"
    assert "cron starts `sheet-monitor run` every 5 minutes" in (root / "README.md").read_text()
    path = write_config(tmp_path / "site")
    path.write_text(path.read_text().replace('budget = "4m"\n', "").replace('round_interval = "5m"\n', ""))
    config = load_config(path, {}, require_secrets=False)
    assert config.run.round_interval == timedelta(minutes=5)
    assert config.run.budget + timedelta(seconds=10) <= config.run.round_interval
    result = invoke(path, "check-config", "--offline")
    assert result.exit_code == 0 and "Ready: the config is valid and every check passed." in result.stdout


def test_check_config_plans_the_reads_of_change_detection_at_a_few_edit_rates(tmp_path):
    config = write_config(tmp_path / "site")  # 3 spreadsheets, max_age 1h by default, rounds 5m apart
    result = invoke(config, "check-config", "--offline")
    assert "change detection  on: a round reads what Drive reports edited and what max_age makes due " \
           "(1h: every 12 rounds for 3); the first round, and any round Drive cannot answer, reads all 3" \
           in result.stdout
    rows = result.stdout.split("by share of spreadsheets edited per round_interval (5m):\n")[1].splitlines()
    assert rows[0].split() == ["edited", "changed", "max_age", "due", "always_read", "reads", "Drive",
                               "requests", "round", "fits"]
    # 20 % of 3 edited (0.6) and 3 / 12 due by max_age (0.25): one read, 1 s at 60 reads/min.
    assert rows[2].split() == ["20%", "0.6", "0.2", "0", "1", "1", "1", "s", "yes"]
    assert [row.split()[0] for row in rows[1:4]] == ["5%", "20%", "50%"]

    data = json_of(invoke(config, "check-config", "--offline", "--edits", "20%", "--edits", "100%", "--json"))
    detection = data["change_detection"]
    assert [row["edit_share"] for row in detection["estimates"]] == [0.2, 1.0]
    assert detection["estimates"][1]["reads_per_round"] == data["reads_per_round"] == 3
    refused = invoke(config, "check-config", "--offline", "--edits", "0.2")
    assert refused.exit_code == 2 and "'0.2' is not a percentage from 0% to 100%, e.g. 20%" in refused.stderr


def test_check_config_says_plainly_when_change_detection_is_off(tmp_path):
    config = write_config(tmp_path / "site", run=("change_detection = false",))
    result = invoke(config, "check-config", "--offline", "--edits", "20%")
    assert "change detection  off ([run] change_detection = false): every round reads all 3 spreadsheets" \
           in result.stdout
    assert "with change detection" not in result.stdout
    data = json_of(invoke(config, "check-config", "--offline", "--json"))
    assert data["change_detection"]["enabled"] is False


def test_check_config_exits_2_on_errors_and_a_missing_credential_file(tmp_path):
    path = write_config(tmp_path / "site", credentials=[tmp_path / "missing.json"])
    result = invoke(path, "check-config", "--offline")
    assert result.exit_code == 2 and "missing.json not found" in result.stderr
    # Read-only commands do not need the credential files.
    assert invoke(path, "status").exit_code == 0
    assert invoke(tmp_path / "nowhere.toml", "check-config", "--offline").exit_code == 2


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
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
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
    assert result.exit_code == 1  # a check fails
    data = json_of(result)
    # One read gives the values, the errors' details and the formulas (none moves without an edit).
    assert data["health"] == "fail" and data["quota_spent"]["reads"] == 1
    assert data["volatile"] == [] and data["warnings"] == []
    by_kind = {r["kind"]: r for r in data["results"]}
    assert by_kind["formula_errors"]["cells"] == ["Stock!B3"]
    assert by_kind["threshold"]["status"] == "fail" and by_kind["threshold"]["cells"] == ["Stock!C2"]
    human = invoke(path, "check", B, "--exit-zero")
    assert human.exit_code == 0
    assert "Stock!B3" in human.stdout and "Spent one read of sa-1.json's quota" in human.stderr
    # One read each: a spreadsheets.get whose grid data says what each error cell is and its formula.
    assert sandbox.google.stats.snapshot()["by_endpoint"] == {"GET /v4/spreadsheets/{id}": 2}
    assert not state_file(path).exists()


def test_check_takes_a_url_or_a_name_and_exits_0_when_the_checks_pass(sandbox_site):
    sandbox, _, path = sandbox_site
    url = f"https://docs.google.com/spreadsheets/d/{A}/edit#gid=0"
    by_url = invoke(path, "check", url, "--json")
    assert by_url.exit_code == 0 and json_of(by_url)["id"] == A
    by_name = invoke(path, "check", "store 1")  # case does not matter
    assert by_name.exit_code == 0 and by_name.stdout.startswith(f"Store 1 ({A}): ok")
    assert invoke(path, "check", "Store 2").exit_code == 1  # its threshold fails


def test_check_of_a_name_that_fits_several_lists_them_and_exits_2(sandbox_site):
    sandbox, _, path = sandbox_site
    result = invoke(path, "check", "Store")
    assert result.exit_code == 2
    assert f"'Store' fits 4 spreadsheets: Store 1 ({A}); Store 2 ({B}); Store 3 ({C}); Store 4 ({D})." \
        in result.stderr
    assert "Give the id or the URL" in result.stderr
    assert reads(sandbox) == 0
    # A URL the config does not list is read (tests/unit/cli/test_cli_suggest.py): here Google has no
    # such spreadsheet.
    unknown = invoke(path, "check", "https://docs.google.com/spreadsheets/d/1unknownSpreadsheetIdxxxxxx/edit")
    assert unknown.exit_code == 1
    assert unknown.stdout.startswith("1unknownSpreadsheetIdxxxxxx: could not be read: permanent (HTTP 404)")
    assert reads(sandbox) == 1


def reads(sandbox) -> int:
    return sum(sandbox.google.stats.snapshot()["by_endpoint"].values())


def volatile_stock() -> dict:
    """Stock with a NOW() and an IMPORTRANGE in checked cells (their values as Google would have
    computed them: the sandbox does not), and a SUM, which moves only when its inputs are edited."""
    rows = [["SKU", "Product", "Quantity"],
            ["A-1", {"formula": "=NOW()", "value": 46021.5}, 10],
            ["A-2", "Milk", {"formula": '=IMPORTRANGE("1otherSheet", "Stock!C3")', "value": 12}],
            ["Total", "", {"formula": "=SUM(C2:C3)", "value": 22}]]
    return {"title": "Store", "tabs": {"Stock": rows}}


def test_check_warns_about_formulas_whose_values_change_without_an_edit(sandbox_site):
    sandbox, _, path = sandbox_site
    sandbox.google.store.put_control(A, volatile_stock())
    data = json_of(invoke(path, "check", A, "--json"))
    assert data["health"] == "ok" and data["quota_spent"]["reads"] == 1
    assert data["volatile"] == [{"cell": "Stock!B2", "functions": ["NOW"]},
                                {"cell": "Stock!C3", "functions": ["IMPORTRANGE"]}]
    [warning] = data["warnings"]
    assert "only when max_age (1h) comes due" in warning
    assert warning.endswith("to read this spreadsheet every round, set always_read = true in "
                            "[profiles.stock]")
    human = invoke(path, "check", A)
    assert "Warning: Stock!B2 NOW(); Stock!C3 IMPORTRANGE(): these values change without an edit" \
           in human.stdout
    assert reads(sandbox) == 2  # one each: the values and the formulas come in one answer


def test_check_warns_of_no_formulas_in_a_spreadsheet_every_round_reads_anyway(sandbox_site, tmp_path):
    sandbox, _, path = sandbox_site
    sandbox.google.store.put_control(A, volatile_stock())
    site = {"credentials": list(load_config(path, {}).google.credentials), "endpoint": sandbox.base_url}
    live = ('\n[profiles.live]\nalways_read = true\n'
            'checks = [{ kind = "formula_errors", range = "Stock!A1:C20" }]\n'
            f'\n[[sheets]]\nid = "{A}"\nname = "Live"\nprofile = "live"\n')
    always_read = write_config(tmp_path / "always", ids=(), extra=live, **site)
    detection_off = write_config(tmp_path / "off", ids=(A,), run=("change_detection = false",), **site)
    for config in (always_read, detection_off):
        data = json_of(invoke(config, "check", A, "--json"))
        assert data["health"] == "ok" and data["volatile"] is None and data["warnings"] == []
        assert data["quota_spent"]["reads"] == 1
    assert reads(sandbox) == 2


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


def test_check_of_a_renamed_tab_names_the_tabs_found_and_counts_their_request_as_spent(sandbox_site):
    sandbox, _, path = sandbox_site
    renamed = stock()
    renamed["tabs"] = {"Stock 2024": renamed["tabs"]["Stock"]}
    sandbox.google.store.put_control(A, renamed)
    before = reads(sandbox)
    data = json_of(invoke(path, "check", A, "--json"))
    assert data["error"]["http_status"] == 400 and data["error"]["tabs"] == ["Stock 2024"]
    assert data["quota_spent"]["reads"] == 2 == reads(sandbox) - before  # the read and the tabs' request


# -- dlq retry through real runs


def test_dlq_retry_after_access_is_restored_brings_it_back_healthy_with_a_recovered_event(sandbox_site):
    sandbox, clock, path = sandbox_site
    config = load_config(path, {})
    sandbox.google.faults.add({"spreadsheet": A, "statuses": [403], "repeat": True})
    run_once(config, clock=clock, messages_to=io.StringIO())
    assert A in saved_state(path).dlq and saved_state(path).health[A].health is ERROR

    sandbox.google.faults.clear(A)  # someone shared the spreadsheet with the service account again
    clock.advance(30)
    retried = invoke(path, "dlq", "retry", A, "--json")
    assert json_of(retried)["retried"][0]["due"] == "current_round"

    result = run_once(config, clock=clock, messages_to=io.StringIO())
    state = saved_state(path)
    assert state.health[A].health is OK and A not in state.dlq
    recovered = [e for e in result.new_events if isinstance(e, ReadableAgain)]
    assert [e.spreadsheet_id for e in recovered] == [A]
    assert result.report.counts.tasks == 1  # only the retried spreadsheet: the round was otherwise done


def test_a_retry_between_rounds_puts_the_spreadsheet_first_in_the_next_round(sandbox_site):
    sandbox, clock, path = sandbox_site
    config = load_config(path, {})
    sandbox.google.store.put_control(C, stock())
    sandbox.google.faults.add({"spreadsheet": C, "statuses": [403], "repeat": True})
    run_once(config, clock=clock, messages_to=io.StringIO())
    first_round = saved_state(path).round
    in_order = [first_round.tasks[id].target for id in sorted(first_round.tasks)]
    assert in_order == [A, B, C, D]  # never checked: config order

    sandbox.google.faults.clear(C)
    clock.advance(6 * 60)  # the round is done and its interval has passed
    # The command's own clock is the system's; the runs here live on the manual clock.
    with changing_state(state_dir(path), actor="admin-dlq-retry", now=clock.now(), wait=1) as session:
        [result] = admin.dlq_retry(session.state, [C], clock.now(), config.run.round_interval)
    assert result["due"] == "next_round"
    run_once(config, clock=clock, messages_to=io.StringIO())
    state = saved_state(path)
    assert state.round.id != first_round.id
    assert state.round.tasks[min(state.round.tasks)].target == C
    assert C not in state.dlq and state.retry_first.spreadsheet_ids == ()


def test_check_shows_an_anomaly_checks_baseline_and_sheets_what_still_learns(sandbox_site):
    sandbox, clock, path = sandbox_site
    E = sheet_id(5)  # noqa: N806 - as the fixtures name theirs
    anomaly = ('\n[profiles.learnt]\n'
               'checks = [{ kind = "anomaly", range = "Stock!A2:A", seasonality = "none", '
               'min_history = "7d" }]\n'
               f'\n[[sheets]]\nid = "{E}"\nname = "Store 5"\nprofile = "learnt"\n')
    path.write_text(path.read_text() + anomaly)
    sandbox.google.store.put_control(E, stock())
    name = "anomaly row_count Stock!A2:A"
    today = bucket_number(clock.now(), UTC, "day")
    with changing_state(state_dir(path), actor="admin-test", now=clock.now()) as session:
        session.state.history[E] = SheetHistory(clock.now(), buckets={name: Buckets(today - 10, (2.0,) * 10)})
    result = invoke(path, "check", E)
    assert result.exit_code == 0
    assert f"Baselines:\n  {name}: 2 rows in Stock!A2:A, usually 2 (10 days)" in result.stdout
    with changing_state(state_dir(path), actor="admin-test", now=clock.now()) as session:
        session.state.history[E] = SheetHistory(clock.now(), buckets={name: Buckets(today - 3, (2.0,) * 3)})
    assert "2 rows in Stock!A2:A; learning, 3 of 7 days" in invoke(path, "check", E).stdout
    sheets = invoke(path, "sheets")
    assert f"Learning (no alerts yet):\n  Store 5: {name}: learning, 2 of 7 days" in sheets.stdout
    [row] = [row for row in json_of(invoke(path, "sheets", "--json"))["sheets"] if row["id"] == E]
    assert row["learning"] == [{"check": name, "text": "learning, 2 of 7 days"}]
