"""Whose quota a 429 names: ``core.errors.quota_scope`` over Google's bodies, and the reader that
hands it on, through gspread against the sandbox's real refusals.

The bodies are the sandbox's (docs/sandbox.md, "Quotas", cites Google's); the older and the stripped
variants are real bodies users reported, quoted in the comments beside them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from monitor.core.clock import ManualClock
from monitor.core.errors import ErrorClass, QuotaScope, SheetReadError, quota_scope
from monitor.google.reader import GspreadReader
from sheet_sandbox import errors as google_errors
from sheet_sandbox.server import running_sandbox

SHEET = "1sandboxQuotaScope".ljust(44, "x")


def body(response) -> dict:
    return json.loads(response.body)["error"]


@pytest.mark.parametrize(("kind", "scope", "expected"), [
    ("Read", "user", QuotaScope.USER), ("Read", "project", QuotaScope.PROJECT),
    ("Write", "user", QuotaScope.USER), ("Write", "project", QuotaScope.PROJECT),
])
def test_the_error_info_of_googles_429_names_the_scope(kind, scope, expected):
    assert quota_scope(body(google_errors.quota_exceeded(kind, scope, 60))) is expected


def test_error_info_comes_before_the_message():
    error = body(google_errors.quota_exceeded("Read", "project", 300))
    error["message"] = error["message"].replace("per minute'", "per minute per user'")
    assert quota_scope(error) is QuotaScope.PROJECT


def test_the_older_error_info_says_it_with_its_quota_unit():
    # The recorded body (google-recordings README): quota_unit, no consumer.
    error = {"message": "", "details": [{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
        "metadata": {"quota_unit": "1/min/{project}/{user}"}}]}
    assert quota_scope(error) is QuotaScope.USER
    error["details"][0]["metadata"]["quota_unit"] = "1/min/{project}"
    assert quota_scope(error) is QuotaScope.PROJECT


@pytest.mark.parametrize(("message", "expected"), [
    # Today's texts: the per-user limit ends "per user", the project's names no scope.
    ("Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user' "
     "of service 'sheets.googleapis.com' for consumer 'project_number:603366585132'.", QuotaScope.USER),
    ("Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' "
     "of service 'sheets.googleapis.com' for consumer 'project_number:603366585132'.", QuotaScope.PROJECT),
    # Before per-minute quotas (github.com/r-lib/gargle/issues/159, gspread issue 583).
    ("Quota exceeded for quota group 'ReadGroup' and limit 'Read requests per user per 100 seconds' "
     "of service 'sheets.googleapis.com' for consumer 'project_number:603366585132'.", QuotaScope.USER),
    ("Quota exceeded for quota group 'ReadGroup' and limit 'Read requests per 100 seconds' "
     "of service 'sheets.googleapis.com' for consumer 'project_number:603366585132'.", QuotaScope.PROJECT),
    ("Quota exceeded.", QuotaScope.UNKNOWN),
])
def test_without_error_info_the_message_says_it(message, expected):
    assert quota_scope({"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED"}) is expected


@pytest.mark.parametrize("error", [None, {}, {"details": "odd"}, {"details": [None, {"@type": 3}]},
                                   {"message": 429}])
def test_a_body_that_says_nothing_usable_is_unknown(error):
    assert quota_scope(error) is QuotaScope.UNKNOWN


# -- through gspread against the sandbox ---------------------------------------------------------


@pytest.fixture
def google(tmp_path):
    # google-auth stamps its JWTs with the real time, so the manual clock starts at the real time.
    with running_sandbox(clock=ManualClock(start=datetime.now(UTC)), telegram=False,
                         latency="off") as sandbox:
        sandbox.google.store.put_control(SHEET, {"title": "Store", "tabs": {"Stock": [["SKU"]]}})
        yield sandbox, [str(path) for path in sandbox.write_credentials(tmp_path, 2)]


def refusal(sandbox, credential: str) -> SheetReadError:
    reader = GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5)
    with pytest.raises(SheetReadError) as caught:
        for _ in range(5):
            reader.read(SHEET, ["Stock!A1"], credential, 5)
    return caught.value


def test_the_reader_says_a_429_is_the_credentials_own_quota(google):
    sandbox, (first, _) = google
    sandbox.google.quota.set_limits(read_per_user=2)
    error = refusal(sandbox, first)
    assert (error.error_class, error.http_status) == (ErrorClass.QUOTA, 429)
    assert error.quota_scope is QuotaScope.USER


def test_the_reader_says_a_429_is_the_projects_quota(google):
    sandbox, (first, second) = google
    sandbox.google.quota.set_limits(read_per_user=100, read_per_project=3)
    reader = GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5)
    for _ in range(3):
        reader.read(SHEET, ["Stock!A1"], second, 5)
    error = refusal(sandbox, first)  # the first read of this credential: the project is full
    assert error.quota_scope is QuotaScope.PROJECT
    assert "limit 'Read requests per minute' of service" in error.message


def test_the_anti_abuse_page_is_a_429_whose_scope_is_unknown(google):
    sandbox, (first, _) = google
    sandbox.google.faults.add({"spreadsheet": SHEET, "statuses": [429], "html": True})
    error = refusal(sandbox, first)
    assert (error.error_class, error.http_status) == (ErrorClass.QUOTA, 429)
    assert error.quota_scope is QuotaScope.UNKNOWN
    assert error.message == "HTTP 429 error page"
