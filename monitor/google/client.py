"""The gspread client and its endpoint seam: how the monitor reaches Google (or the sandbox standing in).

XX
patching them, a ``requests`` transport adapter mounted on the client's session rewrites the scheme
and host of every Sheets/Drive request to the configured endpoint. Everything above the socket, from
google-auth's token flow to gspread's error handling, runs exactly as in production, which uses the
same function with ``endpoint=None``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

import gspread
import requests
from google.auth.transport.requests import AuthorizedSession
from google.auth.transport.requests import Request as AuthRequest
from google.oauth2 import service_account
from gspread.auth import READONLY_SCOPES
from gspread.http_client import HTTPClient
from requests.adapters import HTTPAdapter

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
