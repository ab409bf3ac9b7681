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
