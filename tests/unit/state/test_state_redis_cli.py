"""The monitor on ``[state] backend = "redis"``: a real run against the sandbox, then the commands,
the watchdog and check-config; and a Redis that does not answer, told with exit 1 and its fix.

Each test keeps its state under a key prefix of its own (``redis_location``) on the machine's Redis.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime

from cli_fixtures import A, B, C, invoke, json_of, state_dir, write_config
from redis_fixtures import REDIS_URL

from monitor.app.run import run_once
from monitor.cli.watchdog import run_watchdog
from monitor.config import load_config
from monitor.config.sections import host_runner_name
from monitor.core.clock import ManualClock
from monitor.engine.heartbeat import RunOutcome
from monitor.state import read_state
from sheet_sandbox.server import running_sandbox

NOWHERE = "redis://127.0.0.1:1/0"  # nothing listens on port 1
PASSWORD = "pw-that-must-never-show"


def state_section(url: str, prefix: str) -> str:
    return f'\n[state]\nbackend = "redis"\nurl = "{url}"\nprefix = "{prefix}"\n'


def stock() -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", 10]]}}


def test_a_run_on_redis_then_status_an_admin_command_and_check_config_use_it_there(tmp_path, redis_location):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        for sid in (A, B, C):
            sandbox.google.store.put_control(sid, stock())
        config = write_config(tmp_path, credentials=sandbox.write_credentials(tmp_path / "keys", 1),
                              endpoint=sandbox.base_url,
                              extra=state_section(REDIS_URL, redis_location.prefix))
        result = run_once(load_config(config, {}), clock=clock, messages_to=io.StringIO())
    assert result.report.outcome is RunOutcome.OK

    saved = read_state(redis_location)
    assert saved is not None and saved.round is not None and len(saved.round) == 3
    assert not (state_dir(config) / "properties.json").exists()  # nothing went to the folder

    status = json_of(invoke(config, "status", "--json"))
    assert status["has_run"] and status["current_round"]["done"] == 3
    assert redis_location.prefix in status["state_file"]

    told = io.StringIO()  # the watchdog reads the heartbeat from Redis: a healthy runner, nothing to say
    assert run_watchdog(config, told, clock=clock) == 0 and told.getvalue() == ""

    muted = invoke(config, "mute", B, "--for", "2h", "--reason", "stock count")
    assert muted.exit_code == 0, muted.output
    assert B in read_state(redis_location).mutes

    checked = invoke(config, "check-config", "--offline")
    assert checked.exit_code == 0, checked.output
    assert "state on Redis" in checked.output and "answers" in checked.output
    assert f"lock:run-{host_runner_name()}" in checked.output  # the lock this host's runs take

    # The counters this host's runner keeps under its own name, as its runs publish them.
    metrics = invoke(config, "metrics")
    assert metrics.exit_code == 0, metrics.output
    assert "sheet_monitor_tasks_done_total 3.0" in metrics.stdout.splitlines()


def test_a_run_whose_redis_does_not_answer_exits_1_saying_which_and_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("SHEET_MONITOR_REDIS_PASSWORD", PASSWORD)
    config = write_config(tmp_path, extra=state_section(NOWHERE, "p"))

    result = invoke(config, "run", "--no-progress")

    assert result.exit_code == 1
    assert "cannot reach the state on Redis 127.0.0.1:1" in result.stderr
    assert "[state] url" in result.stderr and "Traceback" not in result.output
    assert PASSWORD not in result.output


def test_check_config_says_redis_does_not_answer_exit_1(tmp_path, monkeypatch):
    monkeypatch.setenv("SHEET_MONITOR_REDIS_PASSWORD", PASSWORD)
    config = write_config(tmp_path, extra=state_section(NOWHERE, "p"))

    result = invoke(config, "check-config", "--offline")

    assert result.exit_code == 1
    assert "cannot reach the state on Redis 127.0.0.1:1" in result.output
    assert PASSWORD not in result.output


def test_the_watchdog_says_the_state_on_redis_cannot_be_reached(tmp_path, monkeypatch):
    monkeypatch.setenv("SHEET_MONITOR_REDIS_PASSWORD", PASSWORD)
    config = write_config(tmp_path, extra=state_section(NOWHERE, "p"))
    told = io.StringIO()

    run_watchdog(config, told, clock=ManualClock(datetime.now(UTC)))

    assert "cannot reach the state on Redis 127.0.0.1:1" in told.getvalue()
    assert PASSWORD not in told.getvalue()


def test_status_before_the_first_run_on_redis_names_where_the_state_will_be(tmp_path, redis_location):
    config = write_config(tmp_path, extra=state_section(REDIS_URL, redis_location.prefix))
    result = invoke(config, "status")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("No run yet: no state is saved at ")
    assert redis_location.prefix in result.stdout and "state file" not in result.stdout


def test_check_judges_a_spreadsheet_against_the_history_the_runs_keep_on_redis(tmp_path, redis_location):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    headers = ('\n[profiles.headed]\nchecks = [{ kind = "headers_changed", range = "Stock!1:1" }]\n'
               f'\n[[sheets]]\nid = "{C}"\nname = "Headed"\nprofile = "headed"\n')
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        sandbox.google.store.put_control(C, stock())
        config = write_config(tmp_path, ids=(), credentials=sandbox.write_credentials(tmp_path / "keys", 1),
                              endpoint=sandbox.base_url,
                              extra=headers + state_section(REDIS_URL, redis_location.prefix))
        run_once(load_config(config, {}), clock=clock, messages_to=io.StringIO())  # keeps the header row
        renamed = stock()
        renamed["tabs"]["Stock"][0][2] = "Qty"
        sandbox.google.store.put_control(C, renamed)
        checked = invoke(config, "check", C, "--json")
    # Judged against the header row the run kept on Redis (a state folder, empty, would make it a
    # first read, which passes).
    [result] = json_of(checked)["results"]
    assert result["kind"] == "headers_changed" and result["status"] == "warn", result
    assert "Qty" in result["message"] and "Quantity" in result["message"], result
