"""Quota pacing shared by several runners through the real Redis (storage.redis_quota).

Three runners, each with credentials of its own, two Cloud projects in all: whatever order and pace
they ask in, from threads at once or on a generated timeline (hypothesis), no credential and no
project sends more than its limit in any rolling window; a 429 one runner meets pauses that scope
for every runner; the keys expire by themselves. Time is the test's (``server_time=False``), except
in the one test of Redis's own clock.
"""

from __future__ import annotations

import io
import json
import math
import random
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime

import pytest
import redis
from cli_fixtures import A, B, C, invoke, write_config
from concurrency_helpers import most_in_a_window
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis_fixtures import REDIS_URL, delete_prefix, new_prefix, redis_or_skip

from monitor.app.pacing import quota_pacer, service_accounts
from monitor.app.run import run_once
from monitor.config import load_config
from monitor.core.clock import ManualClock
from monitor.core.errors import QuotaScope
from monitor.engine.pacer import QuotaPacer
from monitor.engine.shared_pacer import SharedQuotaPacer
from monitor.storage.location import FileLocation
from monitor.storage.redis_quota import RedisQuotaLog
from monitor.storage.redis_store import RedisLocation
from sheet_sandbox.server import running_sandbox

PER_CREDENTIAL, PER_PROJECT = 6, 10
WINDOW, MARGIN = 60.0, 1.0
# Each runner's credentials and their projects: "east" is shared by runners a and b, "west" by b and c.
RUNNERS = {
    "a": {"a-1": "east", "a-2": "east"},
    "b": {"b-1": "east", "b-2": "west"},
    "c": {"c-1": "west", "c-2": "west"},
}
PROJECT_OF = {c: p for credentials in RUNNERS.values() for c, p in credentials.items()}


@pytest.fixture
def quota_prefix():
    redis_or_skip()
    prefix = new_prefix()
    yield prefix
    delete_prefix(prefix)


def runner(prefix: str, name: str, *, server_time: bool = False) -> SharedQuotaPacer:
    """One runner's pacer on its own Redis connection, as another process or host would have."""
    log = RedisQuotaLog(RedisLocation(REDIS_URL, prefix=prefix), prefix=f"{prefix}:quota",
                        window=WINDOW + MARGIN, credential_limit=PER_CREDENTIAL, project_limit=PER_PROJECT,
                        server_time=server_time)
    credentials = RUNNERS[name]
    return SharedQuotaPacer(log, list(credentials), per_credential=PER_CREDENTIAL, per_project=PER_PROJECT,
                            credential_projects=credentials, window_seconds=WINDOW, margin_seconds=MARGIN)


def assert_within_limits(sends: list[tuple[str, float]]) -> None:
    by_credential, by_project = defaultdict(list), defaultdict(list)
    for credential, at in sends:
        by_credential[credential].append(at)
        by_project[PROJECT_OF[credential]].append(at)
    for credential, times in by_credential.items():
        assert most_in_a_window(times, WINDOW + MARGIN) <= PER_CREDENTIAL, credential
    for project, times in by_project.items():
        assert most_in_a_window(times, WINDOW + MARGIN) <= PER_PROJECT, project


