"""A full round of 250 generated spreadsheets with faults, done over several cron-sized runs.

Everything real but time: run_once (lock, store, pacer, notifier) drives the real GspreadReader and
google-auth against the in-process sandbox. The runner, the pacer and the sandbox's quota windows
share one ManualClock, so a minute of quota is a clock step; only the HTTP round trips, the held
("hang") requests and the scaled-down "slow" latencies cost wall time. The ManualClock starts at
the real time because google-auth stamps its JWTs with the real clock.

Quota pressure: the sandbox grants 18 reads a minute while the config paces at 20, as if another
tool used the same service account; the monitor meets real 429s and must treat them as waits.

Size: what this round shows is its shape (quota for ~14 minutes of reads, spent over 4-minute runs,
every kind of breakage among them), not its count: each read costs real CPU in this one process
(the sandbox builds the grid, the reader parses it), so 250 spreadsheets at a third of the quota
make the same round as 750 at all of it, in a third of the time. Thousands are bench/'s to measure.
"""

from __future__ import annotations

import io
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from sandbox_fixtures import served_dataset

from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.engine.breaker import OPEN
from monitor.engine.events import ApiDegraded, BreakerOpened, DeadLettered
from monitor.engine.health import UNKNOWN
from monitor.engine.tasks import DONE, FAILED
from monitor.google.reader import GspreadReader
from sheet_sandbox.dataset import AFTER_FIRST_READ, BREAKAGES

pytestmark = pytest.mark.waits  # a whole round in this process: started first (tests/conftest.py)

SHEETS = 250  # every kind of breakage at least once (len(BREAKAGES) / BROKEN_SHARE ~ 170)
READ_PER_USER, CONFIG_READ_PER_USER = 18, 20  # the sandbox's quota a minute, and the config's pace
RUN_BUDGET = timedelta(minutes=4)  # a 5-minute cron tick; 250 reads need ~14 minutes of quota
CRON_INTERVAL = timedelta(minutes=5)
REQUEST_TIMEOUT = "3s"  # what a hanging spreadsheet costs per attempt, in wall time: well above what a
# grid read of a generated store takes on a loaded machine, where its zone is learnt with its values
# "slow" spreadsheets answer after 1.5-3 s; scaled to 0.15-0.3 s, they still answer within the timeout.
LATENCY_SCALE = 0.1

# Reads (quota refusals not counted) each kind needs: its retries and no more. A spreadsheet showing
# #REF! or #N/A is read again with Google's details (the codes IMPORTRANGE shows while it computes).
READS_BY_KIND = {"flaky": 3, "server_error": 2, "hang": 3, "formula_errors": 2}
# The manifest's verdicts, with the one documented exception: a hanging spreadsheet's three timeouts
# open its breaker (the default failure_threshold is 3, and five tries are allowed), so this round
# skips it instead of dead-lettering it; a later round probes it after the cooldown.
BREAKER_GUARDED = {"hang"}
DLQ_STATUS = {"missing": 404, "access_removed": 403, "renamed_tab": 400}


class CountingReader:
    """The real reader, counting per spreadsheet the requests that are attempts: a batchGet, a
    spreadsheets.get with details, or one of the values that learns the spreadsheet's time zone."""

    def __init__(self, inner: GspreadReader, reads: Counter) -> None:
        self.inner = inner
        self.reads = reads

    def read(self, spreadsheet_id, ranges, credential, timeout):
        self.reads[spreadsheet_id] += 1
        return self.inner.read(spreadsheet_id, ranges, credential, timeout)

    def read_with_zone(self, spreadsheet_id, ranges, credential, timeout, detailed=False):
        self.reads[spreadsheet_id] += 1
        return self.inner.read_with_zone(spreadsheet_id, ranges, credential, timeout, detailed)

    def read_detailed(self, spreadsheet_id, ranges, credential, timeout):
        self.reads[spreadsheet_id] += 1
        return self.inner.read_detailed(spreadsheet_id, ranges, credential, timeout)

    def tab_titles(self, spreadsheet_id, credential, timeout):  # explains a refusal: not an attempt
        return self.inner.tab_titles(spreadsheet_id, credential, timeout)


