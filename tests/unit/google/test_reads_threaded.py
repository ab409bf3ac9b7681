"""Reads on worker threads through real gspread against the sandbox (monitor.engine.inflight).

Each worker has its own reader and HTTP sessions; the workers of a run share one credential cache,
so a service account is loaded once and fetches one token, however many workers use it.
"""

from __future__ import annotations

import gc
import time
import weakref
from dataclasses import replace

import pytest

from monitor.checks import FormulaErrorsCheck
from monitor.core.errors import ErrorClass, SheetReadError
from monitor.engine.inflight import ReadJob, ThreadedReads
from monitor.engine.inspect import Encoded, SheetPlan, read
from monitor.google.client import CredentialCache
from monitor.google.reader import GspreadReader
from sheet_sandbox.server import running_sandbox

RANGE = "Stock!A1:B3"
SHEETS = 12


@pytest.fixture
def served(tmp_path):
    with running_sandbox(telegram=False, latency="off") as sandbox:
        for n in range(SHEETS):
            sandbox.google.store.put_control(f"sheet-{n}", {"title": f"Store {n}", "tabs": {
                "Stock": [["SKU", "Qty"], [f"A-{n}", n]]}})
        [credential] = sandbox.write_credentials(tmp_path, 1)
        yield sandbox, str(credential)


def plan(n: int) -> SheetPlan:
    return SheetPlan(f"sheet-{n}", f"Store {n}", (FormulaErrorsCheck(range=RANGE),), (RANGE,))


def collect_all(reads: ThreadedReads, count: int, timeout: float = 10.0) -> list:
    done, deadline = [], time.monotonic() + timeout
    while len(done) < count and time.monotonic() < deadline:
        done += reads.collect(0.2)
    return done


def test_workers_read_at_once_with_their_own_sessions_and_one_token_for_the_account(served):
    sandbox, credential = served
    cache, readers = CredentialCache(), []

    def make_reader():
        readers.append(GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5,
                                                      credentials=cache))
        return readers[-1]

    reads = ThreadedReads(make_reader, workers=4, monotonic=time.monotonic)
    for n in range(SHEETS):
        reads.start(ReadJob(f"t{n}", plan(n), credential, time.monotonic()), lambda: 5.0)
    done = collect_all(reads, SHEETS)
    reads.close()

    assert sorted(d.job.task_id for d in done) == sorted(f"t{n}" for n in range(SHEETS))
    assert all(d.error is None for d in done), [d.error for d in done if d.error]
    assert {d.job.plan.id: d.data.value_ranges[RANGE]["values"][1] for d in done} == {
        f"sheet-{n}": [f"A-{n}", n] for n in range(SHEETS)}
    assert reads.workers_started == len(readers) == 4  # one reader (and its sessions) per worker
    sessions = {id(reader.clients[credential].http_client.session) for reader in readers}
    assert len(sessions) == 4
    assert sandbox.google.auth.tokens_issued() == 1  # one token, shared by the four workers
    assert reads.in_flight() == 0


def test_a_failed_read_comes_back_classified_and_the_worker_goes_on(served):
    sandbox, credential = served
    sandbox.google.faults.add({"spreadsheet": "sheet-1", "statuses": [503]})
    cache = CredentialCache()
    reads = ThreadedReads(lambda: GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5,
                                                                credentials=cache),
                          workers=1, monotonic=time.monotonic)
    for n in range(3):
        reads.start(ReadJob(f"t{n}", plan(n), credential, time.monotonic()), lambda: 5.0)
    done = {d.job.plan.id: d for d in collect_all(reads, 3)}
    reads.close()
    assert isinstance(done["sheet-1"].error, SheetReadError) and done["sheet-1"].error.http_status == 503
    assert done["sheet-0"].error is None and done["sheet-2"].error is None
    assert all(d.seconds >= 0 for d in done.values())


@pytest.mark.parametrize("fails", [False, True], ids=["answer", "error"])
def test_an_idle_worker_holds_nothing_of_its_last_read(served, fails):
    """Once the run has let go of a read, nothing of it stays alive while its worker waits for the
    next: 64 idle workers each holding their last answer were megabytes of a run."""
    sandbox, credential = served
    if fails:
        sandbox.google.faults.add({"spreadsheet": "sheet-0", "statuses": [503]})
    reads = ThreadedReads(lambda: GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5,
                                                                credentials=CredentialCache()),
                          workers=1, monotonic=time.monotonic)
    reads.start(ReadJob("t0", plan(0), credential, time.monotonic()), lambda: 5.0)
    [done] = collect_all(reads, 1)
    held = weakref.ref(done.error if fails else done.data)
    assert (done.error is not None) == fails
    del done
    deadline = time.monotonic() + 2.0  # the worker lets go just after handing the read over
    while held() is not None and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    alive = held() is not None
    reads.close()
    assert not alive, "the idle worker still holds its last read"


def deferring_reads(sandbox, workers: int = 2) -> ThreadedReads:
    cache = CredentialCache()
    return ThreadedReads(lambda: GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5,
                                                                credentials=cache, defer=True),
                         workers=workers, monotonic=time.monotonic)


@pytest.mark.parametrize("job", [{}, {"detailed": True}, {"fetch_zone": True},
                                 {"fetch_zone": True, "detailed": True}],
                         ids=["batchGet", "detailed", "with zone", "detailed with zone"])
def test_a_run_worker_hands_over_the_answer_as_its_bytes_and_the_run_decodes_it(served, job):
    """A read in flight holds Google's JSON, not its values parsed (several times the size), until the
    run judges it; decoded, it is what a reader that decodes at once gives."""
    sandbox, credential = served
    reads = deferring_reads(sandbox)
    reads.start(ReadJob("t3", plan(3), credential, time.monotonic(), **job), lambda: 5.0)
    [done] = collect_all(reads, 1)
    reads.close()

    assert done.error is None, done.error
    assert isinstance(done.data, Encoded) and isinstance(done.data.payload, bytes)
    decoded = done.decoded()
    at_once = read(plan(3), GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5), credential,
                   lambda: 5.0, **job)
    assert decoded.data.value_ranges[RANGE]["values"] == [["SKU", "Qty"], ["A-3", 3]]
    assert decoded.data == at_once
    assert (decoded.data.time_zone is not None) == bool(job.get("fetch_zone"))


def test_an_answer_that_is_not_what_was_asked_is_the_reads_error_once_decoded(served):
    sandbox, credential = served
    reads = deferring_reads(sandbox, workers=1)
    reads.start(ReadJob("t1", plan(1), credential, time.monotonic()), lambda: 5.0)
    [done] = collect_all(reads, 1)
    reads.close()
    garbled = replace(done, data=Encoded(b"<html>Service Unavailable</html>", done.data.decode))
    wrong_count = replace(done, data=Encoded(b'{"valueRanges": []}', done.data.decode))

    for answer, says in [(garbled, "unreadable answer"),
                         (wrong_count, "asked for 1 ranges, Google returned 0")]:
        failed = answer.decoded()
        assert failed.data is None and isinstance(failed.error, SheetReadError)
        assert failed.error.error_class is ErrorClass.UNCERTAIN and failed.error.http_status == 200
        assert says in failed.error.message
