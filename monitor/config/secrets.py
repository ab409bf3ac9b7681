"""Secrets, which come only from the environment and from files: the bot token and the credentials.

Nothing here ever puts a secret's text into an issue: a token is never repeated, and of a credential
file only its path, its size, its JSON error position or the names of missing fields are shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from .defaults import TOKEN_ENV, TOKEN_FILE_ENV
from .issues import ConfigIssue, Loc
from .sections import GoogleConfig, TelegramConfig

_MAX_SECRET_FILE_BYTES = 1 << 20  # a service-account JSON is ~2.4 KB; anything huge is a wrong path

AddIssue = Callable[[Loc, str, str], None]  # (key path, problem, fix), located in the config file


def with_token(telegram: TelegramConfig, environ: Mapping[str, str], require_secrets: bool,
               add: AddIssue, issues: list[ConfigIssue]) -> TelegramConfig:
    """``telegram`` with the bot token from the environment, if any; reports a chat without a token
    and a token without a chat (environment problems go straight to ``issues``)."""
    # Read-only commands do not send: a broken token variable must not stop them.
    token = read_token(environ, issues if require_secrets else [])
    if require_secrets and token and not telegram.chat_id:
        add(("telegram", "chat_id"), f"{TOKEN_ENV} is set but there is no chat to send to",
            'add chat_id = "-100..." under [telegram], or unset the token to print messages')
    if require_secrets and telegram.chat_id and not token:
        add(("telegram", "chat_id"),
            f"chat_id is set but neither {TOKEN_ENV} nor {TOKEN_FILE_ENV} is set",
            f"export {TOKEN_ENV} (cron does not read your shell profile), or remove "
            "chat_id to have messages printed instead")
    if token is None:
        return telegram
    return telegram.model_copy(update={"bot_token": SecretStr(token)})


def read_token(environ: Mapping[str, str], issues: list[ConfigIssue]) -> str | None:
    """The bot token from the environment; problems are reported without the token's text."""
    direct = environ.get(TOKEN_ENV, "").strip()
    file_name = environ.get(TOKEN_FILE_ENV, "").strip()
    if direct and file_name:
        issues.append(ConfigIssue("environment", TOKEN_FILE_ENV,
                                  f"both {TOKEN_ENV} and {TOKEN_FILE_ENV} are set",
                                  "unset one of them"))
        return None
    if direct:
        return direct
    if not file_name:
        return None
    try:
        with open(file_name, encoding="utf-8") as handle:
            token = handle.read(_MAX_SECRET_FILE_BYTES).strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        issues.append(ConfigIssue("environment", TOKEN_FILE_ENV,
                                  f"cannot read the token file {file_name!r}: {reason}",
                                  "point it at a readable file holding only the bot token"))
        return None
    if not token or any(ch.isspace() for ch in token):
        issues.append(ConfigIssue("environment", TOKEN_FILE_ENV,
                                  f"the token file {file_name!r} does not hold one token",
                                  "the file must contain only the token from @BotFather"))
        return None
    return token


_SA_FIELDS = ("client_email", "private_key", "token_uri")
_SA_FIX = ("download a JSON key of a service account: Google Cloud console > IAM & Admin > "
           "Service accounts > Keys > Add key > JSON")
# A user-managed service account's address names the project that owns it (Google's IAM reference:
# "IAM uses these values", the account's name and its project's id, "to create an email address").
_PROJECT_IN_EMAIL = re.compile(r"[^@]+@([a-z][a-z0-9-]{4,28}[a-z0-9])\.iam\.gserviceaccount\.com")


def _read_key(path: Path) -> tuple[dict | None, tuple[str, str] | None]:
    """(the key's JSON, None) for a usable key; (None, (problem, fix)) otherwise: what is wrong with
    it, never quoting its contents."""
    shown = str(path)
    try:
        if path.stat().st_size > _MAX_SECRET_FILE_BYTES:
            return None, (f"{shown} is too large to be a service-account key", _SA_FIX)
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, (f"credentials file {shown} not found",
                      "check the path: relative paths are resolved from the config file's folder")
    except IsADirectoryError:
        return None, (f"credentials path {shown} is a folder", "point it at the JSON key file itself")
    except PermissionError:
        return None, (f"credentials file {shown} is not readable by this user",
                      "let the user that runs cron read it (chmod 600, owned by that user)")
    except (OSError, UnicodeDecodeError) as exc:
        return None, (f"credentials file {shown} is unreadable ({type(exc).__name__})", _SA_FIX)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # exc.msg and the position only; the document itself may hold key material.
        return None, (f"{shown} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                      _SA_FIX)
    if not isinstance(data, dict) or data.get("type") != "service_account":
        kind = data.get("type") if isinstance(data, dict) else None
        what = f"a {kind!r} credential" if isinstance(kind, str) else "not a service-account key"
        return None, (f"{shown} is {what}, not a service-account key", _SA_FIX)
    missing = [f for f in _SA_FIELDS if not isinstance(data.get(f), str) or not data.get(f)]
    if missing:
        return None, (f"{shown} lacks {', '.join(missing)}", _SA_FIX)
    if "PRIVATE KEY" not in data["private_key"]:
        return None, (f"{shown} has a private_key that is not a PEM key", _SA_FIX)
    if "project_id" in data and not (isinstance(data["project_id"], str) and data["project_id"].strip()):
        return None, (f"{shown} has a project_id that is not a project's id", _SA_FIX)
    return data, None


def project_of_key(key: Mapping[str, Any]) -> str | None:
    """The Google Cloud project a usable key belongs to: its ``project_id``; for an older key
    without one, the project its ``client_email`` names; None when neither says."""
    if isinstance(key.get("project_id"), str):
        return key["project_id"].strip()
    match = _PROJECT_IN_EMAIL.fullmatch(key["client_email"])
    return match.group(1) if match else None


def check_credentials(google: GoogleConfig, add: AddIssue) -> dict[Path, str | None]:
    """Reports a missing, unusable or repeated service-account file, each at its list element;
    returns the project of each usable one (``project_of_key``)."""
    if not google.credentials:
        add(("google", "credentials"), "no service-account credentials configured",
            'add credentials = ["secrets/sa-1.json"] under [google] (paths relative to '
            "the config file)")
    seen: dict[str, int] = {}
    projects: dict[Path, str | None] = {}
    for index, path in enumerate(google.credentials):
        loc: Loc = ("google", "credentials", index)
        key, problem = _read_key(path)
        if key is None:
            add(loc, *problem)
            continue
        email = key["client_email"]
        if email in seen:
            add(loc, f"{path.name} is the same service account as credentials[{seen[email]}]",
                "each credential must be a different service account: quotas are per "
                "account, so a duplicate would break the pacing arithmetic")
        seen.setdefault(email, index)
        projects[path] = project_of_key(key)
    return projects
