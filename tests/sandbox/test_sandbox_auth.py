"""The sandbox's service accounts and token endpoint, driven by google-auth's real token flow."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import crypt, jwt
from google.auth.exceptions import RefreshError
from google.auth.transport.requests import Request as AuthRequest
from google.oauth2 import service_account

from monitor.core.clock import ManualClock
from sheet_sandbox.auth import JWT_BEARER_GRANT, TokenAuthority
from sheet_sandbox.http import HTTPServerThread, Request

SCOPES = ["https://www.googleapis.com/auth/spreadsheets.readonly"]


@pytest.fixture
def clock():
    # google-auth stamps iat/exp from the real clock, so the sandbox's clock starts at real time.
    return ManualClock(datetime.now(UTC))


@pytest.fixture
def authority(clock):
    return TokenAuthority(clock)


@pytest.fixture(scope="module")
def token_server():
    """One server for the module (stopping one costs its poll interval); each test plugs in its own
    authority."""
    current: dict[str, TokenAuthority] = {}
    with HTTPServerThread(lambda request: current["authority"].token_endpoint(request)) as server:
        yield server, current


@pytest.fixture
def token_uri(token_server, authority):
    server, current = token_server
    current["authority"] = authority
    return f"{server.base_url}/token"


def bearer(token: str) -> Request:
    return Request("GET", "/v4/spreadsheets/x", {}, {"authorization": f"Bearer {token}"}, b"")


def assertion(info: dict, *, clock, key_pem: str | None = None, **claims) -> str:
    signer = crypt.RSASigner.from_string(key_pem or info["private_key"], info["private_key_id"])
    now = int(clock.time())
    payload = {"iss": info["client_email"], "aud": info["token_uri"], "scope": SCOPES[0],
               "iat": now, "exp": now + 3600, **claims}
    return jwt.encode(signer, payload).decode()


def post_assertion(token_uri: str, value: str) -> requests.Response:
    return requests.post(token_uri, data={"grant_type": JWT_BEARER_GRANT, "assertion": value}, timeout=5)


def test_issued_service_account_is_a_complete_google_json(authority):
    info = authority.issue_service_account("http://127.0.0.1:1/token")
    assert info["type"] == "service_account"
    assert info["client_email"] == "monitor-1@sheet-monitor-sandbox.iam.gserviceaccount.com"
    assert info["token_uri"] == "http://127.0.0.1:1/token"
    assert len(info["private_key_id"]) == 40
    key = serialization.load_pem_private_key(info["private_key"].encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == 2048
    loaded = service_account.Credentials.from_service_account_info(info)
    assert loaded.service_account_email == info["client_email"]
    assert authority.issue_service_account("u")["client_email"].startswith("monitor-2@")


def test_credential_files_are_private_and_never_overwritten(authority, tmp_path):
    first = authority.write_credentials(tmp_path, 2, "http://127.0.0.1:1/token")
    second = authority.write_credentials(tmp_path, 1, "http://127.0.0.1:1/token")
    assert [p.name for p in first + second] == ["sa-1.json", "sa-2.json", "sa-3.json"]
    for path in first + second:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    emails = {json.loads(p.read_text())["client_email"] for p in first + second}
    assert len(emails) == 3


def test_google_auth_token_flow_yields_a_token_tied_to_the_account(authority, token_uri, tmp_path):
    (path,) = authority.write_credentials(tmp_path, 1, token_uri)
    credentials = service_account.Credentials.from_service_account_file(str(path), scopes=SCOPES)
    credentials.refresh(AuthRequest())
    assert credentials.token.startswith("ya29.")
    assert authority.authenticate(bearer(credentials.token)) == credentials.service_account_email


def test_token_answer_has_googles_shape(authority, token_uri, clock):
    info = authority.issue_service_account(token_uri)
    response = post_assertion(token_uri, assertion(info, clock=clock))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"access_token", "expires_in", "token_type"}
    assert body["expires_in"] == 3599 and body["token_type"] == "Bearer"


def test_a_jwt_signed_with_another_key_gets_invalid_jwt_signature(authority, token_uri, tmp_path):
    info = authority.issue_service_account(token_uri)
    impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    forged = dict(info, private_key=impostor)
    credentials = service_account.Credentials.from_service_account_info(forged, scopes=SCOPES)
    with pytest.raises(RefreshError, match="Invalid JWT Signature"):
        credentials.refresh(AuthRequest())
    response = post_assertion(token_uri, assertion(info, clock=authority._clock, key_pem=impostor))
    assert response.status_code == 400
    assert response.json() == {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}


def test_an_unknown_account_is_refused(authority, token_uri, clock):
    info = dict(authority.issue_service_account(token_uri), client_email="ghost@x.iam.gserviceaccount.com")
    response = post_assertion(token_uri, assertion(info, clock=clock))
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"
    assert "account not found" in response.json()["error_description"]


def test_a_key_id_of_another_account_is_refused(authority, token_uri, clock):
    mine = authority.issue_service_account(token_uri)
    other = authority.issue_service_account(token_uri)
    crossed = dict(mine, private_key_id=other["private_key_id"])
    response = post_assertion(token_uri, assertion(crossed, clock=clock))
    assert response.json() == {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}


def test_wrong_audience_is_refused(authority, token_uri, clock):
    info = authority.issue_service_account(token_uri)
    response = post_assertion(token_uri, assertion(info, clock=clock, aud="https://example.org/t"))
    assert response.status_code == 400
    assert "audience" in response.json()["error_description"]


@pytest.mark.parametrize("offset, accepted", [(-3600 - 301, False), (-3600 - 299, True),
                                              (0, True), (299, True), (301, False)])
def test_assertion_time_window_follows_the_sandbox_clock(authority, token_uri, clock, offset, accepted):
    info = authority.issue_service_account(token_uri)
    issued = int(clock.time()) + offset
    value = assertion(info, clock=clock, iat=issued, exp=issued + 3600)
    response = post_assertion(token_uri, value)
    assert (response.status_code == 200) is accepted
    if not accepted:
        assert "Check your iat and exp values" in response.json()["error_description"]


def test_assertions_valid_for_more_than_an_hour_are_refused(authority, token_uri, clock):
    info = authority.issue_service_account(token_uri)
    now = int(clock.time())
    response = post_assertion(token_uri, assertion(info, clock=clock, iat=now, exp=now + 3601))
    assert response.json()["error"] == "invalid_grant"


@pytest.mark.parametrize("form, error", [
    ({"grant_type": "client_credentials", "assertion": "x"}, "unsupported_grant_type"),
    ({"grant_type": JWT_BEARER_GRANT}, "invalid_request"),
    ({"assertion": "x"}, "invalid_request"),
    ({"grant_type": JWT_BEARER_GRANT, "assertion": "not-a-jwt"}, "invalid_grant"),
    ({"grant_type": JWT_BEARER_GRANT, "assertion": "a.b.c"}, "invalid_grant"),
])
def test_malformed_token_requests_get_oauth_errors(token_uri, form, error):
    response = requests.post(token_uri, data=form, timeout=5)
    assert response.status_code == 400
    assert response.json()["error"] == error


def test_token_endpoint_wants_post(token_uri):
    response = requests.get(token_uri, timeout=5)
    assert response.status_code == 405
    assert response.json()["error"] == "invalid_request"


def test_access_tokens_expire_after_3599_seconds(authority, clock):
    token = authority.mint_token("someone@example.org")
    clock.advance(3598)
    assert authority.authenticate(bearer(token)) == "someone@example.org"
    clock.advance(1)
    assert authority.authenticate(bearer(token)) is None


def test_requests_without_a_known_bearer_token_are_anonymous(authority):
    assert authority.authenticate(Request("GET", "/", {}, {}, b"")) is None
    assert authority.authenticate(bearer("ya29.made-up")) is None
    basic = Request("GET", "/", {}, {"authorization": "Basic abc"}, b"")
    assert authority.authenticate(basic) is None
