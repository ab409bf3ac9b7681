"""Real runs on the sandbox write the metrics file and push to a Pushgateway: every family, read back
with prometheus_client's own parser, and counters that keep growing from one run to the next.

Runs go through ``run_once`` on a manual clock with real gspread and httpx clients against the
sandbox (Google and Telegram); the Pushgateway is a small HTTP receiver on 127.0.0.1.
"""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_fixtures import A, B, C, sandbox_config_head
from metrics_fixtures import families, labelled, pushgateway, values

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.engine.heartbeat import RunOutcome
from sheet_sandbox.server import running_sandbox

TOKEN = "123456:SECRET-metrics-token-0123456789"
CHAT = -1001000000002
NEXT_ROUND = 6 * 60  # past round_interval (5m): the next run starts a new round

# Every family a run writes (counters by their name without _total, as the parser gives them).
FAMILIES = {
    "runs", "tasks_done", "tasks_dead_lettered",
    "edit_lag_seconds", "edits_judged_last_hour",
    "last_run_start_timestamp_seconds", "last_run_finish_timestamp_seconds", "last_run_budget_seconds",
    "last_run_outcome", "last_run_duration_seconds", "last_run_stop_reason", "last_run_tasks_done",
    "last_run_reads",
    "queue_tasks", "queue_oldest_pending_task_age_seconds", "round_spreadsheets",
    "round_unread_spreadsheets", "round_progress_ratio", "round_start_timestamp_seconds",
    "round_age_seconds",
    "google_reads", "google_project_reads", "google_last_minute_reads",
    "google_project_last_minute_reads", "google_quota_reads_per_minute",
    "google_project_quota_reads_per_minute", "google_quota_refusals", "google_retries",
    "google_read_duration_seconds", "google_api_degraded",
    "spreadsheets", "spreadsheets_muted", "breakers_open", "dlq_entries", "incidents_open",
    "incidents_acknowledged",
    "outbox_messages", "telegram_messages_sent", "delivery_halted", "delivery_halted_chats",
    "seconds_since_last_finished_run", "metrics_written_timestamp_seconds",
}


def stock(quantity: int) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Product", "Quantity"], ["A-1", "Tea", quantity]]}}


def config_text(sandbox, folder: Path, metrics: str) -> str:
    sheets = "".join(f'\n[[sheets]]\nid = "{sid}"\nname = "Store {n}"\nprofile = "stock"\n'
                     for n, sid in enumerate((A, B, C), start=1))
    return sandbox_config_head(sandbox, folder, CHAT) + """
[profiles.stock]
checks = [
  { kind = "formula_errors", range = "Stock!A1:C20" },
  { kind = "threshold", range = "Stock!C2:C20", aggregate = "min", warn = "< 5", fail = "< 0" },
]
""" + sheets + "\n[metrics]\n" + metrics


@pytest.fixture
def site(tmp_path):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))  # google-auth's JWTs: real time
    with running_sandbox(clock=clock, latency="off") as sandbox:
        for sid, quantity in ((A, 10), (B, 3), (C, 10)):  # B warns: 3 < 5
            sandbox.google.store.put_control(sid, stock(quantity))
        sandbox.telegram.add_token(TOKEN)
        sandbox.telegram.add_chat(CHAT, title="Ops")
        yield sandbox, clock, tmp_path


def run(path: Path, clock: ManualClock):
    config = load_config(path, {"TELEGRAM_BOT_TOKEN": TOKEN})
    return run_once(config, clock=clock, messages_to=io.StringIO()).report


