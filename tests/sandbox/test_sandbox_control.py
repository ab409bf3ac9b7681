"""The control API under /_sandbox/ and the Python handle, over real HTTP."""

from __future__ import annotations

import threading

import pytest
import requests

from sheet_sandbox import running_sandbox

SPREADSHEET = {"title": "Stock", "tabs": {"Sheet1": [["item", "qty"], ["apple", 3]]}}


@pytest.fixture
def url(control_sandbox):
    control_sandbox.google.reset()
    control_sandbox.google.quota.set_limits(read_per_user=60, read_per_project=300)
    return control_sandbox.base_url


@pytest.fixture
def token(control_sandbox):
    return control_sandbox.google.auth.mint_token("tester@sheet-monitor-sandbox.iam.gserviceaccount.com")


def google_error(response: requests.Response, code: int) -> dict:
    """The error of a Google-shaped error response (asserting the shape)."""
    assert response.status_code == code
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) >= {"code", "message", "status"} and error["code"] == code
    return error


def read(url: str, token: str, spreadsheet: str = "s1") -> requests.Response:
    return requests.get(f"{url}/v4/spreadsheets/{spreadsheet}", timeout=5,
                        headers={"Authorization": f"Bearer {token}"})


def test_spreadsheets_are_seeded_inspected_listed_and_deleted(url):
    put = requests.put(f"{url}/_sandbox/spreadsheets/s1", json=SPREADSHEET, timeout=5)
    assert put.status_code == 200
    got = requests.get(f"{url}/_sandbox/spreadsheets/s1", timeout=5).json()
    assert got["title"] == "Stock" and got["tabs"]["Sheet1"][1] == ["apple", 3]
    assert requests.get(f"{url}/_sandbox/spreadsheets", timeout=5).json() == {"spreadsheets": [
        {"id": "s1", "title": "Stock", "stored": True, "breakage": None, "faults": 0}]}
    assert requests.delete(f"{url}/_sandbox/spreadsheets/s1", timeout=5).status_code == 200
    google_error(requests.get(f"{url}/_sandbox/spreadsheets/s1", timeout=5), 404)
    google_error(requests.delete(f"{url}/_sandbox/spreadsheets/s1", timeout=5), 404)


@pytest.mark.parametrize("body", [b"{not json", b'"a string"', b"[1, 2]"])
def test_a_bad_spreadsheet_body_is_a_google_400(url, body):
    error = google_error(requests.put(f"{url}/_sandbox/spreadsheets/s1", data=body, timeout=5), 400)
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"]


def test_faults_added_at_runtime_reach_clients_in_order(url, token):
    requests.put(f"{url}/_sandbox/spreadsheets/s1", json=SPREADSHEET, timeout=5)
    added = requests.post(f"{url}/_sandbox/faults", json={"spreadsheet": "s1", "statuses": [503, 500]},
                          timeout=5)
    assert added.status_code == 200 and added.json()["added"][0]["statuses"] == [503, 500]
    assert [read(url, token).status_code for _ in range(3)] == [503, 500, 200]


def test_a_list_of_faults_is_all_or_nothing(url):
    bad = [{"spreadsheet": "s1", "statuses": [503]}, {"spreadsheet": "s2", "statuses": "oops"}]
    error = google_error(requests.post(f"{url}/_sandbox/faults", json=bad, timeout=5), 400)
    assert error["message"].startswith("fault 1:") and '"statuses"' in error["message"]
    assert requests.get(f"{url}/_sandbox/faults", timeout=5).json() == {"faults": []}


def test_malformed_fault_json_is_a_google_400(url):
    error = google_error(requests.post(f"{url}/_sandbox/faults", data=b"{", timeout=5), 400)
    assert error["message"].startswith("Invalid JSON payload received.")


def test_faults_are_cleared_per_spreadsheet_or_all(url, token):
    requests.put(f"{url}/_sandbox/spreadsheets/s1", json=SPREADSHEET, timeout=5)
    requests.put(f"{url}/_sandbox/spreadsheets/s2", json=SPREADSHEET, timeout=5)
    requests.post(f"{url}/_sandbox/faults", timeout=5, json=[
        {"spreadsheet": "s1", "statuses": [403], "repeat": True},
        {"spreadsheet": "s2", "statuses": [403], "repeat": True},
    ])
    requests.delete(f"{url}/_sandbox/faults", params={"spreadsheet": "s1"}, timeout=5)
    assert read(url, token, "s1").status_code == 200
    assert read(url, token, "s2").status_code == 403
    requests.delete(f"{url}/_sandbox/faults", timeout=5)
    assert read(url, token, "s2").status_code == 200


def test_stats_count_requests_by_status_and_user(url, token):
    requests.put(f"{url}/_sandbox/spreadsheets/s1", json=SPREADSHEET, timeout=5)
    read(url, token)
    read(url, token, "missing")
    requests.get(f"{url}/v4/spreadsheets/s1", timeout=5)  # no token
    stats = requests.get(f"{url}/_sandbox/stats", timeout=5).json()
    assert stats["total"] == 3
    assert stats["by_status"] == {"200": 1, "403": 1, "404": 1}
    assert stats["by_user"] == {"tester@sheet-monitor-sandbox.iam.gserviceaccount.com": 2, "anonymous": 1}
    assert stats["quota_exceeded"] == 0
    assert stats["quota"]["read"]["projects"] == {"sheet-monitor-sandbox": 2}
    # Per spreadsheet, whatever the answer: what tells a test whether a spreadsheet was read.
    assert {sid: sum(counts.values()) for sid, counts in stats["by_spreadsheet"].items()} == {
        "s1": 2, "missing": 1}


