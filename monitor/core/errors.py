"""Our exception family and the one table that turns a failed Google read into an error class.

Everything inside the monitor speaks these exceptions, never ``requests``/``gspread``/``httpx`` ones.
The gspread adapter catches the library's errors at the boundary, calls :func:`classify` once, and
raises :class:`SheetReadError`; retry, breaker and DLQ code only ever look at ``error_class``.

Usage errors (bad config) are ``monitor.config.ConfigError``; they are not defined here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal

from monitor.core.tracking import document


class ErrorClass(StrEnum):
    """What a failure means for the run (docs/architecture.md, "Errors"). The value is stored and logged."""

    QUOTA = "quota"  # 429 / RESOURCE_EXHAUSTED: not the spreadsheet's fault
    TRANSIENT = "transient"  # 502/503/504, HTML page, timeout, connection error, credential refused
    UNCERTAIN = "uncertain"  # 500 or anything we do not recognise
    PERMANENT = "permanent"  # 400/403/404, invalid data: retrying cannot help
    LOADING = "loading"  # cells still computing (#LOADING / "Loading..."): retry, never a finding

    @property
    def permanent(self) -> bool:
        return self is ErrorClass.PERMANENT

    @property
    def retryable(self) -> bool:
        return not self.permanent


# Google's canonical status names (the body's ``error.status``), used when no HTTP status is known.
_STATUS_NAME_CLASSES: dict[str, ErrorClass] = {
    "RESOURCE_EXHAUSTED": ErrorClass.QUOTA,
    "UNAVAILABLE": ErrorClass.TRANSIENT,
    "DEADLINE_EXCEEDED": ErrorClass.TRANSIENT,
    "INTERNAL": ErrorClass.UNCERTAIN,
    "UNKNOWN": ErrorClass.UNCERTAIN,
    "INVALID_ARGUMENT": ErrorClass.PERMANENT,
    "NOT_FOUND": ErrorClass.PERMANENT,
    "PERMISSION_DENIED": ErrorClass.PERMANENT,
    "UNAUTHENTICATED": ErrorClass.TRANSIENT,  # see CREDENTIAL_REASONS
}

_HTTP_STATUS_CLASSES: dict[int, ErrorClass] = {
    429: ErrorClass.QUOTA,
    502: ErrorClass.TRANSIENT,
    503: ErrorClass.TRANSIENT,
    504: ErrorClass.TRANSIENT,
    500: ErrorClass.UNCERTAIN,
    400: ErrorClass.PERMANENT,
    401: ErrorClass.TRANSIENT,  # see CREDENTIAL_REASONS
    403: ErrorClass.PERMANENT,
    404: ErrorClass.PERMANENT,
}


# Drive's reasons for refusing on quota (its "Handle errors" page: 403 ``userRateLimitExceeded``,
# ``rateLimitExceeded`` and ``dailyLimitExceeded``, 429 ``rateLimitExceeded``, all in the
# ``usageLimits`` domain). Drive throttles with 403, which alone would read as "no permission".
# A daily limit refused this way is retried a minute later, like the others, until the day's quota
# is back: no attempt counts, nothing is dead-lettered.
QUOTA_REASONS = frozenset({"userRateLimitExceeded", "rateLimitExceeded", "dailyLimitExceeded"})


# Google refusing the credential a request carried, not the spreadsheet: a token none of whose scopes
# the method accepts (403 with ErrorInfo ``ACCESS_TOKEN_SCOPE_INSUFFICIENT``, Drive's legacy reason
# ``insufficientPermissions``), a request that reached Google without one (403 "The request is missing a
# valid API key.", ``CREDENTIALS_MISSING``), a token refused (401, even after google-auth fetched a new
# one). Like the token endpoint failing, it would fail every spreadsheet read with that credential
# alike: transient, so none is dead-lettered for it and the whole-API breaker stops a run that meets it
# everywhere. The file-level refusal (403 ``forbidden``, "The caller does not have permission") stays
# permanent: that one the spreadsheet's sharing fixes.
CREDENTIAL_REASONS = frozenset({
    "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "insufficientPermissions", "CREDENTIALS_MISSING",
    "ACCESS_TOKEN_EXPIRED", "ACCESS_TOKEN_TYPE_UNSUPPORTED",
})


def classify(
    http_status: int | None,
    google_status: str | None,
    is_html: bool,
    is_timeout: bool,
    is_connection_error: bool,
    reason: str | None = None,
    *,
    detail_reason: str | None = None,
) -> ErrorClass:
    """The classification table. Never returns LOADING: the adapter detects loading cells itself.

    ``reason`` is the first ``error.errors[].reason`` of the body (Drive's errors carry one);
    ``detail_reason`` the ``reason`` of its ``google.rpc.ErrorInfo`` detail, if any.

    Precedence, and why:
    1. quota (429, ``RESOURCE_EXHAUSTED`` in the body, or one of Drive's quota reasons, whatever
       the status): a quota refusal must never be counted against a spreadsheet, even if it came
       with an odd status (Drive sends 403);
    2. timeout, connection error, HTML error page: Google's front end answered (or nobody did),
       not the Sheets API, so the status code says nothing about the spreadsheet;
    3. the credential refused (``CREDENTIAL_REASONS``, 401): transient, whatever the status;
    4. the HTTP status; ``None`` or gspread's ``-1`` (its code for non-JSON bodies) mean unknown;
    5. the body's ``error.status`` when no status is known;
    6. anything else is uncertain (retried a little, then dead-lettered).
    """
    status = http_status if http_status is not None and http_status >= 0 else None
    google = (google_status or "").strip().upper() or None
    if status == 429 or google == "RESOURCE_EXHAUSTED" or reason in QUOTA_REASONS:
        return ErrorClass.QUOTA
    if is_timeout or is_connection_error or is_html:
        return ErrorClass.TRANSIENT
    if reason in CREDENTIAL_REASONS or detail_reason in CREDENTIAL_REASONS:
        return ErrorClass.TRANSIENT
    if status is not None:
        return _HTTP_STATUS_CLASSES.get(status, ErrorClass.UNCERTAIN)
    if google is not None:
        return _STATUS_NAME_CLASSES.get(google, ErrorClass.UNCERTAIN)
    return ErrorClass.UNCERTAIN


class QuotaScope(StrEnum):
    """Whose quota a refusal says ran out: it decides which credentials wait (``engine.pacer``)."""

    USER = "user"  # the credential's own per-user quota: only it waits
    PROJECT = "project"  # its Google Cloud project's: every credential of that project waits
    UNKNOWN = "unknown"  # not said (an HTML page, a body naming no limit): the credential waits a window


# The limit a quota message names: "... and limit 'Read requests per minute per user' of service ...".
_LIMIT_IN_MESSAGE = re.compile(r"limit '([^']*)'")
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def quota_scope(error: Mapping[str, Any] | None) -> QuotaScope:
    """Whose quota a 429's ``error`` object (the body's ``error``) says ran out.

    The ErrorInfo detail first, as Google means it to be read: its ``quota_limit``
    (``ReadRequestsPerMinutePerUser`` / ``ReadRequestsPerMinutePerProject``), else its ``quota_unit``
    (``1/min/{project}/{user}`` names a user). Then the message's limit: the per-user one ends "per
    user" ("Read requests per minute per user"), the project's names no scope at all ("Read requests
    per minute"; older bodies: "per user per 100 seconds" and "per 100 seconds"). A body that says
    neither is UNKNOWN.
    """
    if not isinstance(error, Mapping):
        return QuotaScope.UNKNOWN
    details = error.get("details")
    for detail in details if isinstance(details, list) else ():
        if not isinstance(detail, Mapping) or detail.get("@type") != _ERROR_INFO:
            continue
        metadata = detail.get("metadata")
        if not isinstance(metadata, Mapping):
            continue
        limit, unit = str(metadata.get("quota_limit", "")), str(metadata.get("quota_unit", ""))
        if "PerUser" in limit:  # before PerProject: "...PerProjectPerUser" is a user's share
            return QuotaScope.USER
        if "PerProject" in limit:
            return QuotaScope.PROJECT
        if unit:
            return QuotaScope.USER if "{user}" in unit else QuotaScope.PROJECT
    message = error.get("message")
    match = _LIMIT_IN_MESSAGE.search(message) if isinstance(message, str) else None
    if match is None:
        return QuotaScope.UNKNOWN
    return QuotaScope.USER if "per user" in match.group(1).lower() else QuotaScope.PROJECT


# Not an ErrorClass: what the dead-letter queue records for a task whose checks killed three runs.
POISON = "poison"
FailureClass = Literal["quota", "transient", "uncertain", "permanent", "loading", "poison"]


@document
class ErrorInfo:
    """A failure as stored in a task's history and a dead letter: what happened, never a traceback.

    ``range`` names the A1 range Google refused (a 400 on a bad range), so people can tell which
    config entry to fix; ``tabs`` the tabs the spreadsheet has then (None: not known). ``account`` is
    the service account's e-mail a 403 refused, the address to share the spreadsheet with.
    """

    error_class: FailureClass
    message: str
    http_status: int | None = None
    google_status: str | None = None
    range: str | None = None  # shadows the builtin: it is the word Google and the config use
    account: str | None = None
    tabs: tuple[str, ...] | None = None


class MonitorError(Exception):
    """Root of the monitor's own exceptions. ``permanent`` errors are not worth retrying."""

    permanent: bool = False

    @property
    def retryable(self) -> bool:
        return not self.permanent


