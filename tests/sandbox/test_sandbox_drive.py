"""The fake Drive v3 files endpoints, through real HTTP with ``requests``."""

from __future__ import annotations

from sheets_api_fixtures import SPREADSHEET_ID


def test_drive_create_get_list_and_delete(api, sandbox):
    created = api.drive("POST", json={"name": "New one",
                                      "mimeType": "application/vnd.google-apps.spreadsheet"})
    body = created.json()
    assert set(body) == {"kind", "id", "name", "mimeType"}
    assert len(body["id"]) == 44 and body["id"].startswith("1")
    meta = api.sheets("GET", body["id"]).json()
    assert [s["properties"]["sheetId"] for s in meta["sheets"]] == [0]
    listed = api.drive("GET", params={"q": "name = 'New one' and trashed = false",
                                      "fields": "files(id,name)"}).json()
    assert listed == {"files": [{"id": body["id"], "name": "New one"}]}
    deleted = api.drive("DELETE", f"/{body['id']}")
    assert (deleted.status_code, deleted.content) == (204, b"")
    missing = api.drive("GET", f"/{body['id']}")
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == f"File not found: {body['id']}."


def test_drive_list_pages_through_every_file(api, sandbox):
    for n in range(5):
        sandbox.store.put_control(f"sheet-{n}", {"title": f"S{n}", "tabs": {"A": []}})
    seen, token = [], None
    while True:
        params = {"pageSize": "2", "q": "mimeType = 'application/vnd.google-apps.spreadsheet'"}
        if token:
            params["pageToken"] = token
        page = api.drive("GET", params=params).json()
        seen += [f["id"] for f in page["files"]]
        token = page.get("nextPageToken")
        if not token:
            break
    assert sorted(seen) == sorted([SPREADSHEET_ID] + [f"sheet-{n}" for n in range(5)])


def test_drive_query_reads_quoted_names_holding_and(api, sandbox):
    sandbox.store.put_control("s-and", {"title": "Sales and Stock", "tabs": {"A": []}})
    q = ('mimeType="application/vnd.google-apps.spreadsheet" and name = "Sales and Stock" '
         "and modifiedTime > '2026-01-01T00:00:00'")
    listed = api.drive("GET", params={"q": q, "fields": "files(id)"}).json()
    assert listed == {"files": [{"id": "s-and"}]}


def test_drive_rejects_queries_it_cannot_read(api):
    response = api.drive("GET", params={"q": "starred = true"})
    assert response.status_code == 400
    assert response.json()["error"]["errors"][0]["location"] == "q"


def test_drive_answers_a_file_the_caller_may_not_read_as_not_found(api, sandbox):
    # Drive's "Resolve errors" page: 404 "File not found: {fileId}" when "the user does not have
    # read access to a file, or the file does not exist"; the Sheets API says 403 for the same file.
    sandbox.faults.add({"spreadsheet": SPREADSHEET_ID, "statuses": [403], "repeat": True})
    drive = api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "modifiedTime"})
    assert drive.status_code == 404
    error = drive.json()["error"]
    assert error["message"] == f"File not found: {SPREADSHEET_ID}."
    assert error["errors"] == [{"message": f"File not found: {SPREADSHEET_ID}.", "domain": "global",
                                "reason": "notFound", "location": "fileId",
                                "locationType": "parameter"}]
    sheets = api.values("Stock!A1")
    assert (sheets.status_code, sheets.json()["error"]["status"]) == (403, "PERMISSION_DENIED")


XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
# The Sheets API's answer for an .xlsx kept in Drive, as quoted from the live API in
# github.com/googleworkspace/php-samples/issues/65 (reason also in cpvalente/ontime pull 1487).
NOT_SUPPORTED = {"error": {
    "code": 400, "message": "This operation is not supported for this document",
    "errors": [{"message": "This operation is not supported for this document", "domain": "global",
                "reason": "failedPrecondition"}],
    "status": "FAILED_PRECONDITION"}}


def test_an_excel_file_in_drive_is_a_drive_file_the_sheets_api_refuses(api, sandbox):
    sandbox.store.put_control("xlsx-1", {"title": "Stock.xlsx", "mimeType": XLSX,
                                         "tabs": {"Stock": [["SKU"]]}})
    for response in (api.values("Stock!A1", spreadsheet="xlsx-1"), api.sheets("GET", "xlsx-1"),
                     api.sheets("GET", "xlsx-1/values:batchGet", params={"ranges": "Stock!A1"})):
        assert (response.status_code, response.json()) == (400, NOT_SUPPORTED)
    drive = api.drive("GET", "/xlsx-1", params={"fields": "name,mimeType,modifiedTime"}).json()
    assert (drive["name"], drive["mimeType"]) == ("Stock.xlsx", XLSX) and drive["modifiedTime"]
    sheets_only = api.drive("GET", params={
        "q": "mimeType = 'application/vnd.google-apps.spreadsheet'", "fields": "files(id)"}).json()
    assert {"id": "xlsx-1"} not in sheets_only["files"]
    assert sandbox.store.get_control("xlsx-1")["mimeType"] == XLSX


def test_a_trashed_spreadsheet_says_so_on_drive_and_still_answers_the_sheets_api(api, sandbox):
    before = api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "modifiedTime"}).json()
    start = api.session.get(f"{api.base}/drive/v3/changes/startPageToken", timeout=5).json()
    trashed = api.drive("PATCH", f"/{SPREADSHEET_ID}", json={"trashed": True})
    assert trashed.status_code == 200
    assert trashed.json() == {"kind": "drive#file", "id": SPREADSHEET_ID, "name": "Store 7",
                              "mimeType": "application/vnd.google-apps.spreadsheet"}
    file = api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "trashed,modifiedTime"}).json()
    assert file == {"trashed": True, "modifiedTime": before["modifiedTime"]}  # contents unchanged
    assert api.values("Stock!A1").json()["values"] == [["SKU"]]  # trash is not deletion
    feed = api.session.get(f"{api.base}/drive/v3/changes", timeout=5, params={
        "pageToken": start["startPageToken"], "fields": "changes(fileId,removed,file(trashed))"})
    assert feed.json() == {"changes": [{"fileId": SPREADSHEET_ID, "removed": False,
                                        "file": {"trashed": True}}]}
    listed = api.drive("GET", params={"q": "trashed = false", "fields": "files(id)"}).json()
    assert {"id": SPREADSHEET_ID} not in listed["files"]
    api.drive("PATCH", f"/{SPREADSHEET_ID}", json={"trashed": False})
    assert api.drive("GET", f"/{SPREADSHEET_ID}", params={"fields": "trashed"}).json() == {
        "trashed": False}


def test_files_update_refuses_what_the_sandbox_cannot_change(api, sandbox):
    response = api.drive("PATCH", f"/{SPREADSHEET_ID}", json={"starred": True})
    assert response.status_code == 400 and response.json()["error"]["errors"][0]["location"] == "starred"
    assert api.drive("PATCH", "/nope", json={"trashed": True}).status_code == 404
