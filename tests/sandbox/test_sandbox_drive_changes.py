"""Drive v3's change feed (changes.getStartPageToken, changes.list) and Drive's own quota, through
real HTTP with ``requests``; the change log's paging as a pure unit.

The feed delay is off here: these tests are about the feed's answers and paging, each edit recorded
as it is made. When Google's delay lets an edit in is test_sandbox_feed_delay.py's.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sheets_api_fixtures import SPREADSHEET_ID

from sheet_sandbox.changes import ChangeLog

SHEET = {"title": "S", "tabs": {"A": [["x", 1]]}}


@pytest.fixture(autouse=True)
def immediate_feed(sandbox):
    sandbox.feed_delay.configure(model="off")


def start_token(api, **params) -> str:
    response = api.session.get(f"{api.base}/drive/v3/changes/startPageToken", params=params,
                               timeout=5)
    assert response.status_code == 200, response.text
    return response.json()["startPageToken"]


def changes(api, **params):
    return api.session.get(f"{api.base}/drive/v3/changes", params=params, timeout=5)


def control(api, method: str, tail: str, **kwargs):
    return api.session.request(method, f"{api.base}/_sandbox/{tail}", timeout=5, **kwargs)


def write_cell(api, spreadsheet_id: str, value) -> None:
    response = api.sheets("PUT", f"{spreadsheet_id}/values/A1",
                          params={"valueInputOption": "RAW"}, json={"values": [[value]]})
    assert response.status_code == 200, response.text


def drain(api, token: str, **params) -> tuple[list[dict], str]:
    """Every change from ``token`` on, page by page, and the newStartPageToken at the end."""
    seen = []
    while True:
        page = changes(api, pageToken=token, **params).json()
        seen += page["changes"]
        if "newStartPageToken" in page:
            assert "nextPageToken" not in page
            return seen, page["newStartPageToken"]
        token = page["nextPageToken"]


# -- getStartPageToken ----------------------------------------------------------------------


def test_start_page_token_is_digits_naming_the_next_change(api, sandbox):
    response = api.session.get(f"{api.base}/drive/v3/changes/startPageToken", timeout=5)
    body = response.json()
    assert set(body) == {"kind", "startPageToken"} and body["kind"] == "drive#startPageToken"
    assert body["startPageToken"].isdigit()
    sandbox.store.put_control("other", SHEET)
    assert int(start_token(api)) == int(body["startPageToken"]) + 1
    assert start_token(api, supportsAllDrives="true") == start_token(api)


def test_start_page_token_for_a_shared_drive_is_not_found(api):
    response = api.session.get(f"{api.base}/drive/v3/changes/startPageToken",
                               params={"driveId": "0AbcShared"}, timeout=5)
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["message"] == "Shared drive not found: 0AbcShared"
    assert error["errors"][0] == {"message": "Shared drive not found: 0AbcShared",
                                  "domain": "global", "reason": "notFound",
                                  "location": "driveId", "locationType": "parameter"}


def test_a_boolean_parameter_that_is_not_a_boolean_is_invalid(api):
    response = api.session.get(f"{api.base}/drive/v3/changes/startPageToken",
                               params={"supportsAllDrives": "yes"}, timeout=5)
    assert response.status_code == 400
    assert response.json()["error"]["errors"][0]["location"] == "supportsAllDrives"


# -- changes.list ------------------------------------------------------------------------------


def test_no_changes_since_the_token_answers_an_empty_last_page(api):
    token = start_token(api)
    assert changes(api, pageToken=token).json() == {
        "kind": "drive#changeList", "changes": [], "newStartPageToken": token}


def test_a_sheets_write_appears_as_one_change_in_the_default_shape(api, sandbox, google_clock):
    token = start_token(api)
    google_clock.advance(5)
    write_cell(api, SPREADSHEET_ID, "new")
    body = changes(api, pageToken=token).json()
    assert body == {
        "kind": "drive#changeList",
        "newStartPageToken": str(int(token) + 1),
        "changes": [{
            "kind": "drive#change", "changeType": "file", "time": "2026-01-05T03:00:05.000Z",
            "removed": False, "fileId": SPREADSHEET_ID,
            "file": {"kind": "drive#file", "id": SPREADSHEET_ID, "name": "Store 7",
                     "mimeType": "application/vnd.google-apps.spreadsheet"},
        }],
    }


def test_fields_select_inside_changes_and_their_files(api):
    token = start_token(api)
    write_cell(api, SPREADSHEET_ID, "new")
    body = changes(api, pageToken=token,
                   fields="newStartPageToken,changes(fileId,file(modifiedTime))").json()
    assert body == {"newStartPageToken": str(int(token) + 1), "changes": [
        {"fileId": SPREADSHEET_ID, "file": {"modifiedTime": "2026-01-05T03:00:00.000Z"}}]}


def test_two_edits_of_one_file_collapse_into_its_latest_change(api, sandbox, google_clock):
    sandbox.store.put_control("other", SHEET)
    token = start_token(api)
    write_cell(api, SPREADSHEET_ID, 1)
    write_cell(api, "other", 2)
    google_clock.advance(30)
    write_cell(api, SPREADSHEET_ID, 3)
    seen, _ = drain(api, token)
    assert [(c["fileId"], c["time"]) for c in seen] == [
        ("other", "2026-01-05T03:00:00.000Z"), (SPREADSHEET_ID, "2026-01-05T03:00:30.000Z")]


def test_pages_carry_next_tokens_until_the_last_which_carries_the_new_start(api, sandbox):
    token = start_token(api)
    for n in range(5):
        sandbox.store.put_control(f"s{n}", SHEET)
    first = changes(api, pageToken=token, pageSize=2).json()
    assert [c["fileId"] for c in first["changes"]] == ["s0", "s1"]
    assert "newStartPageToken" not in first and first["nextPageToken"].isdigit()
    seen, new_start = drain(api, token, pageSize=2)
    assert [c["fileId"] for c in seen] == [f"s{n}" for n in range(5)]
    assert new_start == start_token(api)
    assert changes(api, pageToken=new_start).json()["changes"] == []


def test_edits_made_while_paging_are_seen_once_each_at_their_latest(api, sandbox):
    for n in range(4):
        sandbox.store.put_control(f"s{n}", SHEET)
    token = str(int(start_token(api)) - 4)
    first = changes(api, pageToken=token, pageSize=2).json()
    assert [c["fileId"] for c in first["changes"]] == ["s0", "s1"]
    write_cell(api, "s0", "again")  # already seen: it comes back, changed again
    write_cell(api, "s2", "moved")  # not seen yet: it moves to the end, still once
    rest, _ = drain(api, first["nextPageToken"], pageSize=2)
    assert [c["fileId"] for c in rest] == ["s3", "s0", "s2"]


def test_a_token_from_before_a_delete_reports_the_file_removed_without_it(api, sandbox):
    token = start_token(api)
    assert api.drive("DELETE", f"/{SPREADSHEET_ID}").status_code == 204
    body = changes(api, pageToken=token).json()
    assert body["changes"] == [{"kind": "drive#change", "changeType": "file",
                                "time": "2026-01-05T03:00:00.000Z", "removed": True,
                                "fileId": SPREADSHEET_ID}]
    assert changes(api, pageToken=token, includeRemoved="false").json()["changes"] == []


def test_an_edit_then_a_delete_is_one_removed_change(api, sandbox):
    token = start_token(api)
    write_cell(api, SPREADSHEET_ID, "x")
    control(api, "DELETE", f"spreadsheets/{SPREADSHEET_ID}")
    seen, _ = drain(api, token)
    assert [(c["fileId"], c["removed"], "file" in c) for c in seen] == [
        (SPREADSHEET_ID, True, False)]


def test_losing_access_removes_the_file_until_the_fault_is_cleared(api, sandbox):
    token = start_token(api)
    fault = {"spreadsheet": SPREADSHEET_ID, "statuses": [403], "repeat": True}
    assert control(api, "POST", "faults", json=fault).status_code == 200
    sandbox.store.put_control(SPREADSHEET_ID, SHEET)  # edited by its owner: not in our view
    seen, after_removal = drain(api, token)
    assert [(c["fileId"], c["removed"]) for c in seen] == [(SPREADSHEET_ID, True)]
    control(api, "DELETE", "faults", params={"spreadsheet": SPREADSHEET_ID})
    back, _ = drain(api, after_removal)
    assert [(c["fileId"], c["removed"], c["file"]["name"]) for c in back] == [
        (SPREADSHEET_ID, False, "S")]


def test_a_passing_403_fault_removes_nothing(api, sandbox):
    token = start_token(api)
    control(api, "POST", "faults", json={"spreadsheet": SPREADSHEET_ID, "statuses": [403]})
    assert changes(api, pageToken=token).json()["changes"] == []


def test_values_changed_without_a_write_make_no_change(api, sandbox):
    before = api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "modifiedTime"}).json()
    token = start_token(api)
    response = control(api, "PUT", f"spreadsheets/{SPREADSHEET_ID}", params={"touch": "false"},
                       json={"title": "Store 7", "tabs": {"Stock": [["recomputed"]]}})
    assert response.status_code == 200, response.text
    assert api.values("Stock!A1").json()["values"] == [["recomputed"]]
    after = api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "modifiedTime"}).json()
    assert after == before
    assert changes(api, pageToken=token).json()["changes"] == []
    assert start_token(api) == token


@pytest.mark.parametrize(("target", "params", "body", "status", "words"), [
    ("missing", {"touch": "false"}, SHEET, 404, "touch=false changes an existing one"),
    (SPREADSHEET_ID, {"touch": "maybe"}, SHEET, 400, "touch must be true or false"),
    (SPREADSHEET_ID, {"touch": "false"}, {**SHEET, "modifiedTime": "2026-01-01T00:00:00Z"}, 400,
     "leave out 'modifiedTime'"),
])
def test_touch_false_is_refused_where_it_cannot_apply(api, target, params, body, status, words):
    response = control(api, "PUT", f"spreadsheets/{target}", params=params, json=body)
    assert response.status_code == status
    assert words in response.json()["error"]["message"]


def test_drive_creations_appear_as_changes(api):
    token = start_token(api)
    created = api.drive("POST", json={"name": "New",
                                      "mimeType": "application/vnd.google-apps.spreadsheet"}).json()
    assert [c["fileId"] for c in changes(api, pageToken=token).json()["changes"]] == [created["id"]]


def test_switches_without_effect_in_the_sandbox_change_nothing(api):
    token = start_token(api)
    write_cell(api, SPREADSHEET_ID, "x")
    plain = changes(api, pageToken=token).json()
    for params in ({"restrictToMyDrive": "true"}, {"includeItemsFromAllDrives": "true",
                                                   "supportsAllDrives": "true"},
                   {"spaces": "drive,appDataFolder"}):
        assert changes(api, pageToken=token, **params).json() == plain


def test_spaces_without_drive_hold_no_changes(api):
    token = start_token(api)
    write_cell(api, SPREADSHEET_ID, "x")
    assert changes(api, pageToken=token, spaces="appDataFolder").json() == {
        "kind": "drive#changeList", "changes": [], "newStartPageToken": start_token(api)}


def test_a_missing_page_token_is_googles_required_parameter_error(api):
    response = changes(api)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "Required parameter: pageToken"
    assert response.json()["error"]["errors"] == [{
        "message": "Required parameter: pageToken", "domain": "global", "reason": "required",
        "location": "pageToken", "locationType": "parameter"}]


@pytest.mark.parametrize("token", ["abc", "0", "-1", "99999999", "1.5", "１"])
def test_a_malformed_or_unknown_page_token_is_an_invalid_value(api, token):
    response = changes(api, pageToken=token)
    assert response.status_code == 400
    assert response.json()["error"]["errors"][0] == {
        "message": "Invalid Value", "domain": "global", "reason": "invalid",
        "location": "pageToken", "locationType": "parameter"}


@pytest.mark.parametrize(("size", "message"), [
    ("0", "Invalid value '0'. Values must be within the range: [1, 1000]"),
    ("1001", "Invalid value '1001'. Values must be within the range: [1, 1000]"),
    ("ten", "Invalid Value"),
])
def test_a_page_size_out_of_range_is_refused(api, size, message):
    response = changes(api, pageToken=start_token(api), pageSize=size)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == message
    assert response.json()["error"]["errors"][0]["location"] == "pageSize"


def test_page_size_bounds_are_accepted(api):
    for size in ("1", "1000"):
        assert changes(api, pageToken=start_token(api), pageSize=size).status_code == 200


@pytest.mark.parametrize(("params", "location"), [
    ({"spaces": "photos,bogus"}, "spaces"), ({"includeRemoved": "1"}, "includeRemoved"),
    ({"fields": "changes(fileId"}, "fields")])
def test_other_bad_parameters_are_invalid_values(api, params, location):
    response = changes(api, pageToken=start_token(api), **params)
    assert response.status_code == 400
    assert response.json()["error"]["errors"][0]["location"] == location


def test_unknown_changes_paths_are_not_found(api):
    response = api.session.get(f"{api.base}/drive/v3/changes/watchlist", timeout=5)
    assert response.status_code == 404


# -- Drive's quota -----------------------------------------------------------------------------


def test_drive_per_user_quota_answers_403_user_rate_limit_exceeded(api, google_clock):
    assert control(api, "PUT", "drive_quota", json={"per_user": 2}).status_code == 200
    assert [changes(api, pageToken="1").status_code for _ in range(2)] == [200, 200]
    refused = changes(api, pageToken="1")
    assert refused.status_code == 403
    assert refused.json() == {"error": {"errors": [{
        "domain": "usageLimits", "reason": "userRateLimitExceeded",
        "message": "User Rate Limit Exceeded"}], "code": 403, "message": "User Rate Limit Exceeded"}}
    assert "Retry-After" not in refused.headers
    assert api.values("Stock!A1").status_code == 200  # Sheets' quota is another one
    google_clock.advance(59.9)
    assert changes(api, pageToken="1").status_code == 403
    google_clock.advance(0.1)
    assert changes(api, pageToken="1").status_code == 200


def test_drive_per_project_quota_answers_429_rate_limit_exceeded(api, sandbox):
    sandbox.drive_quota.set_limits(per_project=1)
    assert api.drive("GET").status_code == 200
    refused = api.drive("GET")
    assert refused.status_code == 429
    assert refused.json() == {"error": {"errors": [{
        "domain": "usageLimits", "reason": "rateLimitExceeded", "message": "Rate Limit Exceeded"}],
        "code": 429, "message": "Rate Limit Exceeded"}}
    usage = control(api, "GET", "drive_quota").json()
    assert usage["limits"] == {"per_user": 12_000, "per_project": 1}
    assert usage["projects"] == {"sheet-monitor-sandbox": 1}


@pytest.mark.parametrize("body", [{}, {"per_minute": 5}, {"per_user": 0}, {"per_user": True}])
def test_bad_drive_quota_settings_are_refused_naming_the_problem(api, body):
    response = control(api, "PUT", "drive_quota", json=body)
    assert response.status_code == 400
    assert control(api, "GET", "drive_quota").json()["limits"]["per_user"] == 12_000


def test_reset_forgets_changes_but_old_tokens_stay_valid(api, sandbox):
    token = start_token(api)
    write_cell(api, SPREADSHEET_ID, "x")
    control(api, "POST", "reset")
    assert changes(api, pageToken=token).json()["changes"] == []
    assert int(start_token(api)) > int(token)


# -- the change log as a unit ------------------------------------------------------------------

T0 = datetime(2026, 1, 5, tzinfo=UTC)


def test_change_log_orders_files_by_their_latest_change():
    log = ChangeLog()
    for file_id in ("a", "b", "a", "c"):
        log.record(file_id, T0)
    page = log.page(1, 10)
    assert [(c.file_id, c.position) for c in page.changes] == [("b", 2), ("a", 3), ("c", 4)]
    assert (page.next_position, page.new_start) == (None, 5)


def test_change_log_pages_resume_after_the_last_change_given():
    log = ChangeLog()
    for file_id in ("a", "b", "c"):
        log.record(file_id, T0)
    first = log.page(1, 2)
    assert [c.file_id for c in first.changes] == ["a", "b"] and first.next_position == 3
    assert [c.file_id for c in log.page(3, 2).changes] == ["c"]


def test_change_log_positions_out_of_range_are_invalid():
    log = ChangeLog()
    log.record("a", T0)
    assert [log.valid(p) for p in (0, 1, 2, 3)] == [False, True, True, False]


def test_a_file_out_of_view_records_nothing_until_access_returns():
    log = ChangeLog()
    log.remove_access("a", T0)
    log.record("a", T0)
    log.remove_access("a", T0)
    assert [(c.file_id, c.removed) for c in log.page(1, 10).changes] == [("a", True)]
    log.restore_access("a", T0, exists=False)
    assert log.next_position() == 2
    log.record("a", T0)
    assert [(c.file_id, c.removed) for c in log.page(2, 10).changes] == [("a", False)]
