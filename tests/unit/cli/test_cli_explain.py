"""`check-config` says what each check does in a sentence; `check ID` shows each check's measured
value, its condition and its verdict (real gspread against the sandbox)."""

from __future__ import annotations

from datetime import UTC, datetime

from cli_fixtures import A, B, invoke, json_of, write_config

from monitor.core.clock import ManualClock
from sheet_sandbox.server import running_sandbox

OWN_CHECK = """
[[sheets.checks]]
kind = "threshold"
range = "Stock!C2:C20"
aggregate = "avg"
where = "B != 'Discontinued'"
warn = "< 10"
severity = "warn"
owner = "@ivan"
"""


def test_check_config_explains_each_profiles_checks_and_a_spreadsheets_own(tmp_path):
    config = write_config(tmp_path / "site", ids=(A, B), extra=OWN_CHECK)
    result = invoke(config, "check-config", "--offline")
    assert result.exit_code == 0, result.output
    told = result.stdout.split("What the checks do:\n")[1]
    assert told.splitlines()[:5] == [
        "  profile stock (2 spreadsheets):",
        "    - formula_errors Stock!A1:C20: fails when a cell of Stock!A1:C20 shows a formula error "
        "(#REF!, #N/A, #DIV/0!, #VALUE!...)",
        "    - threshold min Stock!C2:C20: fails when Stock!C2:C20 has a value below 0; warns when "
        "Stock!C2:C20 has a value below 5",
        f"  Store 2 ({B}), its own:",
        "    - threshold avg Stock!C2:C20: warns when the average of the numbers in Stock!C2:C20 (rows "
        "where B != 'Discontinued') is below 10 (owner: @ivan)",
    ]
    data = json_of(invoke(config, "check-config", "--offline", "--json"))
    assert [group.get("profile") or group["sheet"] for group in data["explanations"]] == ["stock", B]
    assert data["explanations"][1]["checks"][0] == {
        "name": "threshold avg Stock!C2:C20", "kind": "threshold", "severity": "warn", "owner": "@ivan",
        "explanation": "warns when the average of the numbers in Stock!C2:C20 (rows where "
                       "B != 'Discontinued') is below 10"}


def test_check_shows_each_checks_value_condition_and_verdict(tmp_path):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth's JWTs: real time
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        rows = [["SKU", "Product", "Quantity"], ["A-1", "Tea", 3], ["A-2", "Discontinued", 40],
                ["A-3", "Milk", 9]]
        sandbox.google.store.put_control(B, {"title": "Store", "tabs": {"Stock": rows}})
        path = write_config(tmp_path / "site", ids=(A, B), credentials=credentials,
                            endpoint=sandbox.base_url, extra=OWN_CHECK)
        human = invoke(path, "check", B)
        data = json_of(invoke(path, "check", B, "--json"))

    assert human.exit_code == 0, human.output
    header, *lines = human.stdout.splitlines()[1:5]
    assert header.split()[:4] == ["check", "status", "value", "condition"]
    minimum = next(line for line in lines if line.startswith("threshold min"))
    assert minimum.split()[3:10] == ["warn", "3", "fail", "min", "<", "0;", "warn"]
    by_name = {result["check_name"]: result for result in data["results"]}
    # Rows 2 and 4 only (3 and 9): row 3 is discontinued. Below 10, but it only ever warns.
    average = by_name["threshold avg Stock!C2:C20"]
    assert (average["status"], average["observed"], average["owner"], average["severity"]) == \
        ("warn", 6, "@ivan", "warn")
    assert average["condition"] == "warn avg < 10 (severity warn: never fails)"
    assert average["explanation"].startswith("warns when the average of the numbers in Stock!C2:C20")
    assert by_name["threshold min Stock!C2:C20"]["condition"] == "fail min < 0; warn min < 5"
