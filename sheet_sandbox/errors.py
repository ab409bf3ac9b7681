"""Google's error responses, byte for byte where the recordings show them.

Every error the fake Google API returns is built here, so their wording lives in one table.
Bodies are always ``{"error": {"code", "message"[, "errors"], "status"[, "details"]}}``: the
``errors`` list is the legacy form Google still adds to some answers (Drive's, some 5xx); where each
body comes from is in docs/sandbox.md.
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
        "or other valid authentication credential. "
        "See https://developers.google.com/identity/sign-in/web/devconsole-project."
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

# Google's front end turns away traffic it takes for automated abuse with a 429 whose body is this
# page, not the API's JSON (as quoted whole in public reports, e.g. github.com/Wei-Shaw/sub2api
# issue 360, 2026; docs/sandbox.md, "Quotas").
_HTML_SORRY = (
    '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"/>'
    "<title>Sorry...</title><style> body { font-family: verdana, arial, sans-serif; "
    "background-color: #fff; color: #000; }</style></head><body><div><table><tr><td><b>"
    "<font face=sans-serif size=10><font color=#4285f4>G</font><font color=#ea4335>o</font>"
    "<font color=#fbbc05>o</font><font color=#4285f4>g</font><font color=#34a853>l</font>"
    "<font color=#ea4335>e</font></font></b></td><td style=\"text-align: left; vertical-align: bottom; "
    'padding-bottom: 15px; width: 50%"><div style="border-bottom: 1px solid #dfdfdf;">Sorry...</div>'
    '</td></tr></table></div><div style="margin-left: 4em;"><h1>We\'re sorry...</h1><p>... but your '
    "computer or network may be sending automated queries. To protect our users, we can't process "
    'your request right now.</p></div><div style="margin-left: 4em;">See <a '
    'href="https://support.google.com/websearch/answer/86640">Google Help</a> for more information.'
    '<br/><br/></div><div style="text-align: center; border-top: 1px solid #dfdfdf;"><a '
    'href="https://www.google.com">Google Home</a></div></body></html>'
)


# The legacy ``errors`` entry some of Google's 5xx bodies carry (reason by status).
LEGACY_SERVER_ERRORS = {500: "backendError", 503: "backendError"}

_MISSING_CREDENTIALS = "The request is missing a valid API key."
_INSUFFICIENT_SCOPES = "Request had insufficient authentication scopes."


def google_error(code: int, message: str | None = None, details: list | None = None,
                 legacy_reason: str | None = None, legacy: dict | None = None) -> Response:
    """Google's error body. ``legacy_reason`` adds the legacy ``errors`` list with one entry of that
    reason (domain ``global``, the body's message); ``legacy`` overrides or adds entry fields."""
    text = message if message is not None else _DEFAULT_MESSAGES.get(code, "Unknown error.")
    error: dict = {"code": code, "message": text}
    if legacy_reason:
        error["errors"] = [{"message": text, "domain": "global", "reason": legacy_reason, **(legacy or {})}]
    error["status"] = _STATUS_NAMES.get(code, "UNKNOWN")
    if details:
        error["details"] = details
    return Response.json(code, {"error": error})


def not_found() -> Response:
    return google_error(404)


def permission_denied() -> Response:
    return google_error(403)


def unauthenticated(api: str, reason: str | None = None, service: str = "", method: str = ""
                    ) -> Response:
    """401 for a token Google does not accept; ``reason`` (``ACCESS_TOKEN_EXPIRED``) adds the
    ErrorInfo naming the service and the method refused; Drive adds its legacy ``authError``."""
    details = [_error_info(reason, service, method)] if reason else None
    if api != "drive":
        return google_error(401, details=details)
    where = {"message": "Invalid Credentials", "location": "Authorization", "locationType": "header"}
    return google_error(401, details=details, legacy_reason="authError", legacy=where)


def missing_credentials(api: str) -> Response:
    """403 for a request that carries no credential at all; Drive adds its legacy list."""
    return google_error(403, _MISSING_CREDENTIALS, legacy_reason="forbidden" if api == "drive" else None)


def insufficient_scopes(api: str, service: str, method: str) -> Response:
    """403 for a token none of whose scopes the method accepts; Drive adds its legacy list, whose
    message is Drive's older wording."""
    details = [_error_info("ACCESS_TOKEN_SCOPE_INSUFFICIENT", service, method)]
    if api != "drive":
        return google_error(403, _INSUFFICIENT_SCOPES, details=details)
    return google_error(403, _INSUFFICIENT_SCOPES, details=details, legacy_reason="insufficientPermissions",
                        legacy={"message": "Insufficient Permission"})


def _error_info(reason: str, service: str, method: str) -> dict:
    return {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
            "domain": "googleapis.com", "metadata": {"service": service, "method": method}}


def bad_range(text: str) -> Response:
    return google_error(400, f"Unable to parse range: {text}")


def invalid_argument(message: str) -> Response:
    return google_error(400, message)


# Google's link for raising a quota, the one ``google.rpc.Help`` detail of its 429s.
QUOTA_HELP_URL = "https://cloud.google.com/docs/quota#requesting_higher_quota"


def quota_exceeded(kind: str, scope: str, limit: int,
                   project_number: str = DEFAULT_PROJECT_NUMBER) -> Response:
    """429 for ``kind`` "Read"/"Write" and ``scope`` "user"/"project"; no Retry-After, like Google.

    ``project_number`` is the consumer Google names: the project of the account that asked. The
    per-user limit is "... per minute per user", the per-project one "... per minute" with nothing
    after it (no "per project"); the ErrorInfo names the limit (``ReadRequestsPerMinutePerUser`` /
    ``...PerProject``), and a Help detail links to raising it (docs/sandbox.md, "Quotas", sources).
    """
    per_user = scope == "user"
    message = (
        f"Quota exceeded for quota metric '{kind} requests' and limit "
        f"'{kind} requests per minute{' per user' if per_user else ''}' "
        f"of service 'sheets.googleapis.com' for consumer 'project_number:{project_number}'."
    )
    return google_error(429, message, details=[
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "RATE_LIMIT_EXCEEDED",
            "domain": "googleapis.com",
            "metadata": {
                "quota_location": "global",
                "quota_metric": f"sheets.googleapis.com/{kind.lower()}_requests",
                "quota_limit": f"{kind}RequestsPerMinutePer{'User' if per_user else 'Project'}",
                "quota_limit_value": str(limit),
                "consumer": f"projects/{project_number}",
                "service": "sheets.googleapis.com",
            },
        },
        {
            "@type": "type.googleapis.com/google.rpc.Help",
            "links": [{"description": "Request a higher quota limit.", "url": QUOTA_HELP_URL}],
        },
    ])


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


def html_sorry() -> Response:
    """The front end's anti-abuse 429, an HTML page (gspread raises APIError with code -1 for it)."""
    return Response.html(429, _HTML_SORRY)


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
