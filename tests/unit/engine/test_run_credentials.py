"""Runs that meet Google's token service failing, or Google refusing the credential, through real
gspread and google-auth against the sandbox (docs/sandbox.md, Authentication, Faults).

None of it is a spreadsheet's fault: nothing is dead-lettered for it, the whole-API breaker stops a
run that meets it everywhere with one alert naming what failed, and no read crashes.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest
from run_fixtures import kinds, of_run
from sandbox_bench import sandbox_bench
from test_run import World

from monitor.core.errors import ErrorInfo
from monitor.engine.events import ApiDegraded, BreakerOpened, DeadLettered
from monitor.engine.fleet import Fleet
from monitor.engine.health import OK
from monitor.engine.heartbeat import RunOutcome
from monitor.google.client import CredentialCache
from monitor.google.reader import GspreadReader
from monitor.notify.alerts import compose_alert
from monitor.notify.settings import AlertSettings

DRIVE_METADATA = "https://www.googleapis.com/auth/drive.metadata.readonly"


def degraded_event(run) -> ApiDegraded:
    [event] = [event for event in of_run(run) if isinstance(event, ApiDegraded)]
    return event


@pytest.fixture
def world(tmp_path):
    with sandbox_bench(World, tmp_path) as bench:
        yield bench


def test_a_token_service_answering_502_stops_the_run_with_one_alert_that_names_it(world: World, caplog):
    world.add_sheets(30)
    world.fault("/token", statuses=[502], repeat=True)
    with caplog.at_level(logging.INFO, logger="monitor"):
        run = world.run()
    assert run.report.outcome == RunOutcome.DEGRADED and run.report.counts.tasks_done == 0
    event = degraded_event(run)
    assert event.last_error.message == "token request failed for sa-1.json: HTTP 502 error page"
    assert DeadLettered.KIND not in kinds(of_run(run)) and BreakerOpened.KIND not in kinds(of_run(run))
    assert world.reads() == 0  # no request reached Sheets without a token
    assert not [r for r in caplog.records if r.getMessage() == "task_crashed" or r.exc_info]


def test_an_intermittent_invalid_jwt_signature_is_retried_and_every_spreadsheet_read(world: World):
    ids = world.add_sheets(3)
    world.fault("/token", statuses=[400], times=1)
    run = world.run()
    assert run.report.outcome == RunOutcome.OK
    assert {run.state.health[sid].health for sid in ids} == {OK}
    [first] = [task for task in run.state.round.tasks.values() if len(task.history) > 1]
    assert [attempt.outcome for attempt in first.history] == ["transient", "ok"]
    assert first.history[0].error.message.endswith("invalid_grant: Invalid JWT Signature.")


def test_a_credential_without_the_sheets_scope_dead_letters_no_spreadsheet(world: World):
    world.add_sheets(12)
    world.reader = GspreadReader.from_credentials(endpoint=world.sandbox.base_url, timeout=2,
                                                  credentials=CredentialCache([DRIVE_METADATA]))
    run = world.run()
    assert DeadLettered.KIND not in kinds(of_run(run))  # sharing the spreadsheets would not help
    error = degraded_event(run).last_error
    assert (error.http_status, error.google_status) == (403, "PERMISSION_DENIED")
    assert error.message == "Request had insufficient authentication scopes. (credential sa-1.json)"


def test_the_alert_says_what_failed_last():
    error = ErrorInfo("transient", "token request failed for sa-1.json: HTTP 502 error page")
    event = ApiDegraded(at=datetime(2026, 1, 5, 9, 0, tzinfo=UTC), run_id="run-1", failing_in_a_row=8,
                        last_error=error)
    [message] = compose_alert([event], Fleet({}), AlertSettings())
    assert message.text.split("\n")[3] == (
        "🟠 Google API degraded: 8 spreadsheets failed in a row; the run stopped early and the next one "
        "probes first (last: token request failed for sa-1.json: HTTP 502 error page)")
