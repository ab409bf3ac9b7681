"""A run's counts as releases before ``RunCounts`` stored them: each document its own fields, with
its own names (``ok``, ``failed``), read as one value and saved in today's shape."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from monitor.engine.heartbeat import RunOutcome, StopReason
from monitor.engine.run_counts import RunCounts
from monitor.state.repository import StateRepository
from monitor.state.schema import SCHEMA_KEY
from monitor.storage import MemoryBacking, MemoryStore

STARTED = datetime(2026, 11, 30, 15, 2, tzinfo=UTC)
BUCKETS = [3, 0, 1, 0, 0, 0, 0, 0, 0]

# What the release before wrote after one run that read 4 spreadsheets, judged 3, dead-lettered 1,
# retried one read and met one 429.
OLD_STATS = {"tasks": 4, "ok": 3, "failed": 1, "retries_scheduled": 1, "quota_refusals": 1,
             "reads_by_credential": {"sa-1.json": 4}, "reads_by_project": {"shop": 4},
             "retries_by_class": {"transient": 1}, "read_seconds_buckets": BUCKETS, "read_seconds_sum": 1.62,
             "mean_read_seconds": 0.4, "concurrency": 2, "duration_seconds": 41.5,
             "stop_reason": "round_done"}
OLD_HEARTBEAT = {"run_id": "run-1", "started_at": "2026-11-30T15:02:00Z", "budget_seconds": 270.0,
                 "finished_at": "2026-11-30T15:02:42Z", "outcome": "ok", "stats": OLD_STATS}
OLD_RECORD = {"run_id": "run-1", "started_at": "2026-11-30T15:02:00Z", "duration_seconds": 41.5,
              "budget_seconds": 270.0, "outcome": "ok", "reads_by_credential": {"sa-1.json": 4},
              "reads_by_project": {"shop": 4}, "quota_refusals": 1, "retries_by_class": {"transient": 1},
              "failed": 1, "health": {"ok": 2, "error": 1}, "edit_lags": [12, 30]}
# Totals leave out what is at its default: no quota refusal was ever met here.
OLD_TOTALS = {"runs_by_outcome": {"ok": 5, "degraded": 1}, "tasks_done": 40, "dead_lettered": 2,
              "reads_by_credential": {"sa-1.json": 44}, "reads_by_project": {"shop": 44},
              "retries_by_class": {"transient": 3}, "read_seconds_buckets": BUCKETS, "read_seconds_sum": 1.62}


def older_release() -> MemoryBacking:
    versions = {"heartbeat": 3, "runlog": 2, "totals": 1, "runner_heartbeat": 1, "runner_totals": 1}
    return MemoryBacking({
        SCHEMA_KEY: json.dumps({"layout": 2, "documents": versions}),
        "heartbeat": json.dumps(OLD_HEARTBEAT),
        "heartbeat/host-b": json.dumps({**OLD_HEARTBEAT, "run_id": "run-b"}),
        "runlog/2026-11-30T15": json.dumps({"runs": [OLD_RECORD]}),
        "totals": json.dumps(OLD_TOTALS),
        "totals/host-b": json.dumps(OLD_TOTALS),
    })


RUN_COUNTS = RunCounts(tasks=4, tasks_done=3, dead_lettered=1, retries_scheduled=1, quota_refusals=1,
                       reads_by_credential={"sa-1.json": 4}, reads_by_project={"shop": 4},
                       retries_by_class={"transient": 1}, read_seconds_buckets=tuple(BUCKETS),
                       read_seconds_sum=1.62)


def test_a_runs_counts_as_the_release_before_stored_them_load_as_one_value_everywhere():
    state = StateRepository(MemoryStore(older_release())).load()
    assert state.damaged == []
    stats = state.heartbeat.stats
    assert stats.counts == RUN_COUNTS
    assert (stats.duration_seconds, stats.stop_reason, stats.mean_read_seconds, stats.concurrency) == (
        41.5, StopReason.ROUND_DONE, 0.4, 2)
    assert state.runner_heartbeats["host-b"].stats == stats
    (record,) = state.runlog["2026-11-30T15"].runs
    assert (record.run_id, record.started_at, record.outcome) == ("run-1", STARTED, RunOutcome.OK)
    assert record.counts == RunCounts(dead_lettered=1, quota_refusals=1, reads_by_credential={"sa-1.json": 4},
                                      reads_by_project={"shop": 4}, retries_by_class={"transient": 1})
    assert (record.health, record.edit_lags) == ({"ok": 2, "error": 1}, (12, 30))
    totals = state.totals
    assert totals.runs_by_outcome == {"ok": 5, "degraded": 1}
    assert totals.counts == RunCounts(tasks_done=40, dead_lettered=2, reads_by_credential={"sa-1.json": 44},
                                      reads_by_project={"shop": 44}, retries_by_class={"transient": 3},
                                      read_seconds_buckets=tuple(BUCKETS), read_seconds_sum=1.62)
    runner = StateRepository(MemoryStore(older_release()), runner="host-b").load()
    assert (runner.heartbeat.run_id, runner.totals) == ("run-b", totals)
    # The counters go on from where the older release left them.
    assert totals.add("ok", RUN_COUNTS).counts.tasks_done == 43


def test_the_older_documents_are_saved_in_todays_shape_and_read_back_the_same():
    backing = older_release()
    repository = StateRepository(MemoryStore(backing))
    state = repository.load()
    assert state.needs_full_save
    repository.save(state)
    stored = backing.copy()
    assert json.loads(stored[SCHEMA_KEY])["documents"]["runlog"] == 3
    assert json.loads(stored["heartbeat"])["stats"]["counts"]["tasks_done"] == 3
    assert json.loads(stored["runlog/2026-11-30T15"])["runs"][0]["counts"]["dead_lettered"] == 1
    assert "failed" not in json.loads(stored["runlog/2026-11-30T15"])["runs"][0]
    assert json.loads(stored["totals"])["counts"]["tasks_done"] == 40
    again = StateRepository(MemoryStore(backing)).load()
    assert (again.heartbeat, again.runlog["2026-11-30T15"], again.totals) == (
        state.heartbeat, state.runlog["2026-11-30T15"], state.totals)
    assert not again.needs_full_save
