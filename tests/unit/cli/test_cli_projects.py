"""`check-config` and `status` with credentials in two Google Cloud projects: the plan per project, the
round at the last run's read time, and the last run's reads per project."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from cli_fixtures import invoke, json_of, state_dir, write_config
from config_fixtures import secrets_folder

from monitor.engine.heartbeat import Heartbeat, RunOutcome, RunStats
from monitor.engine.run_counts import RunCounts
from monitor.state import changing_state


@pytest.fixture
def config(tmp_path):
    """Three spreadsheets; three key files: two in shop-east, one in shop-west."""
    keys = secrets_folder(tmp_path / "keys", ("shop-east", "shop-east", "shop-west")) / "secrets"
    return write_config(tmp_path / "site", credentials=sorted(keys.glob("sa-*.json")))


def limit_reads_in_flight(config, count: int) -> None:
    config.write_text(config.read_text().replace('request_timeout = "5s"',
                                                 f'request_timeout = "5s"\nmax_concurrent_reads = {count}'))


def finished_run(config, stats: RunStats) -> None:
    now = datetime.now(UTC)
    with changing_state(state_dir(config), actor="test", now=now) as session:
        session.state.heartbeat = Heartbeat(
            run_id="run-1", started_at=now - timedelta(minutes=2), budget_seconds=240,
            finished_at=now - timedelta(minutes=1), outcome=RunOutcome.OK, stats=stats)


def test_check_config_prints_each_project_with_its_credentials_and_rate(config):
    result = invoke(config, "check-config", "--offline")
    assert result.exit_code == 0, result.stderr
    assert re.search(r"projects\s+2 \(60/min per credential, 300/min per project\)", result.stdout)
    assert re.search(r"shop-east\s+sa-1.json, sa-2.json: 120 reads/min; alone, a round in 0.0 min",
                     result.stdout)
    assert re.search(r"shop-west\s+sa-3.json: 60 reads/min", result.stdout)
    assert "3 spreadsheets, 3 credentials at 60/min in 2 projects: a full round needs" in result.stdout
    typical = "0.40 s a read (typical of Google; no run has measured one yet): 64 reads in flight"
    assert typical in result.stdout
    data = json_of(invoke(config, "check-config", "--offline", "--json"))
    assert [(p["project"], len(p["credentials"]), p["reads_per_minute"]) for p in data["projects"]] == [
        ("shop-east", 2, 120), ("shop-west", 1, 60)]
    assert data["reads_per_minute"] == 180 and data["max_concurrent_reads"] == 64
    assert data["read_seconds_source"] == "typical"
    assert "PRIVATE KEY" not in result.stdout + result.stderr


def test_check_config_plans_at_the_last_runs_mean_read_time(config):
    limit_reads_in_flight(config, 1)
    finished_run(config, RunStats(RunCounts(tasks=3, reads_by_credential={"x": 3}), mean_read_seconds=150.0))
    result = invoke(config, "check-config", "--offline")
    assert result.exit_code == 0, result.stderr
    # 3 reads of 150 s, one at a time: 7.5 min, longer than the 5-minute round.
    assert "150.00 s a read (the last run's mean): 1 reads in flight (max_concurrent_reads 1), a round in " \
           "7.5 min" in result.stdout
    assert "7.5 min at 150.00 s a read; round_interval 5m: does not fit" in result.stdout
    assert "raise max_concurrent_reads to 2" in result.stdout  # 3 x 150 s / 2 = 225 s: fits 5 minutes
    data = json_of(invoke(config, "check-config", "--offline", "--json"))
    assert (data["read_seconds"], data["read_seconds_source"]) == (150.0, "last_run")
    assert data["fits"] is False and data["round_seconds_at_latency"] == 450.0


def test_status_shows_the_last_runs_reads_per_credential_and_project_and_its_read_time(config):
    reads = {"/k/sa-1.json": 2, "/k/sa-2.json": 2, "/k/sa-3.json": 1}
    finished_run(config, RunStats(RunCounts(tasks=5, reads_by_credential=reads,
                                            reads_by_project={"shop-east": 4, "shop-west": 1}),
                                  mean_read_seconds=0.37, concurrency=4))
    human = invoke(config, "status")
    assert human.exit_code == 0
    assert "5 reads (sa-1.json 2, sa-2.json 2, sa-3.json 1)" in human.stdout
    assert re.search(r"by project\s+shop-east 4, shop-west 1", human.stdout)
    assert re.search(r"reads\s+0.37 s a read on average, at most 4 in flight", human.stdout)
    quota = json_of(invoke(config, "status", "--json"))["quota_last_run"]
    assert quota["by_project"] == {"shop-east": 4, "shop-west": 1}
    assert (quota["mean_read_seconds"], quota["concurrency"]) == (0.37, 4)


def test_status_of_a_run_that_measured_neither_leaves_those_lines_out(config):
    finished_run(config, RunStats(RunCounts(tasks=1, reads_by_credential={"/k/sa-1.json": 1})))
    human = invoke(config, "status")
    assert "1 reads (sa-1.json 1)" in human.stdout
    assert "by project" not in human.stdout and "on average" not in human.stdout
