"""Service accounts and OAuth tokens, the way Google's token endpoint hands them out.

The sandbox issues real service-account JSON files (RSA-2048 keys of their own whose ``token_uri`` points at
the sandbox) and remembers each public key. ``POST /token`` then runs Google's jwt-bearer grant for real:
google-auth signs an RS256 JWT with the private key, the sandbox verifies the signature against the
registered key, checks the audience and the time window against its clock, and answers with an opaque
access token tied to the account's email and to the scopes the JWT asked for. A JWT signed by any other
key gets Google's ``invalid_grant`` / ``Invalid JWT Signature.`` answer.

API requests are identified here too (``identify``): no credential at all, a token the sandbox never
minted, one that expired, or a caller and its scopes; what Google answers each is in ``google.py``.

Time: ``iat``/``exp`` are stamped by google-auth from the real clock, so a sandbox on a ManualClock must
start that clock near the real time (``ManualClock(datetime.now(UTC))``) for google-auth's flow to pass,
exactly as a client whose clock is months off is refused by Google.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from monitor.core.private_folders import ensure_private_dir

from . import errors
from .http import Request, Response
from .projects import DEFAULT_PROJECT_ID, spread
from .scopes import ALL_SCOPES

# What a keys folder holds: JSON key files (ours are sa-N.json, Google's downloads <project>-<hex>.json)
# and the bot token file the docs keep beside them.
_KEY_FILE = re.compile(r"[\w.-]+\.json|telegram-token")
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ACCESS_TOKEN_SECONDS = 3599  # what Google answers in expires_in
MAX_JWT_LIFETIME_SECONDS = 3600  # Google refuses assertions valid for longer than an hour
CLOCK_SKEW_SECONDS = 300  # tolerated difference between the client's and the sandbox's clock
# Audiences Google's token endpoint accepts besides the token_uri written into the credentials.
GOOGLE_AUDIENCES = frozenset({
    "https://oauth2.googleapis.com/token",
    "https://www.googleapis.com/oauth2/v4/token",
    "https://accounts.google.com/o/oauth2/token",
})

_BAD_SIGNATURE = "Invalid JWT Signature."
_BAD_TIME = (
    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
    "Check your iat and exp values in the JWT claim."
)
_NO_SCOPE = "Invalid OAuth scope or ID token audience provided."

# What an injected fault on the token endpoint may answer (docs/sandbox.md, Faults): 200 (answer
# normally), 400 the intermittent "Invalid JWT Signature.", 500 Google's "internal_failure", 502 the
# front end's HTML page.
TOKEN_FAULT_STATUSES = frozenset({200, 400, 500, 502})

# Why an API request has no caller (``Caller.problem``).
MISSING, UNKNOWN, EXPIRED = "missing", "unknown", "expired"


def is_key_file(name: str) -> bool:
    """Is ``name``, in a keys folder, a key (or the bot token beside them)?"""
    return _KEY_FILE.fullmatch(name) is not None


@dataclass(frozen=True)
class Caller:
    """Who sent an API request, as its credential says: an email and the token's scopes, or why not."""

    email: str | None = None
    scopes: frozenset[str] = frozenset()
    problem: str | None = None  # MISSING (no credential), UNKNOWN (not a token minted here), EXPIRED


# The RSA keys made in this process, in the order made: an authority's nth account gets the nth, so
# each of its accounts has a key of its own, and authorities after the first (the tests start hundreds
# of sandboxes in one process) take the keys made already. Making a 2048-bit key costs 50-200 ms of
# CPU, more than a whole run against the sandbox; reusing one across sandboxes lets no caller in that
# another would not (each verifies only the accounts it issued, by key id and email).
_KEYS_MADE: list[rsa.RSAPrivateKey] = []
_KEYS_LOCK = threading.Lock()


def _private_key(number: int) -> rsa.RSAPrivateKey:
    """The ``number``th key made in this process (from 1), made now if it is the next."""
    with _KEYS_LOCK:
        while len(_KEYS_MADE) < number:
            _KEYS_MADE.append(rsa.generate_private_key(public_exponent=65537, key_size=2048))
        return _KEYS_MADE[number - 1]


@dataclass(frozen=True)
class _Key:
    email: str
    public_key: rsa.RSAPublicKey
    token_uri: str


