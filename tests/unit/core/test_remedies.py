"""What to do about a read refused for good (monitor.core.remedies), from Google's own words."""

from __future__ import annotations

import pytest

from monitor.core import remedies
from monitor.core.errors import ErrorInfo


@pytest.mark.parametrize(("error", "fix"), [
    (ErrorInfo("permanent", "This operation is not supported for this document", 400,
               "FAILED_PRECONDITION"), remedies.NOT_A_SPREADSHEET),
    (ErrorInfo("permanent", "File not found: 1abc.", 404, "NOT_FOUND"), remedies.DRIVE_NOT_FOUND),
    (ErrorInfo("permanent", "Requested entity was not found.", 404, "NOT_FOUND"),
     remedies.SHEETS_NOT_FOUND),
    (ErrorInfo("permanent", "The caller does not have permission", 403, "PERMISSION_DENIED"),
     remedies.NOT_SHARED),
    (ErrorInfo("permanent", "Unable to parse range: Stock!A1", 400, "INVALID_ARGUMENT",
               "Stock!A1"), remedies.BAD_RANGE),
    (ErrorInfo("loading", "Stock!F2 still shows Loading...; read it again later"),
     remedies.STILL_LOADING),
])
def test_each_refusal_has_its_fix(error, fix):
    assert remedies.remedy(error) == fix


@pytest.mark.parametrize("error", [
    ErrorInfo("transient", "The service is currently unavailable.", 503, "UNAVAILABLE"),
    ErrorInfo("uncertain", "Internal error encountered.", 500, "INTERNAL"),
    ErrorInfo("poison", "killed three runs"),
])
def test_errors_that_say_all_there_is_get_no_remedy(error):
    assert remedies.remedy(error) is None


def test_the_drive_and_sheets_not_found_are_told_apart():
    # Drive says "File not found" also for a file that exists but is not shared with the caller
    # (its "Resolve errors" page); the Sheets API's 404 is only for ids that name no spreadsheet.
    drive = remedies.remedy(ErrorInfo("permanent", "File not found: 1abc.", 404))
    sheets = remedies.remedy(ErrorInfo("permanent", "Requested entity was not found.", 404))
    assert "not shared" in drive and "not shared" not in sheets