def test_runners_asking_at_once_share_each_window_to_its_last_slot(quota_prefix):
    # Three runners on three threads, all asking at the same instant: Redis gives out exactly the
    # project quotas (east 10 of the 2 x 6 its four credentials could take, west 10), no more.
    pacers = [runner(quota_prefix, name) for name in RUNNERS]
    granted, lock, start = [], threading.Lock(), threading.Barrier(len(pacers))

    def hammer(pacer: SharedQuotaPacer) -> None:
        start.wait()
        for _ in range(20):
            credential, _wait = pacer.acquire(1000.0)
            if credential is not None:
                with lock:
                    granted.append((credential, 1000.0))

    threads = [threading.Thread(target=hammer, args=(p,)) for p in pacers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    by_project = defaultdict(int)
    for credential, _at in granted:
        by_project[PROJECT_OF[credential]] += 1
    assert dict(by_project) == {"east": PER_PROJECT, "west": PER_PROJECT}
    assert_within_limits(granted)


def drive(pacers: list[SharedQuotaPacer], steps: list[tuple[int, float]]) -> list[tuple[str, float]]:
    """Each step: runner ``i`` asks at a time moved on by ``dt``, or by the wait it was told when
    ``dt`` is negative (a runner that sleeps exactly as long as told)."""
    now, sends = 2000.0, []
    for index, dt in steps:
        credential, wait = pacers[index].acquire(now)
        if credential is not None:
            sends.append((credential, now))
        now += wait if dt < 0 and credential is None and wait != float("inf") else max(dt, 0.0)
    return sends


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([-1.0, 0.0, 0.0, 0.3, 2.5, 7.0, 31.0])),
                min_size=20, max_size=160))
def test_no_rolling_window_holds_more_than_a_limit_whatever_the_runners_do(quota_prefix, steps):
    prefix = f"{quota_prefix}:{random.getrandbits(64):x}"  # a fresh log per example
    try:
        sends = drive([runner(prefix, name) for name in RUNNERS], steps)
        assert_within_limits(sends)
    finally:
        delete_prefix(prefix)


def test_the_projects_are_used_to_their_limit_when_runners_keep_asking(quota_prefix):
    # Not only safe but full: runners that sleep as told keep both projects at their quota.
    pacers = [runner(quota_prefix, name) for name in RUNNERS]
    sends = drive(pacers, [(i % 3, -1.0) for i in range(600)])
    by_project = defaultdict(list)
    for credential, at in sends:
        by_project[PROJECT_OF[credential]].append(at)
    assert {p: most_in_a_window(t, WINDOW + MARGIN) for p, t in by_project.items()} == {
        "east": PER_PROJECT, "west": PER_PROJECT}
    assert_within_limits(sends)


def test_credentials_excluded_are_not_given_out_by_the_shared_log(quota_prefix):
    pacer = runner(quota_prefix, "a")
    assert [pacer.acquire(0.0, exclude={"a-1"})[0] for _ in range(3)] == ["a-2"] * 3
    assert pacer.acquire(0.0, exclude={"a-1", "a-2"}) == (None, math.inf)
    assert pacer.acquire(0.0)[0] == "a-1"


def test_spare_room_is_asked_of_the_shared_log_beside_the_slots_taken(quota_prefix):
    pacer = runner(quota_prefix, "a")
    assert [pacer.acquire(0.0, exclude={"a-2"})[0] for _ in range(4)] == ["a-1"] * 4
    credential, wait = pacer.acquire(1.0, exclude={"a-2"}, spare={"a-1": 2})  # 4 + 1 + 2 > 6
    assert credential is None and wait > 0
    assert pacer.acquire(1.0, exclude={"a-2"}, spare={"a-1": 1})[0] == "a-1"  # 4 + 1 + 1 = 6


def test_follow_ups_of_the_read_granted_are_asked_of_the_shared_log_too(quota_prefix):
    pacer = runner(quota_prefix, "a")
    assert [pacer.acquire(0.0, exclude={"a-2"})[0] for _ in range(4)] == ["a-1"] * 4
    credential, wait = pacer.acquire(1.0, exclude={"a-2"}, spare={"a-1": 1}, follow_ups=1)  # 4 + 1 + 2 > 6
    assert credential is None and wait > 0
    assert pacer.acquire(1.0, exclude={"a-2"}, follow_ups=1)[0] == "a-1"  # 4 + 1 + 1 = 6


