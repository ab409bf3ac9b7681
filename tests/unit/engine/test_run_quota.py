"""Runs meeting Google's 429s against the sandbox: who waits, for how long, and what the run reports.

Real gspread and google-auth; the runner, the pacer and the sandbox's quota windows share one
ManualClock (see test_run). "Another tool" spends quota through the sandbox's own meter, as another
program on the same service account or Cloud project would.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from test_run import World

from monitor.core.clock import ManualClock
from monitor.engine.heartbeat import RunOutcome
from sheet_sandbox.projects import project_of
from sheet_sandbox.server import running_sandbox

EAST, WEST = "sheet-monitor-sandbox-1", "sheet-monitor-sandbox-2"


def other_tool(n: int) -> str:
    """The n-th read's account of another tool in the east project (60 reads a minute each)."""
    return f"other-tool-{n // 60}@{EAST}.iam.gserviceaccount.com"


@pytest.fixture
def world(tmp_path):
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time.
    clock = ManualClock(start=datetime.now(UTC))
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        the_world = World(None, [], tmp_path / "state", clock=clock, sandbox=sandbox)
        the_world.use_credentials(sandbox.write_credentials(tmp_path / "secrets", 1))
        yield the_world


def in_two_projects(world: World, tmp_path) -> dict[str, str]:
    """Four credentials, two in each project; the Bench paces them by project, as the config does."""
    paths = world.sandbox.write_credentials(tmp_path / "two-projects", 4, projects=2)
    world.use_credentials(paths)
    email = {str(path): f"monitor-{n}@{project}.iam.gserviceaccount.com"
             for n, (path, project) in enumerate(zip(paths, (EAST, EAST, WEST, WEST), strict=True), 1)}
    world.projects = {credential: project_of(address) for credential, address in email.items()}
    assert set(world.projects.values()) == {EAST, WEST}
    return world.projects


def test_a_per_project_429_stops_that_projects_credentials_and_no_other(world, tmp_path):
    projects = in_two_projects(world, tmp_path)
    for n in range(296):  # another tool of the east project has all but four of its reads
        assert world.sandbox.google.quota.admit(other_tool(n), "read", EAST) is None
    world.add_sheets(12)
    run = world.run(budget=timedelta(seconds=50))
    assert run.report.ok == 12 and run.report.stop_reason == "round_done"
    by_project = {EAST: 0, WEST: 0}
    for credential, reads in run.report.reads_by_credential.items():
        by_project[projects[credential]] += reads
    # East's four reads went, its fifth was refused for the project, and neither east credential
    # sent again: one 429, not one per credential; west read the rest.
    stats = world.sandbox.google.stats.snapshot()
    assert stats["quota_exceeded"] == 1 and EAST in next(iter(stats["quota_exceeded_by_user"]))
    assert by_project == {EAST: 5, WEST: 8}
    assert run.report.quota_errors == 1 and run.state.heartbeat.outcome is RunOutcome.OK
    stats = world.stored().heartbeat.stats
    assert stats.quota_refusals == 1 and stats.retries_by_class == {}  # a 429 waits; it is no retry


def test_after_a_per_user_429_the_credential_reads_again_when_its_oldest_send_ages_out(world):
    world.sandbox.google.quota.set_limits(read_per_user=2)  # Google grants 2 where the config says 60
    first, flaky, last = world.add_sheets(3)
    world.fault(flaky, statuses=[503])  # its retry, 3 s on, is the read refused for quota
    started = world.clock.time()
    world.run(budget=timedelta(minutes=3))
    assert world.stored().round.is_complete()
    assert world.sandbox.google.stats.snapshot()["quota_exceeded"] == 1
    # The refused read went again once the run's first send had aged out (61 s with the pacer's
    # margin), not a whole window after the refusal (64 s); nothing was refused a second time.
    assert world.clock.time() - started == pytest.approx(61, abs=0.5)


def test_a_run_that_a_429_kept_from_reading_anything_is_degraded(world):
    world.sandbox.google.quota.set_limits(read_per_user=2)
    world.add_sheets(3)
    first = world.run(budget=timedelta(seconds=30))  # two reads, then a 429 it cannot wait out
    assert first.report.ok == 2 and first.report.quota_errors == 1
    assert world.stored().heartbeat.outcome is RunOutcome.OK  # it read what it could
    world.clock.advance(5)
    second = world.run(budget=timedelta(seconds=20))  # the wait the 429 left outlasts this run
    assert second.report.tasks == 0 and second.report.ok == 0
    assert world.stored().heartbeat.outcome is RunOutcome.DEGRADED
    world.clock.advance(60)
    third = world.run(budget=timedelta(seconds=20))
    assert third.report.ok == 1 and world.stored().heartbeat.outcome is RunOutcome.OK