@document
class CredentialProblem:
    """A credential that cannot read at all, for a reason of its own: its key does not load, or
    Google's token service refuses it for good (``invalid_grant``: the account or the key is gone).
    Not the spreadsheet's fault nor Google's outage: the run stops using that credential and tells
    people which file and which account, and what to do."""

    credential: str  # the key file's path, as configured
    email: str | None  # the service account's address, when the file names one
    problem: str  # what is wrong, never the key's text
    fix: str

    def text(self) -> str:
        account = f" ({self.email})" if self.email else ""
        return f"credential {self.credential}{account}: {self.problem}. Fix: {self.fix}"


class SheetReadError(MonitorError):
    """Reading a spreadsheet failed; raised by the gspread adapter after :func:`classify`.

    ``range`` names the A1 range Google refused (a 400 on a bad range), so the message can tell
    the admin which config entry to fix. ``quota_scope`` says whose quota a QUOTA refusal names (the
    pacer's business only; not stored). :meth:`info` is what a task's history and a dead letter keep.
    """

    def __init__(
        self,
        error_class: ErrorClass,
        http_status: int | None,
        google_status: str | None,
        message: str,
        range: str | None = None,  # shadows the builtin: it is the word Google and the config use
        quota_scope: QuotaScope | None = None,
        credential_problem: CredentialProblem | None = None,
        credential_refused: bool = False,
        *,
        account: str | None = None,
        tabs: tuple[str, ...] | None = None,
        details_needed: bool = False,
    ) -> None:
        super().__init__(message)
        self.error_class = ErrorClass(error_class)
        self.http_status = http_status
        self.google_status = google_status
        self.message = message
        self.range = range
        self.quota_scope = quota_scope
        # Set when the credential itself cannot read (the run stops using it; not the sheet's fault).
        self.credential_problem = credential_problem
        # Google refused the credential's key this once (it does so now and then): not the sheet's fault.
        self.credential_refused = credential_refused
        self.account = account  # see ErrorInfo
        self.tabs = tabs
        # A plain read showed a code only Google's details tell apart (#N/A, #REF!: an import computing,
        # refused, or a plain formula error): the question was short, not the spreadsheet, so the
        # read with details may go at once, with no backoff.
        self.details_needed = details_needed
        # Requests sent to explain the refusal (the tabs' titles), beyond the one the pacer granted:
        # Google counts them against the same quota, so the run counts them too.
        self.extra_requests = 0

    @property
    def permanent(self) -> bool:  # type: ignore[override]
        return self.error_class.permanent

    def __str__(self) -> str:
        parts = [self.error_class.value]
        if self.http_status is not None:
            parts.append(str(self.http_status))
        if self.google_status:
            parts.append(self.google_status)
        text = f"{' '.join(parts)}: {self.message}"
        if self.range:
            text += f" (range {self.range})"
        return text

    def __repr__(self) -> str:
        return (
            f"SheetReadError({self.error_class.value!r}, {self.http_status!r}, "
            f"{self.google_status!r}, {self.message!r}, range={self.range!r})"
        )

    def info(self) -> ErrorInfo:
        """What gets stored about this failure."""
        return ErrorInfo(self.error_class.value, self.message, self.http_status, self.google_status,
                         self.range, self.account, self.tabs)
