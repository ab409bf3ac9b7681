"""Google's error responses, byte for byte where the recordings show them.

Every error the fake Google API returns is built here, so their wording lives in one table.
Bodies are always ``{"error": {"code", "message", "status"[, "details"]}}``.
"""

from __future__ import annotations

from .http import Response
from .projects import DEFAULT_PROJECT_NUMBER

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "ALREADY_EXISTS",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

_DEFAULT_MESSAGES = {
    400: "Request contains an invalid argument.",
    401: (
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "
        "or other valid authentication credential."
    ),
    403: "The caller does not have permission",
    404: "Requested entity was not found.",
    500: "Internal error encountered.",
    503: "The service is currently unavailable.",
    504: "The service is currently unavailable.",
}

_HTML_502 = """<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <title>Error 502 (Server Error)!!1</title>
  <p><b>502.</b> <ins>That's an error.</ins>
  <p>The server encountered a temporary error and could not complete your request.<p>Please try again \
in 30 seconds.  <ins>That's all we know.</ins>
"""


def google_error(code: int, message: str | None = None, details: list | None = None) -> Response:
    error: dict = {
        "code": code,
        "message": message if message is not None else _DEFAULT_MESSAGES.get(code, "Unknown error."),
        "status": _STATUS_NAMES.get(code, "UNKNOWN"),
    }
    if details:
        error["details"] = details
    return Response.json(code, {"error": error})


def not_found() -> Response:
    return google_error(404)


def permission_denied() -> Response:
    return google_error(403)


def unauthenticated() -> Response:
    return google_error(401)


def bad_range(text: str) -> Response:
    return google_error(400, f"Unable to parse range: {text}")


def invalid_argument(message: str) -> Response:
    return google_error(400, message)


def quota_exceeded(kind: str, scope: str, limit: int,
                   project_number: str = DEFAULT_PROJECT_NUMBER) -> Response:
    """429 for ``kind`` "Read"/"Write" and ``scope`` "user"/"project"; no Retry-After, like Google.

    ``project_number`` is the consumer Google names: the project of the account that asked.
    """
    per = "per user" if scope == "user" else "per project"
    quota_limit = f"{kind}RequestsPerMinutePer{'User' if scope == 'user' else 'Project'}"
    unit = "1/min/{project}/{user}" if scope == "user" else "1/min/{project}"
    message = (
        f"Quota exceeded for quota metric '{kind} requests' and limit '{kind} requests per minute {per}' "
        f"of service 'sheets.googleapis.com' for consumer 'project_number:{project_number}'."
    )
    return google_error(429, message, details=[{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "RATE_LIMIT_EXCEEDED",
        "domain": "googleapis.com",
        "metadata": {
            "quota_limit_value": str(limit),
            "service": "sheets.googleapis.com",
            "quota_metric": f"sheets.googleapis.com/{kind.lower()}_requests",
            "quota_limit": quota_limit,
            "quota_unit": unit,
        },
    }])


def not_a_spreadsheet() -> Response:
    """What the Sheets API answers for a Drive file that is not a Google Sheets spreadsheet (an
    uploaded .xlsx), with the legacy ``errors`` list it still carries here: the body as quoted from
    the live API in github.com/googleworkspace/php-samples/issues/65 and, with the same reason,
    github.com/cpvalente/ontime/pull/1487."""
    message = "This operation is not supported for this document"
    item = {"message": message, "domain": "global", "reason": "failedPrecondition"}
    return Response.json(400, {"error": {"code": 400, "message": message, "errors": [item],
                                         "status": "FAILED_PRECONDITION"}})


def html_bad_gateway() -> Response:
    """The front end's HTML 502 page (gspread raises APIError with code -1 for it)."""
    return Response.html(502, _HTML_502)


def field_violation(message: str, field: str | None = None) -> Response:
    """400 whose detail names the offending request field, as Google's protobuf decoding does."""
    violation = {"field": field, "description": message} if field else {"description": message}
    return google_error(400, message, details=[{
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [violation],
    }])


def invalid_json(problem: str = "Unexpected token.") -> Response:
    """A request body that is not JSON."""
    return field_violation(f"Invalid JSON payload received. {problem}")


def unknown_path(method: str, path: str) -> Response:
    return google_error(404, f"The requested URL {path} was not found on this server.")


def method_not_allowed(method: str, path: str) -> Response:
    return google_error(405, f"Method {method} is not allowed for the URL {path}.")


def drive_error(code: int, message: str, reason: str, location: str | None = None) -> Response:
    """Drive v3's error body: Google's usual fields plus the legacy ``errors`` list Drive keeps."""
    item = {"message": message, "domain": "global", "reason": reason}
    if location:
        item.update(location=location, locationType="parameter")
    status = _STATUS_NAMES.get(code, "UNKNOWN")
    return Response.json(code, {"error": {"code": code, "message": message, "status": status,
                                          "errors": [item]}})


def drive_file_not_found(file_id: str) -> Response:
    return drive_error(404, f"File not found: {file_id}.", "notFound", "fileId")


def drive_rate_limited(scope: str) -> Response:
    """Drive's answers to too many requests, as its "Resolve errors" page shows them: 403
    ``userRateLimitExceeded`` for the per-user quota, 429 ``rateLimitExceeded`` for the project's.
    No ``status`` field and no Retry-After header: the page shows neither."""
    if scope == "user":
        code, reason, message = 403, "userRateLimitExceeded", "User Rate Limit Exceeded"
    else:
        code, reason, message = 429, "rateLimitExceeded", "Rate Limit Exceeded"
    item = {"domain": "usageLimits", "reason": reason, "message": message}
    return Response.json(code, {"error": {"errors": [item], "code": code, "message": message}})