def test_a_project_429_pauses_that_project_for_every_runner_and_no_other(quota_prefix):
    a, b, c = (runner(quota_prefix, name) for name in RUNNERS)
    credential, _ = a.acquire(100.0)
    assert credential == "a-1"
    wait = a.record_quota_error("a-1", 100.5, QuotaScope.PROJECT, sent_at=100.0)
    assert wait == pytest.approx(WINDOW + MARGIN)  # the others filled east at 100.5; ours left the log
    # Runner b's east credential waits as long; its west one, and runner c, read on.
    assert b.acquire(101.0) == ("b-2", 0.0)
    assert c.acquire(101.0)[0] is not None
    assert b.acquire(101.0)[0] == "b-2"
    assert b.next_ready_in(101.0) == 0.0
    assert a.next_ready_in(101.0) == pytest.approx(100.5 + WINDOW + MARGIN - 101.0)
    assert a.held_by_quota_errors(101.0) and not c.held_by_quota_errors(101.0)
    assert a.acquire(100.5 + WINDOW + MARGIN)[0] is not None


def test_a_user_429_pauses_only_that_credential_for_every_runner(quota_prefix):
    # Two runners sharing one credential (the same service account named in both configs).
    first, second = runner(quota_prefix, "a"), runner(quota_prefix, "a")
    assert [first.acquire(now)[0] for now in (10.0, 11.0, 12.0)] == ["a-1", "a-2", "a-1"]
    assert first.record_quota_error("a-1", 12.5, QuotaScope.USER, sent_at=12.0) == 0.0  # a-2 reads on
    # a-1's window is taken as full from 12.5 on, for the other runner too; our oldest send in it
    # (10.0) frees its first slot.
    assert [second.acquire(13.0)[0] for _ in range(2)] == ["a-2", "a-2"]
    second.retire("a-2")
    assert second.acquire(13.0) == (None, pytest.approx(10.0 + WINDOW + MARGIN - 13.0))
    assert second.acquire(10.0 + WINDOW + MARGIN)[0] == "a-1"


def test_a_read_refused_again_after_the_window_was_filled_waits_a_whole_window(quota_prefix):
    a, b = runner(quota_prefix, "a"), runner(quota_prefix, "b")
    assert [a.acquire(0.0)[0] for _ in range(2)] == ["a-1", "a-2"]
    # Filled at 30 by the others; our send at 0 frees the first slot at 61.
    assert a.record_quota_error("a-1", 30.0, QuotaScope.PROJECT, sent_at=0.0) == pytest.approx(31.0)
    assert b.acquire(61.0)[0] == "b-1"
    # Runner b's read, sent into the window as Google had shown it, is refused too: the others'
    # share is growing, so east waits a whole window, for both runners; west reads on.
    assert b.record_quota_error("b-1", 62.0, QuotaScope.PROJECT, sent_at=61.0) == 0.0
    assert b.acquire(62.0)[0] == "b-2"
    assert a.next_ready_in(62.0) == pytest.approx(WINDOW + MARGIN)


def test_a_refused_read_leaves_the_shared_log(quota_prefix):
    a = runner(quota_prefix, "a")
    client = redis.Redis.from_url(REDIS_URL)
    a.acquire(5.0)
    key = f"{quota_prefix}:quota:sent:credential:a-1"
    assert client.zcard(key) == 1
    a.record_quota_error("a-1", 5.2, QuotaScope.UNKNOWN, sent_at=5.0)
    assert client.zcard(key) == 0
    assert a.next_ready_in(5.2) == 0.0  # a-2 reads on; a-1 waits a whole window
    assert [a.acquire(5.2 + i)[0] for i in range(3)] == ["a-2"] * 3


def test_every_key_expires_by_itself(quota_prefix):
    a = runner(quota_prefix, "a")
    a.acquire(1.0)
    a.acquire(1.0)
    a.record_quota_error("a-1", 1.5, QuotaScope.PROJECT, sent_at=1.0)
    client = redis.Redis.from_url(REDIS_URL)
    keys = sorted(k.decode().removeprefix(f"{quota_prefix}:quota:")
                  for k in client.scan_iter(match=f"{quota_prefix}:quota:*"))
    assert keys == ["filled:project:east", "paused:project:east", "sent:credential:a-2",
                    "sent:project:east"]
    keys = [f"{quota_prefix}:quota:{key}" for key in keys]
    for key in keys:
        ttl = client.pttl(key)
        assert 0 < ttl <= (WINDOW + MARGIN + 5.0) * 1000, key


