"""What a person can do about a read that failed for good: one sentence per kind of refusal.

A dead letter says what Google answered ("permanent 400: This operation is not supported for this
document"); Google's words rarely say what to do, and the same status means different things on
Sheets and on Drive. :func:`remedy` reads a stored :class:`ErrorInfo` (so dead letters recorded
before a remedy existed get one too) and returns the fix, or None when there is nothing better to
say than the error itself. The alert and ``dlq show`` print it. docs/operations.md explains each.
"""

from __future__ import annotations

from monitor.core.a1 import A1Error, parse_a1
from monitor.core.errors import ErrorInfo

NOT_A_SPREADSHEET = (
    "the file is not a Google Sheets spreadsheet (an .xlsx or .csv kept in Drive): open it in Google "
    "Sheets, choose File > Save as Google Sheets, share the new file with the service account and "
    "put its id in the config"
)
DRIVE_NOT_FOUND = (
    "if the file is not shared with the service account (client_email in the key file), share it "
    "(Viewer is enough); if it was deleted or the id is wrong, fix or remove it in the config"
)
SHEETS_NOT_FOUND = (
    "if the id in the config is wrong, fix it; if the spreadsheet was deleted for good (also by "
    "emptying Drive's trash), remove it from the config"
)
NOT_SHARED = (
    "share the spreadsheet with the service account's e-mail (client_email in the key file), "
    "Viewer is enough"
)
BAD_RANGE = "fix the range in the config (a tab renamed or deleted, or a named range removed?)"
STILL_LOADING = (
    "cells were still computing (IMPORTRANGE, GOOGLEFINANCE, IMPORTXML) at every try: open the "
    "spreadsheet to see whether they finish; it is read again next round"
)

# Google's words for each case, as the Sheets API and Drive send them (docs/sandbox.md quotes the
# bodies and their sources).
_NOT_SUPPORTED = "not supported for this document"
_DRIVE_FILE_NOT_FOUND = "File not found"
_SHEETS_FORBIDDEN = "The caller does not have permission"


def remedy(error: ErrorInfo, *, after_problem: bool = False) -> str | None:
    """What to do about ``error``; None when its own words are all there is to say. ``after_problem``:
    it follows :func:`problem`'s sentence, so it need not repeat what that one names."""
    message = error.message or ""
    if error.google_status == "FAILED_PRECONDITION" or _NOT_SUPPORTED in message:
        return NOT_A_SPREADSHEET
    if error.http_status == 404:
        return DRIVE_NOT_FOUND if message.startswith(_DRIVE_FILE_NOT_FOUND) else SHEETS_NOT_FOUND
    if error.http_status == 403 and message.startswith(_SHEETS_FORBIDDEN):
        if error.account and after_problem:  # which names the account: said once is enough
            return "share the spreadsheet with that e-mail, Viewer is enough"
        if error.account:
            return f"share the spreadsheet with {error.account} (the service account), Viewer is enough"
        return NOT_SHARED
    if error.http_status == 400 and error.range:
        if error.tabs is not None:
            there = _tab_of(error.range) in error.tabs  # then the cells part is what Google refused
            fix = "fix the range in the config" if there else "rename the tab back or fix the config's range"
            return f"{fix}; {_tabs_found(error.tabs)}"
        return BAD_RANGE
    if error.error_class == "loading":
        return STILL_LOADING
    return None


def problem(error: ErrorInfo) -> str | None:
    """What is wrong, in a person's words ("the tab “Stock” is missing or was renamed"): what an
    alert leads with, before the fix and Google's own words. None when Google's words are all
    there is to say."""
    message = error.message or ""
    if error.google_status == "FAILED_PRECONDITION" or _NOT_SUPPORTED in message:
        return "the file is not a Google Sheets spreadsheet"
    if error.http_status == 404:
        if message.startswith(_DRIVE_FILE_NOT_FOUND):
            return "Google Drive shows no such file (deleted, or not shared with the service account)"
        return "no spreadsheet has this id (it was deleted, or the id in the config is wrong)"
    if error.http_status == 403 and message.startswith(_SHEETS_FORBIDDEN):
        who = f"the service account {error.account}" if error.account else "the service account"
        return f"it is not shared with {who}"
    if error.http_status == 400 and error.range:
        tab = _tab_of(error.range)
        if tab is None:
            return f"the range {error.range} does not exist (a named range removed or renamed?)"
        if error.tabs is not None and tab in error.tabs:  # the tab is there: the cells part is wrong
            return f"Google cannot read the range {error.range} of the tab “{tab}”"
        return f"the tab “{tab}” is missing or was renamed (the config reads {error.range})"
    if error.error_class == "loading":
        return "cells were still computing at every try"
    return None


def problem_kind(error: ErrorInfo) -> str:
    """The kind of refusal in two or three words ("not shared", "tab missing"): how a message that
    counts many dead letters at once groups them."""
    message = error.message or ""
    if error.google_status == "FAILED_PRECONDITION" or _NOT_SUPPORTED in message:
        return "not a spreadsheet"
    if error.http_status == 404:
        return "not found"
    if error.http_status == 403 and message.startswith(_SHEETS_FORBIDDEN):
        return "not shared"
    if error.http_status == 400 and error.range:
        return "tab or range missing"
    if error.error_class == "loading":
        return "still computing"
    return "refused"


def _tab_of(a1: str) -> str | None:
    try:
        return parse_a1(a1).sheet
    except A1Error:  # the cells part may be what Google refused: the tab is still before the "!"
        sheet, bang, _ = a1.rpartition("!")
        return (sheet.strip("'").replace("''", "'") or None) if bang else None


def _tabs_found(tabs: tuple[str, ...]) -> str:
    if not tabs:
        return "the spreadsheet has no tabs"
    shown = ", ".join(f"“{tab}”" for tab in tabs[:_TABS_SHOWN])
    more = f" and {len(tabs) - _TABS_SHOWN} more" if len(tabs) > _TABS_SHOWN else ""
    return f"tabs found: {shown}{more}"


_TABS_SHOWN = 10  # a spreadsheet may have hundreds of tabs; the first ones say enough on a phone
