"""The history the status page draws, kept in the state: bounded by ``[report] keep``, written by
what changed (one run's hour, a spreadsheet's own record)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from run_fixtures import SETTINGS, Bench, ScriptedReader, plans

from monitor.core.tracking import Documents
from monitor.engine.health import FAIL, OK, VERDICT_CHANGES_KEPT, WARN, record_verdict
from monitor.engine.heartbeat import RunOutcome
from monitor.engine.run_counts import RunCounts
from monitor.engine.runlog import RunHour, RunRecord, add_run, runs_since
from monitor.storage import MemoryLocation

NOW = datetime(2026, 11, 30, 15, 20, tzinfo=UTC)
WEEK = timedelta(days=7)


def a_run(started: datetime, n: int = 0) -> RunRecord:
    return RunRecord(run_id=f"run-{n}", started_at=started, duration_seconds=40.0, budget_seconds=360.0,
                     outcome=RunOutcome.OK,
                     counts=RunCounts(reads_by_credential={"sa-1.json": 10}, reads_by_project={"p": 10},
                                      quota_refusals=0, retries_by_class={}, dead_lettered=0),
                     health={"ok": 10})


def test_a_run_writes_only_its_hour_and_drops_the_hours_older_than_keep():
    log = Documents({"2026-11-23T14": RunHour((a_run(NOW - WEEK - timedelta(hours=1)),)),
                     "2026-11-23T15": RunHour((a_run(NOW - WEEK),)),
                     "2026-11-30T15": RunHour((a_run(NOW - timedelta(minutes=5), 1),))})
    add_run(log, a_run(NOW, 2), NOW, WEEK)
    changed, removed = log.pending_changes()
    assert set(changed) == {"2026-11-30T15"} and removed == {"2026-11-23T14"}
    assert [run.run_id for run in log["2026-11-30T15"].runs] == ["run-1", "run-2"]
    assert [run.run_id for run in runs_since(log, NOW - timedelta(minutes=5))] == ["run-1", "run-2"]


def test_verdict_changes_older_than_keep_go_but_the_one_the_window_starts_with_stays():
    record, _ = record_verdict(None, OK, NOW - timedelta(days=10), ())
    record, _ = record_verdict(record, WARN, NOW - timedelta(days=9), ())
    record, _ = record_verdict(record, FAIL, NOW - timedelta(days=1), ())
    record, _ = record_verdict(record, OK, NOW, (), WEEK)
    assert [(change.health, change.at) for change in record.changes] == [
        (WARN, NOW - timedelta(days=9)), (FAIL, NOW - timedelta(days=1)), (OK, NOW)]


def test_a_flapping_spreadsheet_keeps_a_bounded_number_of_changes():
    record = None
    for minute in range(200):
        record, _ = record_verdict(record, (OK, FAIL)[minute % 2], NOW + timedelta(minutes=minute), ())
    assert len(record.changes) == VERDICT_CHANGES_KEPT
    assert record.changes[-1].at == NOW + timedelta(minutes=199)


def test_a_run_records_itself_with_the_fleet_by_health_and_each_read_time():
    bench = Bench(ScriptedReader({"s1": 1}), plans(3), MemoryLocation())
    bench.run(replace(SETTINGS, history_keep=timedelta(days=2)))
    stored = bench.stored()
    (hour,) = stored.runlog.values()
    (record,) = hour.runs
    assert record.run_id == stored.heartbeat.run_id and record.health == {"ok": 3}
    assert record.counts.retries_by_class == {"transient": 1}
    assert record.counts.reads_by_credential == {"sa-1.json": 4}
    assert all(len(stored.health[sid].read_seconds) == 1 for sid in ("s0", "s1", "s2"))