class TokenAuthority:
    """Issues service accounts, verifies their JWT assertions and tracks the access tokens it minted.

    Thread-safe. Issued accounts survive ``GoogleSandbox.reset()`` (credential files on disk stay valid).
    """

    def __init__(self, clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: dict[str, _Key] = {}  # private_key_id -> registered public key
        # access token -> (email, expires at epoch, scopes); expired ones stay known, to be told apart
        self._tokens: dict[str, tuple[str, float, frozenset[str]]] = {}
        self._issued = 0

    # -- credentials -------------------------------------------------------------------------

    def issue_service_account(self, token_uri: str, project_id: str = DEFAULT_PROJECT_ID) -> dict:
        """A complete service-account JSON dict with a key of its own (no other account of this
        authority has it) and a fresh key id, whose public half is registered."""
        key_id = secrets.token_hex(20)
        with self._lock:
            self._issued += 1
            number = self._issued
            private_key = _private_key(number)
            email = f"monitor-{number}@{project_id}.iam.gserviceaccount.com"
            self._keys[key_id] = _Key(email, private_key.public_key(), token_uri)
        pem = private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        return {
            "type": "service_account",
            "project_id": project_id,
            "private_key_id": key_id,
            "private_key": pem,
            "client_email": email,
            "client_id": str(100000000000000000000 + secrets.randbelow(10**20)),
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": token_uri,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "client_x509_cert_url": (
                "https://www.googleapis.com/robot/v1/metadata/x509/" + quote(email, safe="")
            ),
            "universe_domain": "googleapis.com",
        }

    def write_credentials(self, directory: str | os.PathLike, count: int, token_uri: str,
                          projects: int = 1) -> list[Path]:
        """Write ``count`` new service-account files ``sa-1.json``... (mode 0600) into ``directory``
        (0700; see :func:`monitor.core.private_folders.ensure_private_dir`).

        The accounts are spread over ``projects`` projects in contiguous blocks (see
        ``projects.spread``). Numbering continues after files already there, so a second call never
        overwrites a key. Raises ValueError for a count below 1 or more projects than accounts.
        """
        if count < 1:
            raise ValueError(f"credential count must be at least 1, got {count}")
        owners = spread(count, projects)
        folder = Path(directory)
        # The owner's alone (0700), as the docs keep secrets/: a folder made by mkdir is made so too
        # when it holds only keys; one that holds other files keeps its mode (the CLI says so).
        ensure_private_dir(folder, is_key_file)
        paths = []
        number = 1
        for project_id in owners:
            while (folder / f"sa-{number}.json").exists():
                number += 1
            path = folder / f"sa-{number}.json"
            info = self.issue_service_account(token_uri, project_id)
            # Created 0600 from the start: the private key is never readable by others, even briefly.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(info, handle, indent=2)
                handle.write("\n")
            paths.append(path)
        return paths

    # -- tokens ------------------------------------------------------------------------------

    def mint_token(self, email: str, scopes: frozenset[str] | None = None) -> str:
        """An access token for ``email`` valid for ACCESS_TOKEN_SECONDS, with ``scopes`` (default:
        every scope a sandbox endpoint accepts; for tests and tools)."""
        token = "ya29.sandbox-" + secrets.token_urlsafe(32)
        granted = ALL_SCOPES if scopes is None else frozenset(scopes)
        with self._lock:
            self._tokens[token] = (email, self._clock.time() + ACCESS_TOKEN_SECONDS, granted)
        return token

    def tokens_issued(self, email: str | None = None) -> int:
        """Access tokens minted so far (for ``email``, or for everyone)."""
        with self._lock:
            return sum(1 for owner, _, _ in self._tokens.values() if email in (None, owner))

    def identify(self, request: Request) -> Caller:
        """The caller behind the request's Bearer token (or ``access_token`` query), or why none."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            token = request.arg("access_token") or ""
        token = token.strip()
        if not token:
            return Caller(problem=MISSING)
        with self._lock:
            entry = self._tokens.get(token)
        if entry is None:
            return Caller(problem=UNKNOWN)
        email, expires_at, scopes = entry
        if self._clock.time() >= expires_at:
            return Caller(problem=EXPIRED)
        return Caller(email, scopes)

    def authenticate(self, request: Request) -> str | None:
        """The email behind the request's valid, unexpired token, or None."""
        return self.identify(request).email

    def token_endpoint(self, request: Request) -> Response:
        """``POST /token``: Google's OAuth 2.0 jwt-bearer grant, with Google's error answers."""
        if request.method != "POST":
            return _oauth_error(405, "invalid_request", f"Method {request.method} is not allowed.")
        try:
            form = parse_qs(request.body.decode("utf-8"), keep_blank_values=True)
        except UnicodeDecodeError:
            return _oauth_error(400, "invalid_request", "Request body is not valid form data.")
        grant_type = (form.get("grant_type") or [""])[-1]
        if not grant_type:
            return _oauth_error(400, "invalid_request", "Missing required parameter: grant_type")
        if grant_type != JWT_BEARER_GRANT:
            return _oauth_error(400, "unsupported_grant_type", f"Invalid grant_type: {grant_type}")
        assertion = (form.get("assertion") or [""])[-1]
        if not assertion:
            return _oauth_error(400, "invalid_request", "Missing required parameter: assertion")
        email, problem = self._verify_assertion(assertion)
        if problem is not None:
            return _oauth_error(400, "invalid_grant", problem)
        scopes = _scopes_asked(assertion)
        if not scopes:  # Google mints no token that could call nothing
            return _oauth_error(400, "invalid_scope", _NO_SCOPE)
        return Response.json(200, {
            "access_token": self.mint_token(email, scopes),
            "expires_in": ACCESS_TOKEN_SECONDS,
            "token_type": "Bearer",
        })

    def _verify_assertion(self, assertion: str) -> tuple[str, str | None]:
        """(email, None) for a valid assertion, else ("", Google's error_description)."""
        parts = assertion.split(".")
        if len(parts) != 3:
            return "", "Invalid JWT: the assertion is not a signed JWT (header.claims.signature)."
        try:
            header = json.loads(_b64decode(parts[0]))
            claims = json.loads(_b64decode(parts[1]))
            signature = _b64decode(parts[2])
        except (ValueError, binascii.Error):
            return "", _BAD_SIGNATURE
        if not isinstance(header, dict) or not isinstance(claims, dict):
            return "", _BAD_SIGNATURE
        if header.get("alg") != "RS256":
            return "", _BAD_SIGNATURE
        issuer = claims.get("iss")
        with self._lock:
            known = [key for key in self._keys.values() if key.email == issuer]
            by_id = self._keys.get(str(header.get("kid", "")))
        if not known:
            return "", "Invalid grant: account not found"
        # With a kid, only that key of the account may verify; without one, any of its keys.
        if "kid" in header:
            candidates = [by_id] if by_id is not None and by_id.email == issuer else []
        else:
            candidates = known
        signed = f"{parts[0]}.{parts[1]}".encode()
        key = next((k for k in candidates if _signature_matches(k.public_key, signed, signature)), None)
        if key is None:
            return "", _BAD_SIGNATURE
        audience = claims.get("aud")
        if audience != key.token_uri and audience not in GOOGLE_AUDIENCES:
            return "", f"Invalid JWT: Failed audience check. The right audience is {key.token_uri}"
        if not self._time_window_ok(claims):
            return "", _BAD_TIME
        return key.email, None

    def _time_window_ok(self, claims: dict) -> bool:
        issued, expires = claims.get("iat"), claims.get("exp")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (issued, expires)):
            return False
        now = self._clock.time()
        return (
            issued <= now + CLOCK_SKEW_SECONDS
            and expires > now - CLOCK_SKEW_SECONDS
            and 0 < expires - issued <= MAX_JWT_LIFETIME_SECONDS
        )


def token_fault_answer(status: int) -> Response | None:
    """What Google's token service answers when it fails with ``status`` (None: answer normally)."""
    if status == 400:  # intermittent, with a key that works a moment later
        return _oauth_error(400, "invalid_grant", _BAD_SIGNATURE)
    if status == 500:
        return Response.json(500, {"error": "internal_failure"})
    if status == 502:
        return errors.html_bad_gateway()
    return None


def _scopes_asked(assertion: str) -> frozenset[str]:
    """The ``scope`` claim of an assertion already verified (space-separated, as google-auth writes it)."""
    claims = json.loads(_b64decode(assertion.split(".")[1]))
    scope = claims.get("scope")
    return frozenset(scope.split()) if isinstance(scope, str) else frozenset()


def _signature_matches(public_key: rsa.RSAPublicKey, signed: bytes, signature: bytes) -> bool:
    try:
        public_key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _oauth_error(status: int, error: str, description: str) -> Response:
    """Google's OAuth endpoint answers errors flat, not in the APIs' ``{"error": {...}}`` shape."""
    return Response.json(status, {"error": error, "error_description": description})