def test_stats_say_when_the_first_request_came_and_clear_alone(url, token, control_sandbox):
    requests.put(f"{url}/_sandbox/spreadsheets/s1", json=SPREADSHEET, timeout=5)
    assert requests.get(f"{url}/_sandbox/stats", timeout=5).json()["first_request_at"] is None
    first = control_sandbox.clock.time()
    read(url, token)
    requests.post(f"{url}/_sandbox/clock", json={"advance_seconds": 30}, timeout=5)
    read(url, token)  # a later request does not move it
    stats = requests.get(f"{url}/_sandbox/stats", timeout=5).json()
    assert stats["first_request_at"] == first and stats["total"] == 2
    answer = requests.delete(f"{url}/_sandbox/stats", timeout=5)
    assert answer.status_code == 200 and answer.json() == {"cleared": "stats"}
    cleared = requests.get(f"{url}/_sandbox/stats", timeout=5).json()
    assert (cleared["total"], cleared["by_spreadsheet"], cleared["first_request_at"]) == (0, {}, None)
    assert read(url, token).status_code == 200  # the data stays
    assert requests.get(f"{url}/_sandbox/stats", timeout=5).json()["first_request_at"] == first + 30


def test_quota_limits_change_at_runtime(url, token):
    requests.put(f"{url}/_sandbox/spreadsheets/s1", json=SPREADSHEET, timeout=5)
    answer = requests.put(f"{url}/_sandbox/quota", json={"read_per_user": 2}, timeout=5)
    assert answer.status_code == 200 and answer.json()["limits"]["read_per_user"] == 2
    assert [read(url, token).status_code for _ in range(3)] == [200, 200, 429]
    assert requests.get(f"{url}/_sandbox/stats", timeout=5).json()["quota_exceeded"] == 1
    error = google_error(requests.put(f"{url}/_sandbox/quota", json={"reads": 1}, timeout=5), 400)
    assert "'reads'" in error["message"]
    google_error(requests.put(f"{url}/_sandbox/quota", json={"read_per_user": -1}, timeout=5), 400)


def test_the_manual_clock_advances_over_http_and_refills_quotas(url, token, control_sandbox):
    requests.put(f"{url}/_sandbox/spreadsheets/s1", json=SPREADSHEET, timeout=5)
    requests.put(f"{url}/_sandbox/quota", json={"read_per_user": 1}, timeout=5)
    assert [read(url, token).status_code for _ in range(2)] == [200, 429]
    before = control_sandbox.clock.time()
    answer = requests.post(f"{url}/_sandbox/clock", json={"advance_seconds": 60}, timeout=5)
    assert answer.status_code == 200 and answer.json()["manual"] is True
    assert control_sandbox.clock.time() == before + 60
    assert read(url, token).status_code == 200
    google_error(requests.post(f"{url}/_sandbox/clock", json={"advance_seconds": "1"}, timeout=5), 400)


def test_reset_forgets_data_faults_and_stats(url, token):
    requests.put(f"{url}/_sandbox/spreadsheets/s1", json=SPREADSHEET, timeout=5)
    requests.post(f"{url}/_sandbox/faults", json={"spreadsheet": "*", "statuses": [500]}, timeout=5)
    read(url, token)
    assert requests.post(f"{url}/_sandbox/reset", timeout=5).status_code == 200
    assert requests.get(f"{url}/_sandbox/spreadsheets", timeout=5).json() == {"spreadsheets": []}
    assert requests.get(f"{url}/_sandbox/faults", timeout=5).json() == {"faults": []}
    assert requests.get(f"{url}/_sandbox/stats", timeout=5).json()["total"] == 0
    assert read(url, token).status_code == 404  # the token still works, the data is gone


@pytest.mark.parametrize("method, path, code", [
    ("GET", "/_sandbox/nothing", 404),
    ("GET", "/_sandbox/", 404),
    ("GET", "/_sandbox/reset", 405),
    ("POST", "/_sandbox/stats", 405),
    ("PATCH", "/_sandbox/spreadsheets/s1", 405),
])
def test_unknown_paths_and_wrong_methods_get_google_errors(url, method, path, code):
    google_error(requests.request(method, f"{url}{path}", timeout=5), code)


def test_the_real_clock_cannot_be_advanced():
    with running_sandbox(telegram=False, latency="off") as handle:
        answer = requests.post(f"{handle.base_url}/_sandbox/clock", json={"advance_seconds": 5}, timeout=5)
        error = google_error(answer, 400)
        assert "manual clock" in error["message"]


def test_the_handle_starts_both_fakes_and_leaves_no_thread_behind(tmp_path):
    before = set(threading.enumerate())
    with running_sandbox(latency="off") as handle:
        assert requests.get(f"{handle.base_url}/_sandbox/stats", timeout=5).status_code == 200
        assert handle.telegram_url and handle.telegram_url != handle.base_url
        assert requests.post(f"{handle.telegram_url}/botX/getMe", timeout=5).status_code in (401, 404)
        paths = handle.write_credentials(tmp_path, 2)
        assert [p.name for p in paths] == ["sa-1.json", "sa-2.json"]
        assert handle.token_uri in paths[0].read_text()
    leftover = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert leftover == []
