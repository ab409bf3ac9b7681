"""What Google answers about the request's credential and its token service, produced by the sandbox.

Every body is compared whole with the one Google sent, as quoted where docs/sandbox.md names it
(Authentication, Faults): no credential, a token not accepted, too few scopes, a JWT without scopes,
the token endpoint's own failures, and the legacy ``errors`` list some 5xx bodies carry.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest
import requests
from google.auth.exceptions import RefreshError
from google.auth.transport.requests import Request as AuthRequest
from google.oauth2 import service_account

from monitor.core.clock import ManualClock
from sheet_sandbox.auth import ACCESS_TOKEN_SECONDS
from sheet_sandbox.faults import FaultPlan
from sheet_sandbox.google import GoogleSandbox
from sheet_sandbox.http import Request
from sheet_sandbox.server import running_sandbox

EMAIL = "monitor-9@sheet-monitor-sandbox.iam.gserviceaccount.com"
SHEETS_READONLY = "https://www.googleapis.com/auth/spreadsheets.readonly"
DRIVE_METADATA = "https://www.googleapis.com/auth/drive.metadata.readonly"
SUFFIX = " See https://developers.google.com/identity/sign-in/web/devconsole-project."
INVALID_CREDENTIALS = ("Request had invalid authentication credentials. Expected OAuth 2 access token, "
                       "login cookie or other valid authentication credential." + SUFFIX)
VALUES = "/v4/spreadsheets/s1/values/Stock!A1"
FILES = "/drive/v3/files"


@pytest.fixture(scope="module")
def sandbox():
    # google-auth stamps its JWTs with the real clock, so the sandbox's clock starts at real time.
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as handle:
        handle.google.store.put_control("s1", {"title": "T", "tabs": {"Stock": [["a", 1]]}})
        yield handle


@pytest.fixture(autouse=True)
def no_faults(sandbox):
    yield
    sandbox.google.faults.clear()


def get(sandbox, path: str, token: str | None = None) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.get(sandbox.base_url + path, headers=headers, timeout=5)


def error_info(reason: str, service: str, method: str) -> dict:
    return {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com",
            "metadata": {"service": service, "method": method}}


# -- no credential, a token not accepted, too few scopes --------------------------------------------


def test_a_request_without_any_credential_is_a_403_asking_for_an_api_key(sandbox):
    sheets, drive = get(sandbox, VALUES), get(sandbox, FILES)
    assert sheets.status_code == drive.status_code == 403
    message = "The request is missing a valid API key."
    assert sheets.json() == {"error": {"code": 403, "message": message, "status": "PERMISSION_DENIED"}}
    assert drive.json() == {"error": {
        "code": 403, "message": message,
        "errors": [{"message": message, "domain": "global", "reason": "forbidden"}],
        "status": "PERMISSION_DENIED"}}


def test_a_token_google_never_minted_is_a_401_with_googles_whole_message(sandbox):
    sheets, drive = get(sandbox, VALUES, "ya29.never-minted"), get(sandbox, FILES, "ya29.never-minted")
    assert sheets.status_code == drive.status_code == 401
    assert sheets.json() == {"error": {"code": 401, "message": INVALID_CREDENTIALS,
                                       "status": "UNAUTHENTICATED"}}
    assert drive.json()["error"]["errors"] == [{
        "message": "Invalid Credentials", "domain": "global", "reason": "authError",
        "location": "Authorization", "locationType": "header"}]


def test_an_expired_token_is_a_401_whose_error_info_says_so():
    clock = ManualClock()
    google = GoogleSandbox(clock=clock, latency="off")  # its own clock: the module's stays at real time
    google.store.put_control("s1", {"title": "T", "tabs": {"Stock": [["a", 1]]}})
    token = google.auth.mint_token(EMAIL)
    clock.advance(ACCESS_TOKEN_SECONDS - 1)
    path = "/v4/spreadsheets/s1/values:batchGet"
    request = Request("GET", path, {"ranges": ["A1"]}, {"authorization": f"Bearer {token}"}, b"")
    assert google(request).status == 200
    clock.advance(1)
    response = google(request)
    assert response.status == 401
    assert json.loads(response.body) == {"error": {
        "code": 401, "message": INVALID_CREDENTIALS, "status": "UNAUTHENTICATED",
        "details": [error_info("ACCESS_TOKEN_EXPIRED", "sheets.googleapis.com",
                               "google.apps.sheets.v4.SpreadsheetsService.BatchGetValues")]}}


def test_a_token_without_a_scope_the_method_accepts_is_a_403_naming_the_method(sandbox):
    token = sandbox.google.auth.mint_token(EMAIL, frozenset({DRIVE_METADATA}))
    sheets = get(sandbox, VALUES, token)
    assert sheets.status_code == 403
    assert sheets.json() == {"error": {
        "code": 403, "message": "Request had insufficient authentication scopes.",
        "status": "PERMISSION_DENIED",
        "details": [error_info("ACCESS_TOKEN_SCOPE_INSUFFICIENT", "sheets.googleapis.com",
                               "google.apps.sheets.v4.SpreadsheetsService.GetValues")]}}
    assert get(sandbox, FILES, token).status_code == 200  # Drive's metadata scope is enough there

    sheets_only = sandbox.google.auth.mint_token(EMAIL, frozenset({SHEETS_READONLY}))
    assert get(sandbox, VALUES, sheets_only).status_code == 200
    drive = get(sandbox, "/drive/v3/changes/startPageToken", sheets_only)
    assert drive.status_code == 403
    assert drive.json()["error"]["errors"] == [{
        "message": "Insufficient Permission", "domain": "global", "reason": "insufficientPermissions"}]
    assert drive.json()["error"]["details"] == [error_info(
        "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "drive.googleapis.com",
        "google.apps.drive.v3.DriveChanges.GetStartPageToken")]


def test_a_read_only_token_cannot_write(sandbox):
    token = sandbox.google.auth.mint_token(EMAIL, frozenset({SHEETS_READONLY}))
    response = requests.put(sandbox.base_url + VALUES, params={"valueInputOption": "RAW"},
                            json={"values": [["b"]]}, headers={"Authorization": f"Bearer {token}"}, timeout=5)
    assert response.status_code == 403
    assert response.json()["error"]["details"][0]["metadata"]["method"].endswith(".UpdateValues")


def test_google_auths_token_carries_the_scopes_its_credentials_asked_for(sandbox, tmp_path):
    (path,) = sandbox.write_credentials(tmp_path, 1)
    narrow = service_account.Credentials.from_service_account_file(str(path), scopes=[DRIVE_METADATA])
    narrow.refresh(AuthRequest())
    assert get(sandbox, VALUES, narrow.token).status_code == 403
    assert get(sandbox, FILES, narrow.token).status_code == 200


def test_a_jwt_asking_for_no_scope_gets_no_token(sandbox, tmp_path):
    (path,) = sandbox.write_credentials(tmp_path, 1)
    unscoped = service_account.Credentials.from_service_account_file(str(path))
    with pytest.raises(RefreshError) as caught:
        unscoped.refresh(AuthRequest())
    assert caught.value.args[1] == {"error": "invalid_scope",
                                    "error_description": "Invalid OAuth scope or ID token audience provided."}


# -- the token endpoint's own failures ---------------------------------------------------------------


def post_token(sandbox, timeout: float = 5) -> requests.Response:
    return requests.post(sandbox.base_url + "/token", data={"grant_type": "x"}, timeout=timeout)


def test_a_fault_aimed_at_the_token_endpoint_answers_as_googles_token_service(sandbox):
    sandbox.google.faults.add({"spreadsheet": "/token", "statuses": [502, 400, 500]})
    page, grant, internal = post_token(sandbox), post_token(sandbox), post_token(sandbox)
    assert page.status_code == 502 and page.headers["content-type"].startswith("text/html")
    assert "<title>Error 502 (Server Error)!!1</title>" in page.text
    assert grant.status_code == 400
    assert grant.json() == {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
    assert internal.status_code == 500 and internal.json() == {"error": "internal_failure"}
    after = post_token(sandbox)  # spent: the endpoint itself answers again
    assert after.json() == {"error": "unsupported_grant_type", "error_description": "Invalid grant_type: x"}


def test_a_hanging_token_endpoint_holds_the_request_until_the_client_gives_up(sandbox):
    sandbox.google.faults.add({"spreadsheet": "/token", "hang": True, "times": 1})
    started = time.monotonic()
    with pytest.raises(requests.Timeout):
        post_token(sandbox, timeout=0.3)
    assert time.monotonic() - started < 2
    assert post_token(sandbox).status_code == 400  # only once


def test_the_wildcard_never_reaches_the_token_endpoint_and_token_faults_never_reach_the_apis(sandbox):
    token = sandbox.google.auth.mint_token(EMAIL)
    sandbox.google.faults.add({"spreadsheet": "*", "statuses": [503], "repeat": True})
    assert post_token(sandbox).status_code == 400  # the endpoint's own answer to a bad grant
    sandbox.google.faults.clear()
    sandbox.google.faults.add({"spreadsheet": "/token", "statuses": [502], "repeat": True})
    assert get(sandbox, VALUES, token).status_code == 200


@pytest.mark.parametrize("status", [403, 404, 429, 503])
def test_the_token_endpoint_fails_only_as_google_is_seen_to(status):
    with pytest.raises(ValueError, match=r"token endpoint's \"statuses\" may be 200, 400, 500, 502"):
        FaultPlan().add({"spreadsheet": "/token", "statuses": [status]})


# -- legacy errors lists on 5xx ----------------------------------------------------------------------


def test_legacy_errors_add_the_list_some_5xx_bodies_carry(sandbox):
    token = sandbox.google.auth.mint_token(EMAIL)
    sandbox.google.faults.add({"spreadsheet": "s1", "statuses": [503, 500, 503], "legacy_errors": True})
    unavailable, internal = get(sandbox, VALUES, token), get(sandbox, VALUES, token)
    assert unavailable.json() == {"error": {
        "code": 503, "message": "The service is currently unavailable.",
        "errors": [{"message": "The service is currently unavailable.", "domain": "global",
                    "reason": "backendError"}],
        "status": "UNAVAILABLE"}}
    assert internal.json() == {"error": {
        "code": 500, "message": "Internal error encountered.",
        "errors": [{"message": "Internal error encountered.", "domain": "global", "reason": "backendError"}],
        "status": "INTERNAL"}}
    sandbox.google.faults.clear()
    sandbox.google.faults.add({"spreadsheet": "s1", "statuses": [503]})
    assert "errors" not in get(sandbox, VALUES, token).json()["error"]  # without the key: as recorded
