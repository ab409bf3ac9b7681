"""Drive's change feed through real gspread clients against the sandbox (monitor.google.drive_feed).

What changed after a saved position, over as many pages as it takes; files that left the
credential's view are told apart; a position Drive does not know is a classified error.
"""

from __future__ import annotations

import pytest
from sandbox_fixtures import drive_caught_up

from monitor.core.errors import ErrorClass, SheetReadError
from monitor.google.drive_feed import DriveChangeFeed
from monitor.google.reader import GspreadReader


def stock(quantity: int) -> dict:
    return {"title": "Store", "tabs": {"Stock": [["SKU", "Qty"], ["A-1", quantity]]}}


@pytest.fixture
def feed(control_sandbox, tmp_path):
    sandbox = control_sandbox
    sandbox.google.reset()
    for n in range(6):
        sandbox.google.store.put_control(f"sheet-{n}", stock(n))
    [credential] = sandbox.write_credentials(tmp_path, 1)
    reader = GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=5)
    return sandbox.google.store, DriveChangeFeed(reader, str(credential)), str(credential)


def test_nothing_changed_after_the_current_position(feed):
    _, changes, credential = feed
    position = changes.start_position(5)
    found = changes.changed_since(position, 5)
    assert (found.changed, found.removed, found.requests) == (frozenset(), frozenset(), 1)
    assert found.position  # a position to start from next time


def test_edits_after_a_position_are_reported_once_per_file_over_every_page(feed):
    store, changes, credential = feed
    position = changes.start_position(5)
    for n in (1, 2, 3, 4, 1):  # sheet-1 edited twice
        store.put_control(f"sheet-{n}", stock(100 + n))
    drive_caught_up(store)
    found = changes.changed_since(position, 5, page_size=2)
    assert found.changed == {"sheet-1", "sheet-2", "sheet-3", "sheet-4"} and not found.removed
    assert found.requests >= 2  # two a page
    again = changes.changed_since(found.position, 5)
    assert not again.changed  # the new position is after all of them


def test_a_deleted_file_is_reported_removed(feed):
    store, changes, credential = feed
    position = changes.start_position(5)
    store.put_control("sheet-5", stock(7))
    assert store.delete("sheet-5")
    found = changes.changed_since(position, 5)
    assert found.removed == {"sheet-5"} and "sheet-5" not in found.changed


def test_a_trashed_file_is_reported_changed_and_in_the_trash_not_removed(feed):
    # Drive's Change resource: "removed" is deletion or loss of access; a file moved to the trash is
    # a change of the file whose ``trashed`` is true, and it reads fine until it is deleted.
    store, changes, credential = feed
    position = changes.start_position(5)
    store.put_control("sheet-2", {**stock(2), "trashed": True})
    store.put_control("sheet-3", stock(3))
    drive_caught_up(store)  # sheet-3's edit reaches the feed at its moment; the trash at once
    found = changes.changed_since(position, 5)
    assert found.changed == {"sheet-2", "sheet-3"} and found.trashed == {"sheet-2"} and not found.removed
    store.put_control("sheet-2", stock(2))  # restored
    assert not changes.changed_since(found.position, 5).trashed


def test_a_position_drive_does_not_know_is_a_permanent_error(feed):
    _, changes, credential = feed
    with pytest.raises(SheetReadError) as raised:
        changes.changed_since("not-a-position", 5)
    assert raised.value.error_class is ErrorClass.PERMANENT and raised.value.http_status == 400


@pytest.mark.parametrize(("limit", "status"), [("per_user", 403), ("per_project", 429)])
def test_drive_throttling_is_a_quota_refusal_not_a_lost_permission(feed, control_sandbox, limit, status):
    # Drive throttles with 403 userRateLimitExceeded (per user) or 429 rateLimitExceeded: neither
    # may dead-letter a spreadsheet as if its access were gone.
    _, changes, credential = feed
    position = changes.start_position(5)
    control_sandbox.google.drive_quota.set_limits(**{limit: 1})
    try:
        with pytest.raises(SheetReadError) as raised:
            changes.changed_since(position, 5)
    finally:
        control_sandbox.google.drive_quota.set_limits(per_user=12_000, per_project=12_000)
    assert raised.value.http_status == status and raised.value.error_class is ErrorClass.QUOTA


def test_a_feed_that_does_not_end_within_the_time_given_is_a_transient_error(feed):
    store, changes, credential = feed
    position = changes.start_position(5)
    for n in range(6):
        store.put_control(f"sheet-{n}", stock(200 + n))
    drive_caught_up(store)
    with pytest.raises(SheetReadError) as raised:
        changes.changed_since(position, 0.0, page_size=1)
    assert raised.value.error_class is ErrorClass.TRANSIENT and "did not end within" in raised.value.message
