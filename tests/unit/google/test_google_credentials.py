"""When Google's token service fails, or Google refuses the credential itself: real gspread and
google-auth against the sandbox producing Google's answers (docs/sandbox.md, Authentication, Faults).

Each is transient (every spreadsheet read with that credential would fail alike, so none is the
spreadsheet's fault), costs one attempt within the request's timeout, and reads as one line naming
the credential file, never a page of HTML, a library's repr or anything secret.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests
from gspread.http_client import HTTPClient

from monitor.core.clock import ManualClock
from monitor.core.errors import ErrorClass, SheetReadError, classify
from monitor.google.client import CredentialCache, EndpointAdapter
from monitor.google.reader import GspreadReader, classified
from sheet_sandbox.http import HTTPServerThread, Response
from sheet_sandbox.server import running_sandbox

DRIVE_METADATA = "https://www.googleapis.com/auth/drive.metadata.readonly"
RANGES = ["Stock!A1:B2"]


@pytest.fixture(scope="module")
def sandbox():
    # google-auth stamps its JWTs with the real clock, so the sandbox's clock starts at real time.
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as handle:
        handle.google.store.put_control("s1", {"title": "T", "tabs": {"Stock": [["SKU", 1]]}})
        yield handle


@pytest.fixture
def credential(sandbox, tmp_path) -> str:
    """A fresh service account each test: no token cached from another."""
    (path,) = sandbox.write_credentials(tmp_path, 1)
    yield str(path)
    sandbox.google.faults.clear()


def reader(sandbox, timeout: float = 5) -> GspreadReader:
    return GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=timeout)


def failed_read(sandbox, credential: str, timeout: float = 5) -> tuple[SheetReadError, float]:
    started = time.monotonic()
    with pytest.raises(SheetReadError) as caught:
        reader(sandbox, timeout).read("s1", RANGES, credential, timeout)
    return caught.value, time.monotonic() - started


def token_fault(sandbox, **spec) -> None:
    sandbox.google.faults.add({"spreadsheet": "/token", **spec})


def token_requests_left(sandbox) -> int:
    [fault] = sandbox.google.faults.active()
    return fault["remaining"]


# -- the token service failing ---------------------------------------------------------------------


def test_an_html_502_from_the_token_service_is_transient_and_told_in_one_line(sandbox, credential):
    token_fault(sandbox, statuses=[502])
    error, _ = failed_read(sandbox, credential)
    assert error.error_class is ErrorClass.TRANSIENT
    assert error.message == "token request failed for sa-1.json: HTTP 502 error page"


def test_an_intermittent_invalid_jwt_signature_is_transient_and_the_next_read_works(sandbox, credential):
    token_fault(sandbox, statuses=[400])
    error, _ = failed_read(sandbox, credential)
    assert error.error_class is ErrorClass.TRANSIENT
    assert error.message == "token request failed for sa-1.json: invalid_grant: Invalid JWT Signature."
    assert reader(sandbox).read("s1", RANGES, credential, 5)[0]["values"] == [["SKU", 1]]


def test_a_failing_token_service_is_asked_once_per_read_not_three_times_with_sleeps(sandbox, credential):
    token_fault(sandbox, statuses=[500, 500, 500])
    error, elapsed = failed_read(sandbox, credential)
    assert error.error_class is ErrorClass.TRANSIENT
    assert error.message == "token request failed for sa-1.json: HTTP 500: internal_failure"
    assert token_requests_left(sandbox) == 2  # the run's retry policy decides when to ask again
    assert elapsed < 0.9  # google-auth alone would sleep about 1 + 2 s between its three attempts


def test_a_hanging_token_service_costs_the_requests_timeout_once(sandbox, credential):
    token_fault(sandbox, hang=True)
    error, elapsed = failed_read(sandbox, credential, timeout=0.5)
    assert error.error_class is ErrorClass.TRANSIENT
    assert error.message == "token request failed for sa-1.json: no answer within 0.5 s"
    assert 0.5 <= elapsed < 1.5


def test_the_token_request_and_the_read_share_one_timeout(sandbox, credential):
    token_fault(sandbox, latency_ms=600, times=1)
    sandbox.google.faults.add({"spreadsheet": "s1", "latency_ms": 600, "times": 1})
    error, elapsed = failed_read(sandbox, credential, timeout=1.0)
    assert error.error_class is ErrorClass.TRANSIENT and error.message == "no answer within 1.0 s"
    assert elapsed < 1.3  # not 0.6 s for the token and 1.0 s more for the read


def test_a_page_answered_with_200_in_place_of_a_token_is_a_failure_not_a_crash(sandbox, credential):
    # Not Google's answer, but a proxy in between may give it: google-auth alone raises a TypeError.
    portal_page = Response.html(200, "<html>Sign in to the network</html>")
    with HTTPServerThread(lambda request: portal_page) as portal:
        info = json.loads(Path(credential).read_text(encoding="utf-8"))
        Path(credential).write_text(json.dumps({**info, "token_uri": f"{portal.base_url}/token"}))
        error, _ = failed_read(sandbox, credential)
    assert error.error_class is ErrorClass.TRANSIENT
    assert error.message == "token request failed for sa-1.json: HTTP 200 error page"


# -- Google refusing the credential ----------------------------------------------------------------


def test_a_token_without_the_sheets_scope_is_the_credentials_fault_not_the_spreadsheets(sandbox, credential):
    narrow = GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5,
                                            credentials=CredentialCache([DRIVE_METADATA]))
    with pytest.raises(SheetReadError) as caught:
        narrow.read("s1", RANGES, credential, 5)
    error = caught.value
    assert error.error_class is ErrorClass.TRANSIENT  # not PERMANENT: sharing the sheet cannot fix it
    assert (error.http_status, error.google_status) == (403, "PERMISSION_DENIED")
    assert error.message == "Request had insufficient authentication scopes. (credential sa-1.json)"


@pytest.mark.parametrize("request_of", [
    lambda reader, credential: reader.time_zone("s1", credential, 5),
    lambda reader, credential: reader.read_detailed("s1", RANGES, credential, 5),
], ids=["time zone", "read with details"])
def test_every_sheets_request_of_a_read_names_the_credential_google_refused(sandbox, credential, request_of):
    narrow = GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5,
                                            credentials=CredentialCache([DRIVE_METADATA]))
    with pytest.raises(SheetReadError) as caught:
        request_of(narrow, credential)
    assert caught.value.error_class is ErrorClass.TRANSIENT
    assert caught.value.message == "Request had insufficient authentication scopes. (credential sa-1.json)"


def test_a_request_that_reached_google_without_a_token_is_not_the_spreadsheets_fault(sandbox):
    session = requests.Session()
    session.mount("https://sheets.googleapis.com", EndpointAdapter(sandbox.base_url))
    client = HTTPClient(auth=None, session=session)
    with pytest.raises(SheetReadError) as caught, classified(5):
        client.values_batch_get("s1", RANGES)
    assert caught.value.error_class is ErrorClass.TRANSIENT
    assert caught.value.message == "The request is missing a valid API key."


@pytest.mark.parametrize("status, google, reason, detail, expected", [
    (401, "UNAUTHENTICATED", None, None, ErrorClass.TRANSIENT),
    (401, "UNAUTHENTICATED", "authError", "ACCESS_TOKEN_EXPIRED", ErrorClass.TRANSIENT),
    (None, "UNAUTHENTICATED", None, None, ErrorClass.TRANSIENT),
    (403, "PERMISSION_DENIED", None, "ACCESS_TOKEN_SCOPE_INSUFFICIENT", ErrorClass.TRANSIENT),
    (403, "PERMISSION_DENIED", "insufficientPermissions", None, ErrorClass.TRANSIENT),
    (403, "PERMISSION_DENIED", None, "CREDENTIALS_MISSING", ErrorClass.TRANSIENT),
    (403, "PERMISSION_DENIED", "forbidden", None, ErrorClass.PERMANENT),  # the sheet is not shared
    (403, "PERMISSION_DENIED", None, None, ErrorClass.PERMANENT),
    (503, "UNAVAILABLE", "backendError", None, ErrorClass.TRANSIENT),  # legacy list: same as without
    (500, "INTERNAL", "backendError", None, ErrorClass.UNCERTAIN),
])
def test_the_table_tells_a_refused_credential_from_a_refused_spreadsheet(status, google, reason, detail,
                                                                         expected):
    assert classify(status, google, False, False, False, reason, detail_reason=detail) is expected