def test_on_redis_time_runners_with_clocks_apart_still_share_one_window(quota_prefix):
    # Redis's clock decides: two runners whose own clocks are an hour apart fill one window together.
    a, b = runner(quota_prefix, "a", server_time=True), runner(quota_prefix, "b", server_time=True)
    local = time.time()
    granted = [a.acquire(local)[0] for _ in range(12)]
    assert sum(c is not None for c in granted) == PER_PROJECT  # east is full
    assert [b.acquire(local + 3600)[0] for _ in range(3)] == ["b-2"] * 3  # b-1 is in east
    credential, wait = a.acquire(local)
    assert credential is None and 0 < wait <= WINDOW + MARGIN


def test_a_run_on_redis_paces_through_the_shared_log_named_by_service_account(tmp_path, quota_prefix):
    clock = ManualClock(start=datetime.now(UTC).replace(microsecond=0))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        for sid in (A, B, C):
            sandbox.google.store.put_control(sid, {"title": "Store", "tabs": {"Stock": [["SKU"], ["A-1"]]}})
        keys = sandbox.write_credentials(tmp_path / "keys", 1)
        config = write_config(tmp_path, credentials=keys, endpoint=sandbox.base_url, extra=(
            f'\n[state]\nbackend = "redis"\nurl = "{REDIS_URL}"\nprefix = "{quota_prefix}"\n'))
        result = run_once(load_config(config, {}), clock=clock, messages_to=io.StringIO())
    sent = sum(result.report.counts.reads_by_credential.values())
    assert sent >= 3
    account = json.loads(next((tmp_path / "keys").glob("*.json")).read_text())["client_email"]
    client = redis.Redis.from_url(REDIS_URL)
    assert client.zcard(f"{quota_prefix}:quota:sent:credential:{account}") == sent


def test_check_on_redis_takes_its_reads_from_the_shared_log_so_the_runners_count_them(tmp_path, quota_prefix):
    with running_sandbox(telegram=False, latency="off") as sandbox:
        sandbox.google.store.put_control(A, {"title": "Store", "tabs": {"Stock": [["SKU"], ["A-1"]]}})
        keys = sandbox.write_credentials(tmp_path / "keys", 1)
        config = write_config(tmp_path, credentials=keys, endpoint=sandbox.base_url, extra=(
            f'\n[state]\nbackend = "redis"\nurl = "{REDIS_URL}"\nprefix = "{quota_prefix}"\n'))
        result = invoke(config, "check", A, "--exit-zero")
    assert result.exit_code == 0, result.output
    account = json.loads(next((tmp_path / "keys").glob("*.json")).read_text())["client_email"]
    client = redis.Redis.from_url(REDIS_URL)
    assert client.zcard(f"{quota_prefix}:quota:sent:credential:{account}") >= 1


def test_the_file_backend_keeps_its_own_pacer_and_an_unreadable_key_keeps_its_path(tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "sa.json").write_text(json.dumps({"client_email": "reader@proj-a.iam.gserviceaccount.com"}))
    missing = keys / "gone.json"
    assert service_accounts((keys / "sa.json", missing)) == {
        str(keys / "sa.json"): "reader@proj-a.iam.gserviceaccount.com", str(missing): str(missing)}
    with running_sandbox(telegram=False, latency="off") as sandbox:
        config = load_config(write_config(tmp_path, credentials=sandbox.write_credentials(tmp_path / "k", 1),
                                          endpoint=sandbox.base_url), {})
    pacer = quota_pacer(config, FileLocation(tmp_path / "state"))
    assert type(pacer) is QuotaPacer