@pytest.fixture(scope="module")
def finished_round(tmp_path_factory):
    """Runs every cron tick until the round is complete; yields what the tests inspect."""
    folder = tmp_path_factory.mktemp("round")
    clock = ManualClock(start=datetime.now(UTC))
    with served_dataset(
        folder, SHEETS, seed=11, clock=clock, latency_scale=LATENCY_SCALE, read_per_user=READ_PER_USER,
        config_read_per_user=CONFIG_READ_PER_USER, request_timeout=REQUEST_TIMEOUT,
        run_section={"round_interval": "1h"},  # one round only: the next would start mid-run
    ) as served:
        config = load_config(served.config_path, {})
        # The sandbox answers in this process: with the default 64 reads in flight sharing its
        # interpreter, a healthy read could outlast the scaled timeout (at 16, it did on a machine
        # loaded 6 times over). What this test counts does not depend on how many reads are out at
        # once, and the interpreter answers no more reads a second with more of them out.
        config = config.model_copy(update={"google": config.google.model_copy(
            update={"max_concurrent_reads": 8})})
        reads: Counter = Counter()

        def reader_factory(cfg, timeout):
            inner = GspreadReader.from_credentials(endpoint=served.sandbox.base_url, timeout=timeout)
            return CountingReader(inner, reads)

        reports, emitted = [], []
        while len(reports) < 10:
            tick = clock.now()
            result = run_once(
                config, budget=RUN_BUDGET, clock=clock, reader_factory=reader_factory,
                messages_to=io.StringIO(),
            )
            reports.append(result.report)
            emitted += result.new_events
            state = served.state()
            if state.round.is_complete():
                break
            clock.advance(max(0.0, (tick + CRON_INTERVAL - clock.now()).total_seconds()))
        yield served, state, reports, reads, emitted


def test_the_round_takes_several_runs_and_each_stops_within_its_budget(finished_round):
    served, state, reports, _, _ = finished_round
    assert 3 <= len(reports) < 10
    assert all(r.stop_reason == "budget" for r in reports[:-1])
    assert reports[-1].stop_reason == "round_done"
    assert all(r.duration_seconds <= RUN_BUDGET.total_seconds() for r in reports)
    assert all(r.counts.tasks > 0 for r in reports)
    assert served.sandbox.google.stats.snapshot()["quota_exceeded"] > 0  # the pressure was real


def test_no_spreadsheet_is_lost(finished_round):
    served, state, _, _, _ = finished_round
    tasks = list(state.round.tasks.values())
    assert len(tasks) == SHEETS
    assert sorted(task.target for task in tasks) == sorted(served.ids)
    assert {task.status for task in tasks} <= {DONE, FAILED}
    for sheet_id in served.ids:
        record = state.health.get(sheet_id)
        has_verdict = record is not None and (record.health != UNKNOWN or record.skipped)
        assert has_verdict or sheet_id in state.dlq, sheet_id


def test_no_spreadsheet_is_read_twice_except_by_its_retries(finished_round):
    served, state, _, reads, _ = finished_round
    tasks = {task.target: task for task in state.round.tasks.values()}
    quota_waits = Counter()
    for entry in served.dataset.sheets:
        task = tasks[entry.id]
        quota_waits[entry.id] = sum(1 for h in task.history if h.outcome == "quota")
        # Every request the run sent left one line in the task's history, and no more were sent.
        attempts = [h for h in task.history if h.outcome != "skipped_breaker_open"]
        assert reads[entry.id] == len(attempts), (entry, task.history)
        sent = reads[entry.id] - quota_waits[entry.id]
        assert sent == READS_BY_KIND.get(entry.kind, 1), (entry.title, task.history)
    assert sum(quota_waits.values()) > 0


def test_verdicts_match_the_manifest(finished_round):
    served, state, _, _, _ = finished_round
    kinds_seen = Counter()
    for entry in served.dataset.sheets:
        kinds_seen[entry.kind] += 1
        record = state.health[entry.id]
        if entry.kind in BREAKER_GUARDED:
            assert record.shown == "skipped" and record.skipped == "breaker_open", entry
            assert state.breakers[entry.id].state is OPEN
            assert entry.id not in state.dlq
            continue
        # Broken after the first read: this round is it (tests/sandbox/test_dataset_history.py judges
        # the next).
        expect = "ok" if entry.kind in AFTER_FIRST_READ else entry.expect
        assert record.health == expect, (entry, record)
        if entry.expect == "error":
            dead = state.dlq.get(entry.id)
            assert dead.last_error.http_status == DLQ_STATUS[entry.kind], entry
        else:
            assert entry.id not in state.dlq, entry
    # Every kind of breakage of the generator was part of this round.
    assert set(kinds_seen) == {"healthy", "catalogue", *(b.kind for b in BREAKAGES)}


def test_the_renamed_tab_is_reported_as_a_range_to_fix(finished_round):
    served, state, _, _, _ = finished_round
    for entry in served.dataset.of_kind("renamed_tab"):
        assert state.dlq.get(entry.id).last_error.range.startswith("Stock!")


def test_the_runs_reported_each_dead_letter_once_and_the_open_breaker(finished_round):
    served, _, _, _, emitted = finished_round
    kinds = Counter(type(event) for event in emitted)
    dead = sum(len(served.dataset.of_kind(kind)) for kind in DLQ_STATUS)
    assert kinds[DeadLettered] == dead
    assert kinds[BreakerOpened] == len(served.dataset.of_kind("hang"))
    assert kinds[ApiDegraded] == 0
