"""The token endpoint as the monitor meets it: one attempt per request, and its failures in one line.

google-auth fetches each service account's access token from Google's token endpoint, which fails on
its own (docs/sandbox.md, Faults): an HTML 502 page, a hang, an intermittent ``invalid_grant`` /
"Invalid JWT Signature.". Left alone, google-auth retries a 500/503/504 three times with real sleeps
of about 1 and 2 s, which no request timeout or run budget bounds and which stacks with the run's own
retries (the reason the client is gspread's plain ``HTTPClient``, too); and it raises an HTML page as
the error's text, or a ``TypeError`` for a page answered with 200.

:class:`TokenTransport` is the transport google-auth's token requests go through: an answer that is
not an OAuth answer (a 5xx, 408 or 429, or anything that is not JSON) raises
:class:`TokenEndpointError` at once, a ``google.auth`` transport error, so google-auth neither retries
nor parses it; its OAuth refusals (400 ``invalid_grant``...) pass through as before. The reader turns
either into a transient ``SheetReadError`` with :func:`token_failure_text`.
"""

from __future__ import annotations

import json

import google.auth.exceptions
from google.auth.transport.requests import Request as AuthRequest

# Below 500, the statuses google-auth would retry by itself (google.auth.transport's
# DEFAULT_RETRYABLE_STATUS_CODES: 408, 429, 500, 503, 504): the run's retry policy decides instead.
_RETRIED_BY_GOOGLE_AUTH = frozenset({408, 429})


class TokenEndpointError(google.auth.exceptions.TransportError):
    """The token endpoint answered with something other than a token or an OAuth refusal."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


class TokenTransport(AuthRequest):
    """google-auth's transport for token requests, raising :class:`TokenEndpointError` for an answer
    google-auth would retry or cannot read (see the module docstring)."""

    def __call__(self, url, method="GET", body=None, headers=None, timeout=None, **kwargs):
        response = super().__call__(url, method=method, body=body, headers=headers, timeout=timeout, **kwargs)
        status, answer = response.status, _json(response.data)
        if status >= 500 or status in _RETRIED_BY_GOOGLE_AUTH or not isinstance(answer, dict):
            raise TokenEndpointError(_summary(status, answer))
        return response


def token_failure_text(error: google.auth.exceptions.GoogleAuthError) -> str:
    """What the token endpoint answered, in one line: Google's OAuth error and its description, or
    the status of a failed answer. Never the assertion or a key. (A request that got no answer is the
    reader's to tell, as for every request.)"""
    if isinstance(error, TokenEndpointError):
        return error.summary
    text = error.args[0] if error.args and isinstance(error.args[0], str) else ""
    # A RefreshError reads "invalid_grant: Invalid JWT Signature." (google-auth joins error and
    # description); its second argument, the whole answer, is left out.
    return text[:200] if text else type(error).__name__


def _json(data: bytes | str) -> object:
    try:
        return json.loads(data)
    except (ValueError, TypeError):
        return None


def _summary(status: int, answer: object) -> str:
    if not isinstance(answer, dict):
        return f"HTTP {status} error page"
    error = answer.get("error")
    if isinstance(error, dict):  # an API-shaped body: {"error": {"message": ...}}
        error = error.get("message")
    description = answer.get("error_description")
    text = ": ".join(str(part) for part in (error, description) if part)
    return f"HTTP {status}: {text}"[:200] if text else f"HTTP {status}"
