"""The fake Drive's folders, through real HTTP with ``requests``: ``parents``, ``'ID' in parents``
with mimeType filters, moves, paging, the shared-drive switches and what a caller may not see."""

from __future__ import annotations

FOLDER = "application/vnd.google-apps.folder"
SHEET = "application/vnd.google-apps.spreadsheet"


def _in(api, folder_id: str, mime: str = SHEET, **params) -> list[str]:
    q = f"'{folder_id}' in parents and mimeType = '{mime}' and trashed = false"
    body = api.drive("GET", params={"q": q, "fields": "nextPageToken,files(id,name)", **params}).json()
    return sorted(f["name"] for f in body["files"])


def test_files_created_in_a_folder_are_listed_by_it_alone(api, sandbox):
    folder = api.drive("POST", json={"name": "Stores", "mimeType": FOLDER}).json()
    assert folder["mimeType"] == FOLDER
    inside = api.drive("POST", json={"name": "Store 1", "mimeType": SHEET, "parents": [folder["id"]]})
    assert inside.status_code == 200
    api.drive("POST", json={"name": "Elsewhere", "mimeType": SHEET})
    sub = api.drive("POST", json={"name": "North", "mimeType": FOLDER, "parents": [folder["id"]]}).json()
    assert _in(api, folder["id"]) == ["Store 1"]
    assert _in(api, folder["id"], FOLDER) == ["North"]
    got = api.drive("GET", f"/{inside.json()['id']}", params={"fields": "parents"}).json()
    assert got == {"parents": [folder["id"]]}
    assert _in(api, sub["id"]) == []


def test_a_folder_that_is_not_there_cannot_hold_a_new_file(api):
    response = api.drive("POST", json={"name": "S", "mimeType": SHEET, "parents": ["nope"]})
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "File not found: nope."
    two = api.drive("POST", json={"name": "S", "mimeType": SHEET, "parents": ["root", "root2"]})
    assert two.status_code == 400 and "only have one parent" in two.json()["error"]["message"]


def test_moving_a_file_between_folders_is_a_change_in_the_feed(api, sandbox):
    a = api.drive("POST", json={"name": "A", "mimeType": FOLDER}).json()["id"]
    b = api.drive("POST", json={"name": "B", "mimeType": FOLDER}).json()["id"]
    sheet = api.drive("POST", json={"name": "S", "mimeType": SHEET, "parents": [a]}).json()["id"]
    changes_url = f"{api.base}/drive/v3/changes"
    start = api.session.get(f"{changes_url}/startPageToken", timeout=5).json()["startPageToken"]
    added_only = api.drive("PATCH", f"/{sheet}", params={"addParents": b}, json={})
    assert added_only.status_code == 400  # a second parent
    moved = api.drive("PATCH", f"/{sheet}", params={"addParents": b, "removeParents": a,
                                                     "fields": "parents"}, json={})
    assert moved.json() == {"parents": [b]}
    assert _in(api, a) == [] and _in(api, b) == ["S"]
    changes = api.session.get(changes_url, timeout=5, params={
        "pageToken": start, "fields": "changes(fileId,file(parents,mimeType,name))"}).json()
    assert changes["changes"] == [{"fileId": sheet, "file": {"parents": [b], "mimeType": SHEET, "name": "S"}}]


def test_a_folder_pages_its_files(api, sandbox):
    sandbox.store.put_control("f1", {"title": "F", "mimeType": FOLDER})
    for n in range(5):
        sandbox.store.put_control(f"s{n}", {"title": f"S{n}", "tabs": {"A": []}, "parents": ["f1"]})
    seen, token = [], None
    while True:
        params = {"q": "'f1' in parents", "pageSize": "2", "fields": "nextPageToken,files(id)"}
        page = api.drive("GET", params={**params, **({"pageToken": token} if token else {})}).json()
        seen += [f["id"] for f in page["files"]]
        assert len(page["files"]) <= 2
        token = page.get("nextPageToken")
        if not token:
            break
    assert sorted(seen) == [f"s{n}" for n in range(5)]
    assert sandbox.store.get_control("f1")["mimeType"] == FOLDER
    assert sandbox.store.get_control("s0")["parents"] == ["f1"]


def test_a_file_the_caller_lost_access_to_is_not_listed(api, sandbox):
    sandbox.store.put_control("f1", {"title": "F", "mimeType": FOLDER})
    for n in range(2):
        sandbox.store.put_control(f"s{n}", {"title": f"S{n}", "tabs": {"A": []}, "parents": ["f1"]})
    sandbox.faults.add({"spreadsheet": "s1", "statuses": [403], "repeat": True})
    assert _in(api, "f1") == ["S0"]
    sandbox.faults.clear("s1")
    assert _in(api, "f1") == ["S0", "S1"]


def test_trashed_files_are_left_out_by_trashed_false(api, sandbox):
    sandbox.store.put_control("f1", {"title": "F", "mimeType": FOLDER})
    sandbox.store.put_control("s0", {"title": "S0", "tabs": {"A": []}, "parents": ["f1"], "trashed": True})
    assert _in(api, "f1") == []


def test_shared_drive_switches_are_checked_as_drive_checks_them(api):
    assert _in(api, "root", supportsAllDrives="true", includeItemsFromAllDrives="true") == ["Store 7"]
    refused = api.drive("GET", params={"corpora": "allDrives", "supportsAllDrives": "true"})
    assert refused.status_code == 403
    assert refused.json()["error"]["message"].startswith(
        "The includeItemsFromAllDrives parameter must be set to true when driveId is specified")
    unknown = api.drive("GET", params={"corpora": "drive", "driveId": "0AB", "supportsAllDrives": "true",
                                       "includeItemsFromAllDrives": "true"})
    assert unknown.status_code == 404 and unknown.json()["error"]["message"] == "Shared drive not found: 0AB"
    assert api.drive("GET", params={"supportsAllDrives": "yes"}).status_code == 400
    assert api.drive("GET", params={"corpora": "everything"}).status_code == 400


def test_a_folder_holds_no_tabs(sandbox):
    import pytest

    with pytest.raises(ValueError, match="holds no tabs"):
        sandbox.store.put_control("f1", {"title": "F", "mimeType": FOLDER, "tabs": {"A": []}})
    with pytest.raises(ValueError, match="parents"):
        sandbox.store.put_control("s", {"title": "S", "tabs": {"A": []}, "parents": "f1"})
