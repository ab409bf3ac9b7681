"""A credential that cannot read at all, and what to do about it: its key does not load, or Google's
token service refuses the account or the key for good.

Google's token endpoint refuses a service account's signed request with an OAuth ``invalid_grant``
(docs/sandbox.md, Authentication): "Invalid grant: account not found" when the account no longer
exists, "Invalid JWT Signature." when the key is not (or no longer) one of the account's. The second
also comes now and then for a moment with a key that works again at once (docs/sandbox.md, Faults),
so it counts as the key's own problem only when it repeats with no token between. Other
``invalid_grant`` descriptions (a clock minutes off) are not the key's: they stay transient.
"""

from __future__ import annotations

import json
from pathlib import Path

import google.auth.exceptions

from monitor.core.errors import CredentialProblem

ACCOUNT_GONE = "account not found"
KEY_REFUSED = "Invalid JWT Signature."
# Refusals of the signature in a row (no token between) that make it the key's: the intermittent
# ones reported come once or twice, a deleted key every time.
SIGNATURE_REFUSALS_FOR_GOOD = 3
_CONSOLE = "Google Cloud console > IAM & Admin > Service accounts"


class CredentialUnusable(google.auth.exceptions.RefreshError):
    """No token can be had with this credential; ``problem`` says why and what to do."""

    def __init__(self, problem: CredentialProblem) -> None:
        super().__init__(problem.text())
        self.problem = problem


def email_in(path: str) -> str | None:
    """The ``client_email`` a key file names (the config checked its shape), None if unreadable."""
    try:
        email = json.loads(Path(path).read_text(encoding="utf-8")).get("client_email")
    except (OSError, ValueError, AttributeError):
        return None
    return email if isinstance(email, str) else None


def key_unloadable(path: str) -> CredentialProblem:
    """The key file's ``private_key`` is not a usable RSA key (damaged, cut, edited by hand)."""
    email = email_in(path)
    where = f"{_CONSOLE} > {email} > Keys" if email else f"{_CONSOLE} > the account > Keys"
    return CredentialProblem(
        credential=path, email=email,
        problem="its private_key does not load as an RSA private key (the PEM text is damaged or cut)",
        fix=f"add a new JSON key ({where} > Add key > JSON), replace the file with it (mode 0600), "
            "then sheet-monitor check-config")


def is_refusal(error: google.auth.exceptions.GoogleAuthError) -> bool:
    """True when Google's token service refused the credential (``invalid_grant``)."""
    return _text(error).startswith("invalid_grant")


def refused_for_now(error: google.auth.exceptions.GoogleAuthError) -> bool:
    """True when Google refused the key's signature: the key's problem if it repeats, never the
    spreadsheet's (a clock off by minutes is this machine's: not this)."""
    return is_refusal(error) and KEY_REFUSED in _text(error)


def refused_for_good(error: google.auth.exceptions.GoogleAuthError, refusals: int, path: str,
                     email: str | None) -> CredentialProblem | None:
    """The credential's own problem when Google's refusal (the ``refusals``-th in a row) says the
    account or the key is gone; None when it may pass (a first refusal of the signature, a clock)."""
    text = _text(error)
    account = email or "the account"
    if ACCOUNT_GONE in text:
        return CredentialProblem(
            credential=path, email=email, problem=f"Google does not know this service account ({text})",
            fix=f"the account was deleted (or its project): create one ({_CONSOLE} > Create), share the "
                "spreadsheets with it, download its JSON key and replace the file; or remove the file "
                "from [google] credentials")
    if KEY_REFUSED in text and refusals >= SIGNATURE_REFUSALS_FOR_GOOD:
        return CredentialProblem(
            credential=path, email=email,
            problem=f"Google refuses its key {refusals} times in a row ({text})",
            fix=f"the key was deleted or rotated: in {_CONSOLE} > {account} > Keys, if the key id "
                "(private_key_id in the file) is gone, add a new JSON key and replace the file (mode "
                "0600); if the account is disabled, enable it")
    return None


def _text(error: google.auth.exceptions.GoogleAuthError) -> str:
    text = error.args[0] if error.args and isinstance(error.args[0], str) else ""
    return text[:200]
