"""gspread, through the endpoint seam and google-auth's real token flow, against the sandbox."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import gspread
import pytest
import requests
from gspread.auth import DEFAULT_SCOPES
from gspread.http_client import BackOffHTTPClient

from monitor.core.clock import ManualClock
from monitor.google.client import EndpointAdapter, build_gspread_client
from sheet_sandbox import running_sandbox
from sheet_sandbox.auth import TokenAuthority
from sheet_sandbox.http import HTTPServerThread, Response
from sheet_sandbox.projects import project_number

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


# -- end to end: gspread + the seam + google-auth's token flow against the running sandbox ---------

STOCK = {"title": "Stock", "tabs": {"Sheet1": [["item", "qty"], ["apple", 3], ["pear", 0]],
                                    "Other": [["x"]]}}


@pytest.fixture(scope="module")
def sandbox():
    # google-auth stamps its JWT from the real clock, so the manual clock starts at real time.
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as handle:
        yield handle


@pytest.fixture(scope="module")
def credentials(sandbox, tmp_path_factory):
    return sandbox.write_credentials(tmp_path_factory.mktemp("credentials"), 2)


@pytest.fixture
def google(sandbox):
    sandbox.google.reset()
    sandbox.google.quota.set_limits(read_per_user=60, read_per_project=300)
    sandbox.google.store.put_control("s1", STOCK)
    sandbox.google.store.put_control("s2", STOCK)
    return sandbox.google


def client_for(sandbox, path, timeout: float = 5) -> gspread.Client:
    return build_gspread_client(path, endpoint=sandbox.base_url, timeout=timeout)


def test_gspread_reads_a_spreadsheet_through_the_seam(sandbox, credentials, google):
    client = client_for(sandbox, credentials[0])
    spreadsheet = client.open_by_key("s1")
    assert spreadsheet.title == "Stock"
    assert spreadsheet.values_batch_get(["Sheet1!A1:B3"])["valueRanges"][0]["values"] == [
        ["item", "qty"], ["apple", "3"], ["pear", "0"]]
    email = "monitor-1@sheet-monitor-sandbox.iam.gserviceaccount.com"
    assert google.stats.snapshot()["by_user"] == {email: 2}


@pytest.mark.parametrize("status, code", [(503, 503), (500, 500), (403, 403), (404, 404),
                                          (429, 429), (502, -1)])
def test_every_injected_error_reaches_gspread_as_api_error(sandbox, credentials, google, status, code):
    spreadsheet = client_for(sandbox, credentials[0]).open_by_key("s1")
    google.faults.add({"spreadsheet": "s1", "statuses": [status]})
    with pytest.raises(gspread.exceptions.APIError) as caught:
        spreadsheet.values_batch_get(["Sheet1!A1:B3"])
    assert caught.value.code == code
    assert caught.value.response.status_code == status
    assert spreadsheet.values_batch_get(["Sheet1!A1:B3"])["valueRanges"]  # the sequence is spent


def test_the_anti_abuse_429_reaches_gspread_as_a_page_it_cannot_parse(sandbox, credentials, google):
    spreadsheet = client_for(sandbox, credentials[0]).open_by_key("s1")
    google.faults.add({"spreadsheet": "s1", "statuses": [429], "html": True})
    with pytest.raises(gspread.exceptions.APIError) as caught:
        spreadsheet.values_batch_get(["Sheet1!A1:B3"])
    assert caught.value.code == -1 and caught.value.response.status_code == 429
    assert "Sorry..." in caught.value.error["message"]


def test_open_by_key_raises_like_against_google(sandbox, credentials, google):
    client = client_for(sandbox, credentials[0])
    with pytest.raises(gspread.exceptions.SpreadsheetNotFound):
        client.open_by_key("no-such-spreadsheet")
    google.faults.add({"spreadsheet": "s1", "statuses": [403], "repeat": True})
    with pytest.raises(PermissionError):
        client.open_by_key("s1")
    google.faults.add({"spreadsheet": "s2", "statuses": [404]})
    with pytest.raises(gspread.exceptions.SpreadsheetNotFound):
        client.open_by_key("s2")


def test_the_61st_read_in_a_minute_is_refused_until_the_window_refills(sandbox, credentials, google):
    spreadsheet = client_for(sandbox, credentials[0]).open_by_key("s1")  # read 1
    for _ in range(59):
        spreadsheet.values_batch_get(["Sheet1!A1"])
    with pytest.raises(gspread.exceptions.APIError) as caught:
        spreadsheet.values_batch_get(["Sheet1!A1"])
    assert caught.value.code == 429
    assert caught.value.error["status"] == "RESOURCE_EXHAUSTED"
    assert "Retry-After" not in caught.value.response.headers
    other = client_for(sandbox, credentials[1]).open_by_key("s1")  # another account has its own quota
    assert other.title == "Stock"
    sandbox.clock.advance(60)
    assert spreadsheet.values_batch_get(["Sheet1!A1"])["valueRanges"]


def test_each_project_has_its_own_read_quota_and_one_exhausted_does_not_refuse_the_other(
        sandbox, google, tmp_path):
    google.quota.set_limits(read_per_user=100, read_per_project=3)
    first, second = sandbox.write_credentials(tmp_path, 2, projects=2)
    in_first = client_for(sandbox, first).open_by_key("s1")  # read 1 of project -1
    for _ in range(2):
        in_first.values_batch_get(["Sheet1!A1"])
    with pytest.raises(gspread.exceptions.APIError) as caught:
        in_first.values_batch_get(["Sheet1!A1"])
    error = caught.value.error
    assert caught.value.code == 429 and "limit 'Read requests per minute' of" in error["message"]
    assert error["details"][0]["metadata"]["quota_limit"] == "ReadRequestsPerMinutePerProject"
    assert f"project_number:{project_number('sheet-monitor-sandbox-1')}'" in error["message"]
    in_second = client_for(sandbox, second).open_by_key("s1")  # project -2 still has its 3
    for _ in range(2):
        assert in_second.values_batch_get(["Sheet1!A1"])["valueRanges"]
    usage = requests.get(f"{sandbox.base_url}/_sandbox/quota", timeout=5).json()["read"]["projects"]
    assert usage == {"sheet-monitor-sandbox-1": 3, "sheet-monitor-sandbox-2": 3}


def test_a_hang_holds_only_its_own_request_until_the_client_times_out(sandbox, credentials, google):
    hung = client_for(sandbox, credentials[0], timeout=0.5).open_by_key("s1")
    healthy = client_for(sandbox, credentials[1]).open_by_key("s2")
    google.faults.add({"spreadsheet": "s1", "hang": True, "times": 1})
    outcome: dict = {}

    def read_hung() -> None:
        try:
            hung.values_batch_get(["Sheet1!A1"])
        except requests.exceptions.Timeout as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=read_hung)
    thread.start()
    served_meanwhile = [healthy.values_batch_get(["Sheet1!A1"]) for _ in range(5)]
    assert thread.is_alive()  # still held while the other client was served
    thread.join(timeout=5)
    assert isinstance(outcome.get("error"), requests.exceptions.ReadTimeout)
    assert len(served_meanwhile) == 5
    assert hung.values_batch_get(["Sheet1!A1"])["valueRanges"]  # hang was for one request only


def test_a_connection_reset_reaches_the_client_as_a_connection_error(sandbox, credentials, google):
    spreadsheet = client_for(sandbox, credentials[0]).open_by_key("s1")
    google.faults.add({"spreadsheet": "s1", "reset": True, "times": 1})
    with pytest.raises(requests.exceptions.ConnectionError):
        spreadsheet.values_batch_get(["Sheet1!A1"])
    assert spreadsheet.values_batch_get(["Sheet1!A1"])["valueRanges"]


def test_unknown_spreadsheets_and_bad_ranges_are_google_errors(sandbox, credentials, google):
    client = client_for(sandbox, credentials[0])
    with pytest.raises(gspread.exceptions.APIError) as caught:
        client.open_by_key("s1").values_batch_get(["NOPE!A5:F15"])
    assert caught.value.code == 400
    assert caught.value.error["message"] == "Unable to parse range: NOPE!A5:F15"
    assert caught.value.error["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize("method, path, body, code", [
    ("POST", "/v4/spreadsheets/s1/values:batchUpdate", b"{not json", 400),
    ("DELETE", "/v4/spreadsheets/s1", None, None),
    ("GET", "/v5/whatever", None, 404),
    ("GET", "/v4/spreadsheets/missing/values/A1", None, 404),
])
def test_bad_raw_input_gets_google_shaped_json(sandbox, google, method, path, body, code):
    token = google.auth.mint_token("raw@sheet-monitor-sandbox.iam.gserviceaccount.com")
    response = requests.request(method, f"{sandbox.base_url}{path}", data=body, timeout=5,
                                headers={"Authorization": f"Bearer {token}",
                                         "Content-Type": "application/json"})
    assert response.status_code >= 400 if code is None else response.status_code == code
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == response.status_code and error["message"] and error["status"]


def test_requests_without_a_token_get_googles_403_not_401(sandbox, google):
    response = requests.get(f"{sandbox.base_url}/v4/spreadsheets/s1", timeout=5)
    assert response.status_code == 403  # Google wants an API key then (test_sandbox_credentials.py)
    assert response.json()["error"]["status"] == "PERMISSION_DENIED"


def test_gspread_drives_the_data_endpoints_like_google(tmp_path):
    """gspread's own worksheet API, over the seam and google-auth's real token flow."""
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as handle:
        (path,) = handle.write_credentials(tmp_path, 1)
        client = build_gspread_client(path, endpoint=handle.base_url, timeout=5,
                                      scopes=DEFAULT_SCOPES)
        spreadsheet = client.create("Stock 12")
        assert len(spreadsheet.id) == 44
        sheet = spreadsheet.sheet1
        sheet.update([["SKU", "Qty"], ["A-1", 3], ["A-2", "=B2*2"]], "A1",
                     value_input_option="USER_ENTERED")
        assert sheet.get_all_records() == [{"SKU": "A-1", "Qty": 3}, {"SKU": "A-2", "Qty": 6}]
        log = spreadsheet.add_worksheet("Log 2024", rows=5, cols=3)
        log.update_acell("C5", "last")
        assert log.acell("C5").value == "last"
        log.update_title("Log")
        log.resize(rows=3)
        answer = spreadsheet.values_batch_get(["Sheet1!A:A", "Log!A1:C3"],
                                              params={"valueRenderOption": "FORMULA"})
        assert [r.get("values") for r in answer["valueRanges"]] == [
            [["SKU"], ["A-1"], ["A-2"]], None]
        assert [w.title for w in client.open_by_key(spreadsheet.id).worksheets()] == [
            "Sheet1", "Log"]
        spreadsheet.del_worksheet(log)
        assert [s.id for s in client.openall("Stock 12")] == [spreadsheet.id]
        client.del_spreadsheet(spreadsheet.id)
        assert client.list_spreadsheet_files() == []
