"""The gspread client and its endpoint seam: how the monitor reaches Google (or the sandbox standing in).

The sandbox must see the very requests gspread would send to Google. Rather than wrapping gspread or
patching them, a ``requests`` transport adapter mounted on the client's session rewrites the scheme
and host of every Sheets/Drive request to the configured endpoint. Everything above the socket, from
google-auth's token flow to gspread's error handling, runs exactly as in production, which uses the
same function with ``endpoint=None``.

Several workers read at once, each with its own client (a ``requests`` session is not thread-safe),
but one service account has one token: :class:`CredentialCache` loads each key file once and hands
every worker the same :class:`SharedServiceAccount`, which refreshes its token on one thread at a time.

A request's timeout covers fetching its token too (:class:`TokenTimedSession`), and the token request
is tried once (``monitor.google.token``): a failing token endpoint costs a read its timeout, no more."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from functools import partial
from urllib.parse import urlsplit, urlunsplit

from monitor.google import lean_gspread  # noqa: F401  before gspread: see its doc

# isort: split

import google.auth.exceptions
import gspread
import requests
from google.auth.transport.requests import AuthorizedSession
from google.oauth2 import service_account
from gspread.auth import READONLY_SCOPES
from gspread.http_client import HTTPClient
from requests.adapters import HTTPAdapter

from monitor.google.refusals import CredentialUnusable, is_refusal, key_unloadable, refused_for_good
from monitor.google.token import TokenTransport

# The hosts gspread talks to (Sheets v4 and Drive v3); the seam redirects exactly these.
GOOGLE_API_ORIGINS = ("https://sheets.googleapis.com", "https://www.googleapis.com")
DEFAULT_TIMEOUT_SECONDS = 30.0  # gspread's own default is no timeout at all: a hang would be forever
# What a request keeps of its timeout when fetching its token took all of it: it then fails as a
# timeout at once instead of waiting a whole timeout more.
_LEAST_TIMEOUT_SECONDS = 0.05


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


class SharedServiceAccount(service_account.Credentials):
    """Service-account credentials used by several threads: one refreshes the token, the others wait.

    google-auth refreshes inside ``before_request`` without a lock, so two workers finding the token
    expired would both fetch one and could each see the other's token half written.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._refresh_lock = threading.RLock()  # re-entered: before_request calls refresh
        self.key_file = ""  # the file it was loaded from, named when Google refuses it
        self._refusals = 0  # Google's refusals (invalid_grant) since the last token

    def before_request(self, request, method, url, headers) -> None:
        # Held for a validity check (microseconds), or for the one token request all others wait for.
        with self._refresh_lock:
            super().before_request(request, method, url, headers)

    def refresh(self, request) -> None:
        """Fetch a token; raises ``CredentialUnusable`` once Google's refusals say the account or the
        key is gone (``monitor.google.refusals``), google-auth's own errors otherwise."""
        with self._refresh_lock:
            try:
                super().refresh(request)
            except google.auth.exceptions.RefreshError as exc:
                if isinstance(exc, CredentialUnusable) or not is_refusal(exc):
                    raise
                self._refusals += 1
                problem = refused_for_good(exc, self._refusals, self.key_file, self.service_account_email)
                if problem is not None:
                    raise CredentialUnusable(problem) from exc
                raise
            self._refusals = 0


class TokenTimedSession(AuthorizedSession):
    """An AuthorizedSession whose request timeout covers fetching the token the request needs.

    AuthorizedSession gives the token request the whole timeout and then the request the whole
    timeout again. Here a token that is missing or expired is fetched first, within the timeout, and
    the request gets what is left, so a read never takes longer than its timeout (which the run cuts
    to the budget left), however slowly the token endpoint answers.
    """

    def __init__(self, credentials: service_account.Credentials, token_transport: TokenTransport) -> None:
        super().__init__(credentials, auth_request=token_transport)
        self._token_transport = token_transport

    def request(self, method, url, *args, **kwargs):
        timeout = kwargs.get("timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and not self.credentials.valid:
            started = time.monotonic()
            # Refreshes (one thread per service account, the others wait: SharedServiceAccount) and
            # fills a throwaway header dict; the request below then finds the token valid.
            self.credentials.before_request(partial(self._token_transport, timeout=timeout), method, url, {})
            kwargs["timeout"] = max(timeout - (time.monotonic() - started), _LEAST_TIMEOUT_SECONDS)
        return super().request(method, url, *args, **kwargs)


class CredentialCache:
    """Each service-account file loaded once (checking its RSA key costs tens of milliseconds), for
    every worker of a run. Thread-safe."""

    def __init__(self, scopes: Iterable[str] = READONLY_SCOPES) -> None:
        self._scopes = list(scopes)
        self._loaded: dict[str, SharedServiceAccount] = {}
        self._lock = threading.Lock()

    def get(self, path: str | os.PathLike) -> SharedServiceAccount:
        key = os.fspath(path)
        with self._lock:
            credentials = self._loaded.get(key)
            if credentials is None:
                credentials = load_service_account(key, self._scopes)
                self._loaded[key] = credentials
            return credentials


def load_service_account(key: str, scopes: Iterable[str] = READONLY_SCOPES) -> SharedServiceAccount:
    """The credentials in file ``key``; ``CredentialUnusable`` when its private key does not load
    (the config checked the file's shape, not that its PEM text is a key)."""
    try:
        credentials = SharedServiceAccount.from_service_account_file(key, scopes=list(scopes))
    except (ValueError, TypeError, IndexError) as exc:  # cryptography's and google-auth's parse errors
        raise CredentialUnusable(key_unloadable(key)) from exc
    credentials.key_file = key
    return credentials


def build_gspread_client(
    credentials: str | os.PathLike | SharedServiceAccount,
    *,
    endpoint: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    scopes: Iterable[str] = READONLY_SCOPES,
) -> gspread.Client:
    """A gspread client for one service account (its key file, or credentials already loaded), with a
    timeout on every request.

    Uses gspread's plain ``HTTPClient`` (never ``BackOffHTTPClient``, whose retries would stack with
    the monitor's). With ``endpoint`` set, Sheets and Drive traffic goes there instead of Google and
    environment proxies are ignored; the token request goes to the credentials' own ``token_uri``
    (for sandbox credentials, the sandbox). The token request is tried once, within the request's
    timeout (:class:`TokenTimedSession`).
    """
    if timeout is None or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not isinstance(credentials, service_account.Credentials):
        credentials = CredentialCache(scopes).get(credentials)
    token_session = requests.Session()
    if endpoint is not None:
        token_session.trust_env = False  # a proxy from the environment must not see sandbox traffic
    session = TokenTimedSession(credentials, TokenTransport(token_session))
    if endpoint is not None:
        session.trust_env = False
        adapter = EndpointAdapter(endpoint)
        for origin in GOOGLE_API_ORIGINS:
            session.mount(origin, adapter)
    client = gspread.Client(auth=credentials, session=session, http_client=HTTPClient)
    client.http_client.auth = credentials  # HTTPClient skips this when given a session; expiry needs it
    client.set_timeout(timeout)
    return client
