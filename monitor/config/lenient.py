"""The config as the watchdog reads it: its few parts, leniently, whatever else is wrong in the file.

A typo anywhere in the config stops every run (exit 2, into a log file cron mails nothing about), so
the watchdog is what must tell people. It needs only ``[run] state_dir``, ``[telegram]``,
``[watchdog]`` and ``[state]``: :func:`load_for_watchdog` loads the whole config when it can, and otherwise
reads those tables on their own (the file's TOML if it parses, else each of the tables alone, else
line by line), keeps every key that is valid by itself and takes the default for the others. The full
load's errors come back with it (``broken``), for the watchdog to report. A config that loads is still
one the runs refuse when a credential file it names is missing or unusable (a key deleted, moved,
made unreadable): the watchdog learns that refusal too, from the same look at each key file the run
takes (``secrets.check_credentials``: JSON only, no Google library), which never quotes a key.

Raises ``ConfigError`` only when the watchdog itself cannot work: the file cannot be read at all, or
Telegram is half configured (a chat without a token, a token without a chat), which would leave the
watchdog's alerts nowhere.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .defaults import TOKEN_ENV, TOKEN_FILE_ENV
from .issues import ConfigError, ConfigIssue
from .loader import load_config
from .model import Config
from .positions import TomlPositions
from .reworded import key_path
from .secrets import check_credentials, with_token
from .sections import RunConfig, StateConfig, TelegramConfig, WatchdogConfig

WATCHDOG_TABLES: Mapping[str, type[BaseModel]] = {
    "run": RunConfig, "telegram": TelegramConfig, "watchdog": WatchdogConfig, "state": StateConfig,
}
_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)
_NEVER_READ = ("bot_token", "token", "credential_projects")  # secrets, and what the loader fills


@dataclass(frozen=True)
class WatchdogParts:
    """What the watchdog works with. ``broken``: the config's errors as a run meets them (None when a
    run would take it); ``broken_since``: when the file was last changed, the edit that broke it
    (None when the file itself loads and a key file it names is what the runs refuse)."""

    path: Path
    run: RunConfig
    telegram: TelegramConfig
    watchdog: WatchdogConfig
    state: StateConfig = StateConfig()
    broken: ConfigError | None = None
    broken_since: datetime | None = None


def load_for_watchdog(path: Path, environ: Mapping[str, str]) -> WatchdogParts:
    try:
        config = load_config(path, environ, require_secrets=False)
    except ConfigError as broken:
        try:
            text = path.read_text(encoding="utf-8")
            changed = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        except (OSError, UnicodeDecodeError):
            raise broken from None  # not even its own parts can be read: nothing to watch with
        parts = _lenient_parts(path, text, environ, broken, changed)
    else:
        parts = WatchdogParts(path, config.run, config.telegram, config.watchdog, config.state,
                              _refused_keys(config, path))
    _require_a_way_to_send(parts)
    return parts


def _refused_keys(config: Config, path: Path) -> ConfigError | None:
    """The refusal a run would give to the credential files of ``config`` (loaded without them), at
    their lines; None when it would take them."""
    issues: list[ConfigIssue] = []
    positions = TomlPositions(path.read_text(encoding="utf-8"))  # read a moment ago, by the load
    check_credentials(config.google, lambda loc, problem, fix: issues.append(
        ConfigIssue(positions.where(str(path), loc), key_path(loc), problem, fix)))
    return ConfigError(issues) if issues else None


def _lenient_parts(path: Path, text: str, environ: Mapping[str, str], broken: ConfigError,
                   changed: datetime) -> WatchdogParts:
    tables = _tables(text)
    context = {"base_dir": path.resolve().parent}
    read = {name: _valid_keys(model, tables.get(name), context) for name, model in WATCHDOG_TABLES.items()}
    telegram = with_token(read["telegram"], environ, False, lambda *_: None, [])
    return WatchdogParts(path, read["run"], telegram, read["watchdog"], read["state"], broken, changed)


def _tables(text: str) -> dict[str, Any]:
    """The tables as written: from the whole file when it parses, else from each table's own
    lines (a syntax error elsewhere must not hide them), else from each of its lines that parses."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        pass
    tables: dict[str, Any] = {}
    starts = [match.start() for match in _HEADER.finditer(text)] + [len(text)]
    for start, end in zip(starts, starts[1:], strict=False):
        chunk = text[start:end]
        header, _, body = chunk.partition("\n")
        name = header.strip().strip("[]").strip()
        if name not in WATCHDOG_TABLES or header.strip().startswith("[["):
            continue
        try:
            tables[name] = tomllib.loads(body)
        except tomllib.TOMLDecodeError:
            tables[name] = _line_by_line(body)
    return tables


def _line_by_line(body: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for line in body.splitlines():
        try:
            values.update(tomllib.loads(line))
        except tomllib.TOMLDecodeError:
            continue
    return values


def _valid_keys(model: type[BaseModel], raw: Any, context: dict[str, Any]) -> Any:
    """``model`` from the keys of ``raw`` that are valid on their own; the defaults for the rest
    (and for all of them when only together they are wrong: a cap below its base, say)."""
    raw = raw if isinstance(raw, dict) else {}
    try:  # keys only valid together ([state] backend = "redis" with its url) are kept together
        return model.model_validate({k: v for k, v in raw.items() if k not in _NEVER_READ}, context=context)
    except ValidationError:
        pass
    kept = {}
    for key, value in raw.items():
        if key in _NEVER_READ:
            continue
        try:
            model.model_validate({key: value}, context=context)
        except ValidationError:
            continue
        kept[key] = value
    try:
        return model.model_validate(kept, context=context)
    except ValidationError:
        return model.model_validate({}, context=context)


def _require_a_way_to_send(parts: WatchdogParts) -> None:
    """Sending is the watchdog's whole job: a chat without a token, or a token without a chat, is
    refused (at the chat's line) rather than alerts silently printed where no one reads them."""
    telegram = parts.telegram
    if bool(telegram.chat_id) == (telegram.bot_token is not None):
        return
    positions = TomlPositions(parts.path.read_text(encoding="utf-8"))  # read a moment ago
    where = positions.where(str(parts.path), ("telegram", "chat_id"))
    if telegram.chat_id:
        issue = ConfigIssue(where, "telegram.chat_id",
                            f"chat_id is set but neither {TOKEN_ENV} nor {TOKEN_FILE_ENV} gives a readable "
                            "token", "export one of them in cron's environment (cron does not read your "
                            "shell profile), or remove chat_id to have the watchdog print its messages")
    else:
        issue = ConfigIssue(where, "telegram.chat_id", f"{TOKEN_ENV} is set but there is no chat to send to",
                            'add chat_id = "-100..." under [telegram], or unset the token to have the '
                            "watchdog print its messages")
    raise ConfigError([issue])
