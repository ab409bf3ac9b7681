"""The gspread adapter: how the monitor reaches Google Sheets (or the sandbox standing in for it).

The endpoint seam (SPEC section 10) comes first: gspread's URLs are module constants, so instead of
patching them, a ``requests`` transport adapter mounted on the client's session rewrites the scheme
and host of every Sheets/Drive request to the configured endpoint. Everything above the socket, from
google-auth's token flow to gspread's error handling, runs exactly as in production, which uses the
same function with ``endpoint=None``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import google.auth.exceptions
import gspread
import requests
from google.auth.transport.requests import AuthorizedSession
from google.auth.transport.requests import Request as AuthRequest
from google.oauth2 import service_account
from gspread.auth import READONLY_SCOPES
from gspread.exceptions import APIError
from gspread.http_client import HTTPClient
from gspread.urls import DRIVE_FILES_API_V3_URL
from requests.adapters import HTTPAdapter

from monitor.core.errors import ErrorClass, SheetReadError, classify

# The hosts gspread talks to (Sheets v4 and Drive v3); the seam redirects exactly these.
GOOGLE_API_ORIGINS = ("https://sheets.googleapis.com", "https://www.googleapis.com")
DEFAULT_TIMEOUT_SECONDS = 30.0  # gspread's own default is no timeout at all: a hang would be forever


class EndpointAdapter(HTTPAdapter):
    """Sends each request to ``endpoint`` instead of its own origin, keeping path and query.

    ``endpoint`` may carry a path prefix (``http://host:port/prefix``); it is put before the path.
    """

    def __init__(self, endpoint: str, **kwargs) -> None:
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"endpoint must be an http(s) URL like http://127.0.0.1:8931, got {endpoint!r}")
        self._scheme = parts.scheme
        self._netloc = parts.netloc
        self._prefix = parts.path.rstrip("/")
        super().__init__(**kwargs)

    def send(self, request: requests.PreparedRequest, *args, **kwargs) -> requests.Response:
        original = urlsplit(request.url)
        redirected = request.copy()  # the caller's request keeps its Google URL (errors show it)
        redirected.url = urlunsplit(
            (self._scheme, self._netloc, self._prefix + original.path, original.query, "")
        )
        return super().send(redirected, *args, **kwargs)


def build_gspread_client(
    credentials_file: str | os.PathLike,
    *,
    endpoint: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    scopes: Iterable[str] = READONLY_SCOPES,
) -> gspread.Client:
    """A gspread client for one service-account file, with a timeout on every request.

    Uses gspread's plain ``HTTPClient`` (never ``BackOffHTTPClient``, whose retries would stack with
    the monitor's). With ``endpoint`` set, Sheets and Drive traffic goes there instead of Google and
    environment proxies are ignored; the token request goes to the credentials' own ``token_uri``
    (for sandbox credentials, the sandbox). The token request shares the timeout, because
    AuthorizedSession passes each request's timeout on to its refresh.
    """
    if timeout is None or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    credentials = service_account.Credentials.from_service_account_file(
        os.fspath(credentials_file), scopes=list(scopes)
    )
    auth_request = None
    if endpoint is not None:
        token_session = requests.Session()
        token_session.trust_env = False  # a proxy from the environment must not see sandbox traffic
        auth_request = AuthRequest(token_session)
    session = AuthorizedSession(credentials, auth_request=auth_request)
    if endpoint is not None:
        session.trust_env = False
        adapter = EndpointAdapter(endpoint)
        for origin in GOOGLE_API_ORIGINS:
            session.mount(origin, adapter)
    client = gspread.Client(auth=credentials, session=session, http_client=HTTPClient)
    client.http_client.auth = credentials  # HTTPClient skips this when given a session; expiry needs it
    client.set_timeout(timeout)
    return client


# -- reading: one values:batchGet per spreadsheet, errors classified here and nowhere else ----------

# Numbers as numbers and dates as serial numbers: the checks compare values, not their display.
READ_PARAMS = {
    "valueRenderOption": "UNFORMATTED_VALUE",
    "dateTimeRenderOption": "SERIAL_NUMBER",
    "majorDimension": "ROWS",
}
# Google's wording for a range it cannot resolve (a renamed tab, a typo in the config).
_BAD_RANGE_PREFIX = "Unable to parse range: "


class GspreadReader:
    """Reads spreadsheets with one gspread client per credential (see ``runner.SheetReader``)."""

    def __init__(self, clients: Mapping[str, gspread.Client]) -> None:
        self.clients = dict(clients)

    @classmethod
    def from_credentials(
        cls, credential_files: Iterable[str | os.PathLike], *, endpoint: str | None, timeout: float
    ) -> GspreadReader:
        return cls(
            {
                os.fspath(path): build_gspread_client(path, endpoint=endpoint, timeout=timeout)
                for path in credential_files
            }
        )

    def read(self, spreadsheet_id: str, ranges: Sequence[str], credential: str, timeout: float) -> list[dict]:
        """Every range in one request; raises SheetReadError, never a requests/gspread/google-auth error."""
        with _classified(timeout):
            client = self._client(credential, timeout)
            body = client.http_client.values_batch_get(spreadsheet_id, list(ranges), params=dict(READ_PARAMS))
            value_ranges = body["valueRanges"]
        if len(value_ranges) != len(ranges):
            raise SheetReadError(
                ErrorClass.UNCERTAIN,
                200,
                None,
                f"asked for {len(ranges)} ranges, Google returned {len(value_ranges)}",
            )
        return value_ranges

    def modified_time(self, spreadsheet_id: str, credential: str, timeout: float) -> str:
        """The file's Drive ``modifiedTime`` (RFC 3339), for freshness checks on the whole file."""
        params = {"fields": "modifiedTime", "supportsAllDrives": True}
        with _classified(timeout):
            client = self._client(credential, timeout)
            response = client.http_client.request(
                "get", f"{DRIVE_FILES_API_V3_URL}/{spreadsheet_id}", params=params
            )
            return response.json()["modifiedTime"]

    def _client(self, credential: str, timeout: float) -> gspread.Client:
        client = self.clients[credential]
        client.set_timeout(max(timeout, 0.1))  # bounded by the run's remaining budget on every call
        return client


@contextmanager
def _classified(timeout: float) -> Iterator[None]:
    """Turn whatever gspread, requests or google-auth raise into one classified SheetReadError."""
    try:
        yield
    except APIError as exc:
        raise _api_error(exc) from None
    except requests.Timeout:
        raise _transient(f"no answer within {timeout:.1f} s") from None
    except requests.ConnectionError as exc:
        raise _transient(f"connection failed: {_reason(exc)}") from None
    except google.auth.exceptions.GoogleAuthError as exc:
        # The token endpoint refused or failed: every spreadsheet would fail alike, so this must
        # not dead-letter them one by one; as transient it feeds the whole-API breaker instead.
        raise _transient(f"token request failed: {_reason(exc)}") from None
    except (ValueError, KeyError) as exc:  # a 200 whose body is not the JSON we asked for
        raise SheetReadError(ErrorClass.UNCERTAIN, 200, None, f"unreadable answer: {exc!r}"[:300]) from None


def _api_error(exc: APIError) -> SheetReadError:
    response = exc.response
    content_type = response.headers.get("Content-Type", "")
    is_html = "json" not in content_type.lower()
    google_status = exc.error.get("status") if not is_html else None
    message = str(exc.error.get("message", "")) if not is_html else f"HTTP {response.status_code} error page"
    error_class = classify(response.status_code, google_status, is_html, False, False)
    bad_range = message[len(_BAD_RANGE_PREFIX) :] if message.startswith(_BAD_RANGE_PREFIX) else None
    return SheetReadError(error_class, response.status_code, google_status, message[:500], range=bad_range)


def _transient(message: str) -> SheetReadError:
    return SheetReadError(ErrorClass.TRANSIENT, None, None, message)


def _reason(exc: BaseException) -> str:
    # The innermost cause says what happened ("Connection reset by peer"), the wrappers only where.
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__
    return str(exc)[:300] or type(exc).__name__
