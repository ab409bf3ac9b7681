"""The metrics: `[metrics]` in the config, `sheet-monitor metrics` on a state as runs leave it, the
push held to its time, the totals that keep counters monotonic, and the example alerting rules."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from cli_fixtures import A, B, C, invoke, seed, state_dir, write_config
from config_fixtures import MINIMAL, error_of, load, secrets_folder
from metrics_fixtures import families, labelled, pushgateway, values
from paths import REPO
from prometheus_client import CollectorRegistry, Gauge
from telegram_fixtures import closed_port_url

from monitor.app.metrics_step import publish_metrics, push
from monitor.config import MetricsConfig
from monitor.config.sections import PER_SHEET_MAX
from monitor.engine.run_counts import READ_SECONDS_BUCKETS, RunCounts, bucket_of
from monitor.engine.totals import RunTotals
from monitor.state import State, changing_state

RULES = REPO / "docs" / "prometheus-rules.yml"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


# -- [metrics] ---------------------------------------------------------------------------------------


def test_without_a_metrics_section_nothing_is_written_or_pushed(folder):
    metrics = load(folder, MINIMAL, env={}).metrics
    assert (metrics.textfile, metrics.pushgateway, metrics.job, metrics.per_sheet) == (
        None, None, "sheet_monitor", False)


def test_the_textfile_is_resolved_from_the_configs_folder(folder):
    config = load(folder, MINIMAL + '\n[metrics]\ntextfile = "prom/sheet_monitor.prom"\n', env={})
    assert config.metrics.textfile == (folder / "prom" / "sheet_monitor.prom").resolve()


@pytest.mark.parametrize(("table", "expected"), [
    ('textfile = "metrics.txt"', "expected a path ending in .prom"),
    ('pushgateway = "ftp://gw:9091"', "is not an http(s) URL"),
    ('pushgateway = "http://ops:pw-in-file@gw:9091"', "pushgateway: the URL holds a user or password"),
    ('job = "a/b"', "job must be non-empty text without '/'"),
    ("per_sheet = 1", "metrics.per_sheet"),
    ("textfiles = 1", "unknown key 'textfiles'"),
])
def test_a_metrics_section_that_cannot_work_is_an_error_at_its_line(folder, table, expected):
    message = error_of(folder, MINIMAL + f"\n[metrics]\n{table}\n", env={})
    assert "monitor.toml:9: metrics." in message and expected in message
    assert "pw-in-file" not in message


def test_per_sheet_is_refused_for_a_fleet_too_large_for_a_series_per_spreadsheet(folder):
    rows = "".join(f"1Big{n:040d},Store {n},,\n" for n in range(PER_SHEET_MAX + 1))
    text = ('sheets_file = "sheets.csv"\n[google]\ncredentials = ["secrets/sa-1.json"]\n'
            '[profiles.p]\nchecks = [{ kind = "formula_errors", range = "S!A1:B2" }]\n'
            '[metrics]\nper_sheet = true\n')
    csv = "id,name,profile,tags\n" + rows.replace(",,", ",p,")
    message = error_of(folder, text, csv=csv, env={})
    assert f"metrics.per_sheet: per_sheet = true with {PER_SHEET_MAX + 1} spreadsheets" in message
    assert "remove per_sheet" in message
    rows_ok = "".join(f"1Big{n:040d},Store {n},p,\n" for n in range(PER_SHEET_MAX))
    assert load(folder, text, csv="id,name,profile,tags\n" + rows_ok, env={}).metrics.per_sheet


# -- totals --------------------------------------------------------------------------------------------


def test_read_times_fall_in_the_first_bucket_that_holds_them():
    assert [bucket_of(s) for s in (0.05, 0.1, 0.4, 29.9, 30.0, 31.0)] == [0, 0, 2, 7, 7, 8]
    assert len(READ_SECONDS_BUCKETS) == 8


def test_totals_add_each_runs_stats_and_never_fall():
    one = RunCounts(tasks_done=3, dead_lettered=1, reads_by_credential={"k1": 4}, reads_by_project={"p": 4},
                    quota_refusals=2, retries_by_class={"transient": 1},
                    read_seconds_buckets=(1, 0, 3, 0, 0, 0, 0, 0, 0), read_seconds_sum=1.3)
    two = RunCounts(tasks_done=1, reads_by_credential={"k1": 1, "k2": 2}, retries_by_class={"uncertain": 1},
                    read_seconds_buckets=(0, 1, 0, 0, 0, 0, 0, 0, 1), read_seconds_sum=40.2)
    before_read_times = RunCounts(read_seconds_buckets=())
    totals = RunTotals().add("ok", one).add("degraded", two).add("ok", before_read_times)
    assert totals.runs_by_outcome == {"ok": 2, "degraded": 1}
    counts = totals.counts
    assert (counts.tasks_done, counts.dead_lettered, counts.quota_refusals) == (4, 1, 2)
    assert counts.reads_by_credential == {"k1": 5, "k2": 2}
    assert counts.retries_by_class == {"transient": 1, "uncertain": 1}
    assert counts.read_seconds_buckets == (1, 1, 3, 0, 0, 0, 0, 0, 1)
    assert counts.read_seconds_sum == 41.5  # a run before read times were counted adds none


def test_the_queue_tasks_partition_the_round_with_retries_apart_from_fresh_tasks():
    from datetime import timedelta

    from monitor.admin.metrics import queue_families
    from monitor.engine.tasks import Round

    now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    rnd = Round.build(["s1", "s2", "s3", "s4"], now - timedelta(minutes=3))
    first, second, third, _ = rnd.tasks.values()
    rnd.start(first)
    rnd.succeed(first, now)
    rnd.start(second)
    rnd.release(second)
    rnd.retry_at(second, now + timedelta(seconds=9))
    rnd.start(third)
    families_ = {family.name: family for family in queue_families(rnd, now)}
    states = labelled(families_["sheet_monitor_queue_tasks"], "state")
    assert states == {"pending": 1, "waiting_retry": 1, "processing": 1, "done": 1, "failed": 0}
    [age] = families_["sheet_monitor_queue_oldest_pending_task_age_seconds"].samples
    assert age.value == 180.0
    [progress] = families_["sheet_monitor_round_progress_ratio"].samples
    assert progress.value == 0.25


# -- sheet-monitor metrics -----------------------------------------------------------------------------


def test_metrics_prints_the_fleet_the_queue_and_the_outbox_of_the_saved_state(tmp_path):
    config = write_config(tmp_path / "site", ids=(A, B, C))
    seed(config)  # A dead-lettered, B ok, C's breaker open; one message held by a halted chat
    result = invoke(config, "metrics")
    assert result.exit_code == 0, result.stderr
    m = families(result.stdout)
    assert labelled(m["sheet_monitor_spreadsheets"], "health") == {  # C's checks paused: as `status` shows it
        "ok": 1.0, "warn": 0, "fail": 0, "error": 1.0, "skipped": 1.0, "muted": 0, "maintenance": 0,
        "unknown": 0}
    assert values(m["sheet_monitor_dlq_entries"]) == {("sheet_monitor_dlq_entries",): 1.0}
    assert values(m["sheet_monitor_breakers_open"]) == {("sheet_monitor_breakers_open",): 1.0}
    assert values(m["sheet_monitor_outbox_messages"]) == {("sheet_monitor_outbox_messages",): 1.0}
    assert values(m["sheet_monitor_delivery_halted"]) == {("sheet_monitor_delivery_halted",): 1.0}
    assert labelled(m["sheet_monitor_queue_tasks"], "state") == {
        "pending": 0, "waiting_retry": 0, "processing": 0, "done": 2.0, "failed": 1.0}
    assert labelled(m["sheet_monitor_last_run_stop_reason"], "reason") == {"round_done": 1.0}
    since = values(m["sheet_monitor_seconds_since_last_finished_run"])
    assert 0 < since[("sheet_monitor_seconds_since_last_finished_run",)] < 600  # finished 10 s before now


def test_metrics_before_any_run_writes_the_fleet_as_unknown_and_no_run(tmp_path):
    config = write_config(tmp_path / "site", ids=(A, B))
    target = tmp_path / "prom" / "sheet_monitor.prom"
    target.parent.mkdir()
    result = invoke(config, "metrics", "--textfile", str(target))
    assert result.exit_code == 0 and result.stdout == ""
    m = families(target.read_text())
    assert labelled(m["sheet_monitor_spreadsheets"], "health")["unknown"] == 2.0
    assert "sheet_monitor_last_run_start_timestamp_seconds" not in m
    assert labelled(m["sheet_monitor_runs"], "outcome") == {}


def test_metrics_to_a_file_not_named_prom_or_in_a_missing_folder_exits_with_the_fix(tmp_path):
    config = write_config(tmp_path / "site", ids=(A,))
    wrong = invoke(config, "metrics", "--textfile", str(tmp_path / "metrics.txt"))
    assert wrong.exit_code == 2 and "ending in .prom" in wrong.stderr
    missing = invoke(config, "metrics", "--textfile", str(tmp_path / "none" / "x.prom"))
    assert missing.exit_code == 1 and "make its folder exist" in missing.stderr


# -- the push, held to its time ----------------------------------------------------------------------


def small_registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    Gauge("sheet_monitor_probe", "A test gauge.", registry=registry).set(1)
    return registry


def test_a_push_to_a_pushgateway_that_never_answers_gives_up_at_its_timeout(caplog):
    hang = threading.Event()
    with pushgateway(hang=hang) as gateway:
        metrics = MetricsConfig(pushgateway=gateway.url, instance="runner-1")
        started = time.monotonic()
        assert push(metrics, small_registry(), timeout=0.3) is False
        elapsed = time.monotonic() - started
    assert elapsed < 1.0
    [warning] = [r for r in caplog.records if r.getMessage() == "metrics_push_failed"]
    assert warning.fields["pushgateway"] == gateway.url and warning.fields["instance"] == "runner-1"


def test_no_push_is_tried_once_the_runs_deadline_has_nearly_passed(tmp_path, caplog):
    with pushgateway() as gateway:
        config = load_minimal_with(tmp_path, f'pushgateway = "{gateway.url}"')
        publish_metrics(config, State(), datetime.now(UTC), seconds_left=0.05)
        assert gateway.requests == []
    assert [r.getMessage() for r in caplog.records] == ["metrics_push_skipped"]


def test_a_pushgateway_refusing_connections_costs_one_warning(tmp_path, caplog):
    config = load_minimal_with(tmp_path, f'pushgateway = "{closed_port_url()}"')
    publish_metrics(config, State(), datetime.now(UTC), seconds_left=2.0)
    assert [r.getMessage() for r in caplog.records] == ["metrics_push_failed"]


def load_minimal_with(tmp_path: Path, table: str):
    folder = secrets_folder(tmp_path)
    return load(folder, MINIMAL + f"\n[metrics]\n{table}\n", env={})


# -- the example rules and promtool ------------------------------------------------------------------


def written_names(tmp_path) -> set[str]:
    """Every sample name a state with a run, a round and per-spreadsheet series writes."""
    config = write_config(tmp_path / "site", ids=(A, B, C), extra="\n[metrics]\nper_sheet = true\n")
    seed(config)
    with changing_state(state_dir(config), actor="test", now=datetime.now(UTC)) as session:
        # As runs found the key's:
        session.state.totals = RunTotals(counts=RunCounts(reads_by_project={"shop-east": 3}))
    result = invoke(config, "metrics")
    return {sample.name for family in families(result.stdout).values() for sample in family.samples}


def test_the_example_rules_name_only_metrics_the_monitor_writes(tmp_path):
    import re

    groups = yaml.safe_load(RULES.read_text())["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    assert {rule["alert"] for rule in rules} >= {
        "SheetMonitorSilent", "SheetMonitorRoundBehind", "SheetMonitorQuotaNearLimit",
        "SheetMonitorDlqGrowing", "SheetMonitorDeliveryHalted"}
    named = {name for rule in rules for name in re.findall(r"\bsheet_monitor_\w+", rule["expr"])}
    assert named and named <= written_names(tmp_path)
    assert all(rule["annotations"]["summary"] and rule["labels"]["severity"] for rule in rules)
    operations = (REPO / "docs" / "operations.md").read_text()
    assert all(f"`{rule['alert']}`" in operations for rule in rules)  # each one explained there


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian: apt install prometheus)")
def test_promtool_accepts_the_rules_and_the_written_metrics(tmp_path):
    rules = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert rules.returncode == 0, rules.stdout + rules.stderr
    config = write_config(tmp_path / "site", ids=(A, B, C), extra="\n[metrics]\nper_sheet = true\n")
    seed(config)
    text = invoke(config, "metrics").stdout
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr  # naming conventions: units, _total...