def test_a_run_writes_every_family_and_pushes_the_same_to_the_pushgateway(site):
    sandbox, clock, folder = site
    sandbox.google.faults.add({"spreadsheet": A, "statuses": [429]})  # a quota refusal, read again later
    sandbox.google.faults.add({"spreadsheet": C, "statuses": [503]})  # a transient failure: one retry
    textfile = folder / "textfile" / "sheet_monitor.prom"
    textfile.parent.mkdir()
    with pushgateway() as gateway:
        path = folder / "monitor.toml"
        path.write_text(config_text(sandbox, folder, f'textfile = "{textfile}"\n'
                                    f'pushgateway = "{gateway.url}"\ninstance = "runner-1"\n'))
        report = run(path, clock)
    assert report.outcome is RunOutcome.OK
    written = families(textfile.read_text())
    assert {name.removeprefix("sheet_monitor_") for name in written} == FAMILIES
    assert not list(textfile.parent.glob("*.prom.*"))  # the temporary file was renamed, none left

    [push] = gateway.requests
    assert (push.method, push.path) == ("PUT", "/metrics/job/sheet_monitor/instance/runner-1")
    assert push.content_type.startswith("text/plain")
    pushed = families(push.body)
    assert pushed.keys() == written.keys()
    assert values(pushed["sheet_monitor_tasks_done"]) == values(written["sheet_monitor_tasks_done"])

    m = {name.removeprefix("sheet_monitor_"): family for name, family in written.items()}
    assert labelled(m["runs"], "outcome") == {"ok": 1.0}
    assert labelled(m["last_run_outcome"], "outcome")["ok"] == 1.0
    assert sum(labelled(m["last_run_outcome"], "outcome").values()) == 1.0
    assert labelled(m["last_run_stop_reason"], "reason") == {"round_done": 1.0}
    assert values(m["last_run_budget_seconds"]) == {("sheet_monitor_last_run_budget_seconds",): 240.0}
    assert values(m["tasks_done"]) == {("sheet_monitor_tasks_done_total",): 3.0}
    assert values(m["last_run_tasks_done"]) == {("sheet_monitor_last_run_tasks_done",): 3.0}
    assert labelled(m["queue_tasks"], "state") == {"pending": 0, "waiting_retry": 0, "processing": 0,
                                                   "done": 3.0, "failed": 0}
    assert values(m["round_progress_ratio"]) == {("sheet_monitor_round_progress_ratio",): 1.0}
    assert values(m["round_spreadsheets"]) == {("sheet_monitor_round_spreadsheets",): 3.0}

    [credential] = (str(p) for p in (folder / "keys").glob("*.json"))
    assert labelled(m["google_reads"], "credential") == {credential: 5.0}  # A and C twice, B once
    assert sum(labelled(m["google_project_reads"], "project").values()) == 5.0
    assert labelled(m["google_quota_reads_per_minute"], "credential") == {credential: 60.0}
    assert labelled(m["google_last_minute_reads"], "credential")[credential] >= 1
    assert values(m["google_quota_refusals"]) == {("sheet_monitor_google_quota_refusals_total",): 1.0}
    assert labelled(m["google_retries"], "error_class") == {"transient": 1.0}
    histogram = values(m["google_read_duration_seconds"])
    assert histogram[("sheet_monitor_google_read_duration_seconds_count",)] == 5.0
    assert histogram[("sheet_monitor_google_read_duration_seconds_bucket", "+Inf")] == 5.0
    assert ("sheet_monitor_google_read_duration_seconds_bucket", "0.5") in histogram

    assert labelled(m["spreadsheets"], "health") == {"ok": 2.0, "warn": 1.0, "fail": 0, "error": 0,
                                                      "skipped": 0, "muted": 0, "maintenance": 0,
                                                      "unknown": 0}
    assert values(m["dlq_entries"]) == {("sheet_monitor_dlq_entries",): 0.0}
    assert values(m["breakers_open"]) == {("sheet_monitor_breakers_open",): 0.0}
    assert values(m["telegram_messages_sent"]) == {("sheet_monitor_telegram_messages_sent_total",): 1.0}
    assert values(m["outbox_messages"]) == {("sheet_monitor_outbox_messages",): 0.0}
    assert values(m["delivery_halted"]) == {("sheet_monitor_delivery_halted",): 0.0}
    assert "spreadsheet_health" not in m  # no label per spreadsheet unless per_sheet asks for it
    assert TOKEN not in textfile.read_text() and "PRIVATE KEY" not in textfile.read_text()


def test_counters_keep_growing_across_runs_while_last_run_gauges_show_one_run(site):
    sandbox, clock, folder = site
    textfile = folder / "sheet_monitor.prom"
    path = folder / "monitor.toml"
    text = config_text(sandbox, folder, 'textfile = "sheet_monitor.prom"\nper_sheet = true\n')
    path.write_text(text.replace('budget = "4m"', 'budget = "4m"\nchange_detection = false'))  # read all
    run(path, clock)
    first = families(textfile.read_text())
    clock.advance(NEXT_ROUND)
    run(path, clock)
    second = families(textfile.read_text())

    def one(fams, name):
        [value] = values(fams["sheet_monitor_" + name]).values()
        return value

    assert (one(first, "tasks_done"), one(second, "tasks_done")) == (3.0, 6.0)
    assert (one(first, "last_run_tasks_done"), one(second, "last_run_tasks_done")) == (3.0, 3.0)
    assert labelled(second["sheet_monitor_runs"], "outcome") == {"ok": 2.0}
    assert sum(labelled(second["sheet_monitor_google_reads"], "credential").values()) == 6.0
    count = ("sheet_monitor_google_read_duration_seconds_count",)
    assert values(second["sheet_monitor_google_read_duration_seconds"])[count] == 6.0
    # per_sheet: each spreadsheet's verdict, one series per health state
    health = {(s.labels["spreadsheet_id"], s.labels["health"]): s.value
              for s in second["sheet_monitor_spreadsheet_health"].samples}
    assert health[(B, "warn")] == 1.0 and health[(B, "ok")] == 0.0 and health[(A, "ok")] == 1.0
    assert {s.labels["name"] for s in second["sheet_monitor_spreadsheet_last_read_timestamp_seconds"]
            .samples} == {"Store 1", "Store 2", "Store 3"}


def test_an_unwritable_file_and_a_refusing_pushgateway_cost_a_warning_each_not_the_run(site, caplog):
    sandbox, clock, folder = site
    blocked = folder / "not-a-folder"
    blocked.write_text("a file where the metrics' folder should be")
    with pushgateway(status=500) as gateway:
        path = folder / "monitor.toml"
        path.write_text(config_text(sandbox, folder, f'textfile = "{blocked}/sheet_monitor.prom"\n'
                                    f'pushgateway = "{gateway.url}"\n'))
        with caplog.at_level(logging.WARNING, logger="monitor"):
            report = run(path, clock)
    assert report.outcome is RunOutcome.OK and report.ok == 3
    warnings = {record.getMessage(): record for record in caplog.records if record.levelno >= logging.WARNING}
    assert set(warnings) == {"metrics_file_not_written", "metrics_push_failed"}
    assert "sheet_monitor.prom" in warnings["metrics_file_not_written"].fields["path"]
    assert "500" in warnings["metrics_push_failed"].fields["error"]
