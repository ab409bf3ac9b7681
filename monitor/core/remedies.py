"""What a person can do about a read that failed for good: one sentence per kind of refusal.

A dead letter says what Google answered ("permanent 400: This operation is not supported for this
document"); Google's words rarely say what to do, and the same status means different things on
Sheets and on Drive. :func:`remedy` reads a stored :class:`ErrorInfo` (so dead letters recorded
before a remedy existed get one too) and returns the fix, or None when there is nothing better to
say than the error itself. The alert and ``dlq show`` print it. docs/operations.md explains each.
"""

from __future__ import annotations

from monitor.core.errors import ErrorInfo

NOT_A_SPREADSHEET = (
    "the file is not a Google Sheets spreadsheet (an .xlsx or .csv kept in Drive): open it in Google "
    "Sheets, choose File > Save as Google Sheets, share the new file with the service account and "
    "put its id in the config"
)
DRIVE_NOT_FOUND = (
    "Google Drive shows no such file to the service account: it was deleted for good, or it is not "
    "shared with the service account (client_email in the key file): share it (Viewer is enough) or "
    "fix the id in the config"
)
SHEETS_NOT_FOUND = (
    "no spreadsheet has this id (a typo, or deleted for good, also by emptying Drive's trash): fix "
    "or remove it in the config"
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


def remedy(error: ErrorInfo) -> str | None:
    """What to do about ``error``; None when its own words are all there is to say."""
    message = error.message or ""
    if error.google_status == "FAILED_PRECONDITION" or _NOT_SUPPORTED in message:
        return NOT_A_SPREADSHEET
    if error.http_status == 404:
        return DRIVE_NOT_FOUND if message.startswith(_DRIVE_FILE_NOT_FOUND) else SHEETS_NOT_FOUND
    if error.http_status == 403 and message.startswith(_SHEETS_FORBIDDEN):
        return NOT_SHARED
    if error.http_status == 400 and error.range:
        return BAD_RANGE
    if error.error_class == "loading":
        return STILL_LOADING
    return None
