"""gspread, through the endpoint seam and google-auth's real token flow, against the sandbox."""

from __future__ import annotations

from datetime import UTC, datetime

import gspread
import pytest
from gspread.http_client import BackOffHTTPClient

from monitor.clock import ManualClock
from monitor.sandbox.auth import TokenAuthority
from monitor.sandbox.http import HTTPServerThread, Response
from monitor.sheets import EndpointAdapter, build_gspread_client

# -- the seam alone, against a recording endpoint ----------------------------------------------


class RecordingEndpoint:
    """Serves the token endpoint and records every other request it sees."""

    def __init__(self) -> None:
        self.authority = TokenAuthority(ManualClock(datetime.now(UTC)))
        self.seen: list[tuple[str, str, str, str | None]] = []

    def __call__(self, request):
        if request.raw_path == "/token":
            return self.authority.token_endpoint(request)
        user = self.authority.authenticate(request)
        self.seen.append((request.method, request.raw_path, request.headers.get("host"), user))
        if request.raw_path.startswith("/drive/"):
            return Response.json(200, {"files": []})
        return Response.json(200, {"spreadsheetId": "abc", "properties": {"title": "T"}, "sheets": []})


@pytest.fixture(scope="module")
def recording():
    endpoint = RecordingEndpoint()
    with HTTPServerThread(endpoint) as server:
        yield endpoint, server.base_url


@pytest.fixture
def recording_credentials(recording, tmp_path):
    endpoint, base_url = recording
    endpoint.seen.clear()
    (path,) = endpoint.authority.write_credentials(tmp_path, 1, f"{base_url}/token")
    return path


def test_seam_sends_sheets_and_drive_traffic_to_the_endpoint(recording, recording_credentials):
    endpoint, base_url = recording
    client = build_gspread_client(recording_credentials, endpoint=base_url)
    assert client.open_by_key("abc").title == "T"
    client.list_spreadsheet_files()
    host = base_url.removeprefix("http://")
    email = "monitor-1@sheet-monitor-sandbox.iam.gserviceaccount.com"
    assert endpoint.seen[0] == ("GET", "/v4/spreadsheets/abc", host, email)
    assert endpoint.seen[1][:3] == ("GET", "/drive/v3/files", host)


def test_seam_ignores_proxies_from_the_environment(recording, recording_credentials, monkeypatch):
    _, base_url = recording
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = build_gspread_client(recording_credentials, endpoint=base_url)
    assert client.open_by_key("abc").id == "abc"


def test_client_has_a_timeout_and_no_backoff_retries(recording, recording_credentials):
    _, base_url = recording
    client = build_gspread_client(recording_credentials, endpoint=base_url, timeout=7)
    assert client.http_client.timeout == 7
    assert type(client.http_client) is gspread.http_client.HTTPClient
    assert not isinstance(client.http_client, BackOffHTTPClient)
    production = build_gspread_client(recording_credentials)
    assert production.http_client.timeout == 30
    assert not any(isinstance(a, EndpointAdapter) for a in production.http_client.session.adapters.values())
    with pytest.raises(ValueError, match="timeout"):
        build_gspread_client(recording_credentials, timeout=0)


def test_endpoint_may_carry_a_path_prefix_and_must_be_http():
    adapter = EndpointAdapter("http://127.0.0.1:1/prefix/")
    assert adapter._prefix == "/prefix"
    with pytest.raises(ValueError, match="http"):
        EndpointAdapter("127.0.0.1:8931")
