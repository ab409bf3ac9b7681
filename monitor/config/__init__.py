"""The configuration: one TOML file plus the environment -> one frozen, validated ``Config``.

Contract: ``load_config(path, environ)`` returns a ``Config`` or raises ``ConfigError`` listing every
problem found (up to ``MAX_REPORTED_ISSUES``), each naming where (``file:line``), the key path
(``profiles.stock.checks[2].range``), what is wrong and how to fix it. Loading reads the config file,
the optional sheets CSV, the credential files and the token file; it never touches the network or the
state. Secrets come only from the environment and never appear in ``repr(config)`` or in errors.

Every default lives in ``DEFAULTS`` with the reason for its value; docs/configuration.md mirrors it.
"""

from __future__ import annotations

import bisect
import csv
import difflib
import hashlib
import io
import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import time, timedelta
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from monitor.checks import CHECK_KINDS, Check, ranges_of
from monitor.core.durations import format_duration, parse_positive_duration
from monitor.core.invalid import InvalidValue

DEFAULT_CONFIG_NAME = "monitor.toml"
CONFIG_ENV = "SHEET_MONITOR_CONFIG"
TOKEN_ENV = "TELEGRAM_BOT_TOKEN"
TOKEN_FILE_ENV = "TELEGRAM_BOT_TOKEN_FILE"
MAX_REPORTED_ISSUES = 30  # enough to fix a batch at once, few enough to read in a terminal
CSV_TAG_SEPARATOR = ";"  # ',' separates CSV columns; ';' is what spreadsheet exports use in a cell
_MAX_SECRET_FILE_BYTES = 1 << 20  # a service-account JSON is ~2.4 KB; anything huge is a wrong path

# --------------------------------------------------------------------------------------------------
# Defaults: one place, one reason each.


@dataclass(frozen=True)
class Default:
    value: Any
    reason: str


DEFAULTS: Mapping[str, Default] = {
    "run.budget": Default(
        "6m", "Apps Script's execution limit, which the original design was sized for; check-config "
        "warns when it is not shorter than round_interval"),
    "run.round_interval": Default("5m", "the cron interval: a new round at most every cron tick"),
    "run.state_dir": Default("state", "the state folder next to the config, as shipped in the repo"),
    "google.read_requests_per_minute": Default(
        60, "Google's default per-user read quota for the Sheets API"),
    "google.project_read_requests_per_minute": Default(
        300, "Google's default per-project read quota for the Sheets API"),
    "google.request_timeout": Default(
        "30s", "long enough for a large batchGet, short enough that a hang costs little budget"),
    "google.api_endpoint": Default(None, "talk to Google itself; set it for the sandbox"),
    "breaker.failure_threshold": Default(3, "three transient failures in a row is not bad luck"),
    "breaker.cooldown": Default("15m", "three cron ticks: long enough for Google to recover"),
    "breaker.max_cooldown": Default(
        "2h", "the cap for a cooldown that doubles on each re-open: a fixed spreadsheet is noticed "
        "within two hours"),
    "telegram.chat_id": Default(None, "no Telegram: messages are printed to stdout"),
    "telegram.message_thread_id": Default(None, "post to the chat itself, not a forum topic"),
    "telegram.api_base": Default("https://api.telegram.org", "Telegram's public Bot API"),
    "alerts.summary": Default("on_change", "a summary only after a round that changed something"),
    "alerts.digest_at": Default("09:00", "the start of a working day"),
    "alerts.timezone": Default("UTC", "stored times are UTC; set your team's zone for the digest"),
    "alerts.reminder_every": Default("4h", "about twice per working day for what is still failing"),
    "watchdog.max_silence": Default("15m", "three missed 5-minute cron ticks"),
    "watchdog.reminder_every": Default("4h", "an outage is re-announced twice per working day"),
    "watchdog.heartbeat_url": Default(None, "no external dead-man's switch"),
    "watchdog.stuck_grace": Default(
        "2m", "a run still marked started after budget + this is stuck, not slow"),
    "watchdog.failed_runs": Default(3, "three failed runs in a row is an outage, one is noise"),
}


def _default(key: str) -> Any:
    entry = DEFAULTS[key]
    return Field(default=entry.value, description=entry.reason)


# --------------------------------------------------------------------------------------------------
# Errors


@dataclass(frozen=True)
class ConfigIssue:
    """One problem: ``where`` is "file:line" (or "file", "environment"), ``key`` the key path."""

    where: str
    key: str
    problem: str
    fix: str

    def __str__(self) -> str:
        head = f"{self.where}: {self.key}: {self.problem}" if self.key else f"{self.where}: {self.problem}"
        return f"{head}\n  fix: {self.fix}"


class ConfigError(Exception):
    """The configuration cannot be used; ``issues`` holds every problem found, str() reports them."""

    def __init__(self, issues: Sequence[ConfigIssue]) -> None:
        self.issues = tuple(issues)
        super().__init__(_render(self.issues))


def _render(issues: Sequence[ConfigIssue]) -> str:
    shown = issues[:MAX_REPORTED_ISSUES]
    count = len(issues)
    lines = [f"configuration error{'s' if count != 1 else ''} ({count}):"]
    lines += [str(issue) for issue in shown]
    if count > len(shown):
        lines.append(f"... and {count - len(shown)} more (fix these and run check-config again)")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Field types


Duration = Annotated[
    timedelta, PlainValidator(parse_positive_duration), PlainSerializer(format_duration, return_type=str)
]


def _http_url(value: object) -> str:
    text = value.strip().rstrip("/") if isinstance(value, str) else ""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidValue(f"{value!r} is not an http(s) URL",
                       'write a full URL, e.g. "https://example.org" or "http://127.0.0.1:8931"')
    return text


HttpUrl = Annotated[str, PlainValidator(_http_url)]


def _digest_time(value: object) -> time | None:
    if isinstance(value, time):
        return value.replace(second=0, microsecond=0)
    match = re.fullmatch(r"\s*([01]?\d|2[0-3]):([0-5]\d)\s*", value) if isinstance(value, str) else None
    if match:
        return time(int(match.group(1)), int(match.group(2)))
    if isinstance(value, str) and value.strip().lower() == "off":
        return None
    raise InvalidValue(f"bad time of day {value!r}", 'write "HH:MM" in 24-hour time, e.g. "09:00", '
                   'or "off" for no daily digest')


def _timezone(value: object) -> str:
    try:
        ZoneInfo(value)  # type: ignore[arg-type]
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidValue(f"unknown time zone {value!r}",
                       'use an IANA zone name such as "Europe/Moscow", "America/New_York" or "UTC"'
                       ) from None
    return value  # type: ignore[return-value]


_TOKEN_LIKE = re.compile(r"\d+:[A-Za-z0-9_-]{20,}")


def _chat_id(value: object) -> str:
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if re.fullmatch(r"-?\d+|@[A-Za-z][A-Za-z0-9_]{3,}", text):
        return text
    fix = 'use the numeric chat id, e.g. "-1001234567890", or a channel name like "@my_channel"'
    if _TOKEN_LIKE.search(text):  # a pasted bot token: say so without repeating it
        raise InvalidValue("chat_id holds what looks like the bot token", f"{fix}; the token belongs "
                       f"in {TOKEN_ENV} (and, having been in a file, should be revoked)")
    raise InvalidValue(f"bad chat_id {value!r}", fix)


def _api_base(value: object) -> str:
    if isinstance(value, str) and _TOKEN_LIKE.search(value):
        raise InvalidValue("api_base contains what looks like the bot token",
                       f"write only the server, e.g. \"https://api.telegram.org\"; the token belongs "
                       f"in {TOKEN_ENV}")
    return _http_url(value)


# --------------------------------------------------------------------------------------------------
# Sections


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


def _relative_to_config(value: str, info: ValidationInfo) -> Path:
    base = (info.context or {}).get("base_dir", Path.cwd())
    return (Path(base) / Path(value).expanduser()).resolve()


class RunConfig(_Section):
    budget: Duration = _default("run.budget")
    round_interval: Duration = _default("run.round_interval")
    state_dir: Path = _default("run.state_dir")

    @field_validator("state_dir", mode="before")
    @classmethod
    def _resolve_state_dir(cls, value: object, info: ValidationInfo) -> Path:
        if not isinstance(value, str) or not value.strip():
            raise InvalidValue(f"expected a folder path, got {value!r}", 'write e.g. state_dir = "state"')
        return _relative_to_config(value, info)


class GoogleConfig(_Section):
    credentials: tuple[Path, ...] = Field(
        default=(), description="service-account JSON files; reads are spread across them")
    read_requests_per_minute: int = Field(
        default=DEFAULTS["google.read_requests_per_minute"].value, gt=0)
    project_read_requests_per_minute: int = Field(
        default=DEFAULTS["google.project_read_requests_per_minute"].value, gt=0)
    request_timeout: Duration = _default("google.request_timeout")
    api_endpoint: HttpUrl | None = _default("google.api_endpoint")

    @field_validator("credentials", mode="before")
    @classmethod
    def _resolve_credentials(cls, value: object, info: ValidationInfo) -> tuple[Path, ...]:
        if isinstance(value, str):
            value = [value]
        # A tuple is the field's own default (no [google] table): validated too, it must pass here
        # so that the "at least one credential" check can say what is really missing.
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
            raise InvalidValue("credentials must be a list of file paths",
                           'write credentials = ["secrets/sa-1.json", "secrets/sa-2.json"]')
        return tuple(_relative_to_config(v, info) for v in value)

    @property
    def reads_per_minute(self) -> int:
        """Reads per minute all credentials together may make: the slower of the two quotas."""
        return min(len(self.credentials) * self.read_requests_per_minute,
                   self.project_read_requests_per_minute)


class BreakerConfig(_Section):
    failure_threshold: int = Field(default=DEFAULTS["breaker.failure_threshold"].value, gt=0)
    cooldown: Duration = _default("breaker.cooldown")
    max_cooldown: Duration = _default("breaker.max_cooldown")

    @model_validator(mode="after")
    def _cap_not_below_cooldown(self) -> BreakerConfig:
        if self.max_cooldown < self.cooldown:
            raise InvalidValue(
                f"max_cooldown ({format_duration(self.max_cooldown)}) is shorter than cooldown "
                f"({format_duration(self.cooldown)})", "make max_cooldown at least cooldown")
        return self


class TelegramConfig(_Section):
    """``enabled`` when both a chat and a token are known; otherwise messages are printed."""

    chat_id: Annotated[str, PlainValidator(_chat_id)] | None = _default("telegram.chat_id")
    message_thread_id: int | None = Field(default=None, gt=0)
    api_base: Annotated[str, PlainValidator(_api_base)] = _default("telegram.api_base")
    # From the environment only (never the TOML); SecretStr and repr=False keep it out of reprs.
    bot_token: SecretStr | None = Field(default=None, repr=False, exclude=True)

    @property
    def enabled(self) -> bool:
        return bool(self.chat_id and self.bot_token)


class AlertsConfig(_Section):
    summary: Literal["on_change", "every_round"] = _default("alerts.summary")
    digest_at: Annotated[
        time | None,
        PlainValidator(_digest_time),
        PlainSerializer(lambda t: t.strftime("%H:%M") if t else "off", return_type=str),
    ] = _default("alerts.digest_at")
    timezone: Annotated[str, PlainValidator(_timezone)] = _default("alerts.timezone")
    reminder_every: Duration = _default("alerts.reminder_every")

    @property
    def tzinfo(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


class WatchdogConfig(_Section):
    max_silence: Duration = _default("watchdog.max_silence")
    reminder_every: Duration = _default("watchdog.reminder_every")
    heartbeat_url: HttpUrl | None = _default("watchdog.heartbeat_url")
    stuck_grace: Duration = _default("watchdog.stuck_grace")
    failed_runs: int = Field(default=DEFAULTS["watchdog.failed_runs"].value, gt=0)


# --------------------------------------------------------------------------------------------------
# Checks


def checks_fingerprint(checks: Sequence[Check]) -> str:
    """A short stable hash of checks as configured: equal iff kinds, parameters and order are."""
    payload = json.dumps([c.model_dump(mode="json") for c in checks], sort_keys=True,
                         separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------------------------------
# Resolved objects


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    checks: tuple[Check, ...]


class Sheet(BaseModel):
    """One spreadsheet to monitor with its checks resolved (profile's first, then its own)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    profile: str | None
    tags: tuple[str, ...]
    checks: tuple[Check, ...]
    origin: str = Field(description='where it is configured, e.g. "monitor.toml:42", "sheets.csv:7"')
    fingerprint: str = Field(description="checks_fingerprint(checks): changes iff its checks change")

    @property
    def ranges(self) -> tuple[str, ...]:
        """Distinct ranges its checks read, in check order: what one batchGet must fetch."""
        return ranges_of(self.checks)

    @property
    def needs_modified_time(self) -> bool:
        """True if a freshness check asks for the file's modified time (one Drive request)."""
        return any(getattr(c, "source", None) == "modified_time" for c in self.checks)


class Config(BaseModel):
    """Everything a command needs, validated once. Paths are absolute; durations are timedeltas."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path
    run: RunConfig
    google: GoogleConfig
    breaker: BreakerConfig
    telegram: TelegramConfig
    alerts: AlertsConfig
    watchdog: WatchdogConfig
    profiles: tuple[Profile, ...]
    sheets: tuple[Sheet, ...]
    fingerprint: str = Field(description="changes iff the set of spreadsheets or any check changes")
    warnings: tuple[str, ...] = Field(description="advice for check-config; not errors")

    @cached_property
    def sheets_by_id(self) -> Mapping[str, Sheet]:
        return {sheet.id: sheet for sheet in self.sheets}


# --------------------------------------------------------------------------------------------------
# Entry points


def resolve_config_path(option: str | os.PathLike[str] | None,
                        environ: Mapping[str, str] | None = None) -> Path:
    """``--config`` if given, else ``$SHEET_MONITOR_CONFIG``, else ``./monitor.toml``."""
    environ = os.environ if environ is None else environ
    if option:
        return Path(option)
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV])
    return Path(DEFAULT_CONFIG_NAME)


def load_config(path: str | os.PathLike[str], environ: Mapping[str, str] | None = None, *,
                require_secrets: bool = True) -> Config:
    """Read, validate and resolve the configuration; raise ``ConfigError`` listing every problem.

    ``require_secrets=False`` is for read-only commands (status, dlq, breakers): credential files are
    not opened and a missing Telegram token is not an error (the token is still read when present).
    """
    environ = os.environ if environ is None else environ
    path = Path(path)
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([ConfigIssue(shown, "", "config file not found", (
            f"pass --config PATH, set {CONFIG_ENV}, or create {DEFAULT_CONFIG_NAME} in the current "
            "folder (see docs/configuration.md)"))]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([ConfigIssue(shown, "", f"cannot read the config file: {exc}",
                                       "check the path, its permissions and that it is UTF-8 text")
                           ]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_syntax_issue(shown, exc)]) from None
    return _Builder(path, shown, text, environ, require_secrets).build(data)


def _syntax_issue(shown: str, exc: tomllib.TOMLDecodeError) -> ConfigIssue:
    message = str(exc)
    match = re.search(r"\s*\(at line (\d+), column (\d+)\)", message)
    where = f"{shown}:{match.group(1)}:{match.group(2)}" if match else shown
    problem = message[: match.start()] if match else message
    return ConfigIssue(where, "", f"TOML syntax error: {problem}",
                       "correct the syntax at that position: strings need quotes, tables look like "
                       "[name], lists like [\"a\", \"b\"]; each key may appear once per table")


# --------------------------------------------------------------------------------------------------
# The builder: validates section by section so that every problem is found in one pass.

_SECTIONS: Mapping[str, type[_Section]] = {
    "run": RunConfig,
    "google": GoogleConfig,
    "breaker": BreakerConfig,
    "telegram": TelegramConfig,
    "alerts": AlertsConfig,
    "watchdog": WatchdogConfig,
}
_TOP_KEYS = (*_SECTIONS, "profiles", "sheets", "sheets_file")
_SECRET_KEYS = ("bot_token", "token")
_CSV_COLUMNS = ("id", "name", "profile", "tags")
_ID_RE = re.compile(r"[A-Za-z0-9_-]+")
_URL_ID_RE = re.compile(r"/spreadsheets/d/([A-Za-z0-9_-]+)")

Loc = tuple[str | int, ...]


@dataclass
class _Entry:
    """A sheet as written, before profile expansion; ``locate(key)`` -> (where, key path)."""

    id: str
    name: str | None
    profile: str | None
    tags: tuple[str, ...]
    checks: tuple[Check, ...]
    locate: Callable[[str], tuple[str, str]]


class _Builder:
    def __init__(self, path: Path, shown: str, text: str, environ: Mapping[str, str],
                 require_secrets: bool) -> None:
        self.path = path
        self.shown = shown
        self.base_dir = path.resolve().parent
        self.positions = _TomlPositions(text)
        self.environ = environ
        self.require_secrets = require_secrets
        self.issues: list[ConfigIssue] = []

    # -- issue helpers

    def add(self, loc: Loc, problem: str, fix: str) -> None:
        line = self.positions.line_of(loc)
        where = f"{self.shown}:{line}" if line else self.shown
        self.issues.append(ConfigIssue(where, key_path(loc), problem, fix))

    def where(self, loc: Loc) -> str:
        line = self.positions.line_of(loc)
        return f"{self.shown}:{line}" if line else self.shown

    def locator(self, loc: Loc) -> Callable[[str], tuple[str, str]]:
        return lambda key: (self.where((*loc, key)), key_path((*loc, key)))

    def validate(self, model: type[BaseModel], data: Any, loc: Loc) -> Any:
        """model.model_validate(data) or None, with every pydantic error turned into an issue."""
        try:
            return model.model_validate(data, context={"base_dir": self.base_dir})
        except ValidationError as exc:
            for error in exc.errors():
                self.add((*loc, *error["loc"]), *_explain(model, error))
            return None

    # -- the whole file

    def build(self, data: dict[str, Any]) -> Config:
        for key in data:
            if key not in _TOP_KEYS:
                self.add((key,), f"unknown top-level key or section {key!r}",
                         _choices_fix(key, _TOP_KEYS))
        sections = {name: self.section(name, data.get(name, {})) for name in _SECTIONS}
        profiles = self.profiles(data.get("profiles", {}))
        entries = self.toml_sheets(data.get("sheets", []))
        if "sheets_file" in data:
            entries += self.csv_sheets(data["sheets_file"])
        sheets = self.resolve(entries, profiles)
        if sections["telegram"] is not None:
            sections["telegram"] = self.telegram_token(sections["telegram"])
        if sections["google"] is not None and self.require_secrets:
            self.check_credentials(sections["google"])
        if self.issues:
            raise ConfigError(sorted(self.issues, key=_reading_order))
        return Config(
            path=self.path.resolve(),
            profiles=tuple(Profile(name=n, checks=c) for n, c in profiles.items() if c is not None),
            sheets=sheets,
            fingerprint=_config_fingerprint(sheets),
            warnings=_warnings(sections, sheets, tuple(profiles)),
            **sections,
        )

    def section(self, name: str, raw: Any) -> Any:
        if not isinstance(raw, dict):
            self.add((name,), f"{name} must be a table", f"write it as a [{name}] section")
            return None
        if name == "telegram":
            for secret in _SECRET_KEYS:
                if secret in raw:
                    self.add((name, secret), "secrets never live in the config file",
                             f"remove {secret} and export {TOKEN_ENV} (or {TOKEN_FILE_ENV} with the "
                             "path of a file holding it) in the environment of cron and your shell")
            raw = {k: v for k, v in raw.items() if k not in _SECRET_KEYS}
        return self.validate(_SECTIONS[name], raw, (name,))

    # -- checks and profiles

    def checks(self, raw: Any, loc: Loc) -> tuple[Check, ...] | None:
        if not isinstance(raw, list):
            self.add(loc, "checks must be a list of tables",
                     'write checks = [{ kind = "not_empty", range = "Tab!A2:A" }, ...]')
            return None
        result: list[Check] = []
        ok = True
        for index, item in enumerate(raw):
            check = self.check(item, (*loc, index))
            ok = ok and check is not None
            if check is not None:
                result.append(check)
        return tuple(result) if ok else None

    def check(self, raw: Any, loc: Loc) -> Check | None:
        if not isinstance(raw, dict):
            self.add(loc, f"a check must be a table, got {type(raw).__name__}",
                     'write { kind = "not_empty", range = "Tab!A2:A" }')
            return None
        kind = raw.get("kind")
        if kind is None:
            self.add(loc, "check has no kind", f"add kind = one of: {', '.join(CHECK_KINDS)}")
            return None
        model = CHECK_KINDS.get(kind) if isinstance(kind, str) else None
        if model is None:
            self.add((*loc, "kind"), f"unknown check kind {kind!r}",
                     _choices_fix(str(kind), tuple(CHECK_KINDS), what="kind"))
            return None
        return self.validate(model, raw, loc)

    def profiles(self, raw: Any) -> dict[str, tuple[Check, ...] | None]:
        """name -> checks; None marks a profile that exists but has errors (already reported)."""
        if not isinstance(raw, dict):
            self.add(("profiles",), "profiles must be tables", "write [profiles.NAME] sections")
            return {}
        result: dict[str, tuple[Check, ...] | None] = {}
        for name, table in raw.items():
            loc: Loc = ("profiles", name)
            if not isinstance(table, dict):
                self.add(loc, "a profile must be a table",
                         f"write [profiles.{name}] with checks = [...]")
                result[name] = None
                continue
            for key in table:
                if key != "checks":
                    self.add((*loc, key), f"unknown key {key!r} in a profile",
                             "a profile holds only checks = [...]")
            if "checks" not in table:
                self.add(loc, "profile has no checks", "add checks = [{ kind = ..., range = ... }]")
            result[name] = self.checks(table.get("checks", []), (*loc, "checks"))
        return result

    # -- sheets

    def toml_sheets(self, raw: Any) -> list[_Entry]:
        if not isinstance(raw, list):
            self.add(("sheets",), "sheets must be an array of tables",
                     "write each spreadsheet as a [[sheets]] section")
            return []
        entries = []
        for index, table in enumerate(raw):
            loc: Loc = ("sheets", index)
            if not isinstance(table, dict):
                self.add(loc, "a sheet must be a table", "write it as a [[sheets]] section")
                continue
            if "sheets_file" in table:
                self.add((*loc, "sheets_file"), "sheets_file ended up inside a [[sheets]] entry",
                         "move sheets_file = \"...\" to the top of the file, before any [section]")
                table = {k: v for k, v in table.items() if k != "sheets_file"}
            entry = self.validate(_SheetEntry, table, loc)
            checks = self.checks(table["checks"], (*loc, "checks")) if "checks" in table else ()
            if entry is not None and checks is not None:
                entries.append(_Entry(entry.id, entry.name, entry.profile, entry.tags, checks,
                                      self.locator(loc)))
        return entries

    def csv_sheets(self, raw: Any) -> list[_Entry]:
        loc: Loc = ("sheets_file",)
        if not isinstance(raw, str) or not raw.strip():
            self.add(loc, "sheets_file must be a file path", 'write sheets_file = "sheets.csv"')
            return []
        csv_path = self.base_dir / raw
        shown = os.path.normpath(os.path.join(os.path.dirname(self.shown), raw))
        try:
            text = csv_path.read_text(encoding="utf-8-sig")  # Excel writes a BOM
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not found" if isinstance(exc, FileNotFoundError) else f"unreadable ({exc})"
            self.add(loc, f"sheets file {str(csv_path)!r} is {reason}",
                     "check the path (relative to the config file's folder) and that it is UTF-8")
            return []
        return _CsvSheets(self, shown).parse(text)

    def resolve(self, entries: list[_Entry], profiles: Mapping[str, Any]) -> tuple[Sheet, ...]:
        sheets: list[Sheet] = []
        first_seen: dict[str, _Entry] = {}
        for entry in entries:
            where, key = entry.locate("id")
            previous = first_seen.setdefault(entry.id, entry)
            if previous is not entry:
                first_where, first_key = previous.locate("id")
                self.issues.append(ConfigIssue(
                    where, key,
                    f"spreadsheet id {entry.id!r} is listed twice; first at {first_where}"
                    f" ({first_key})",
                    "remove one of the two entries (give a spreadsheet several checks through a "
                    "profile or inline checks)"))
                continue
            checks: tuple[Check, ...] = ()
            if entry.profile is not None:
                if entry.profile not in profiles:
                    self.issues.append(ConfigIssue(
                        *entry.locate("profile"),
                        f"unknown profile {entry.profile!r}",
                        _choices_fix(entry.profile, tuple(profiles), what="profile") +
                        f" (or define [profiles.{entry.profile}])"))
                    continue
                if profiles[entry.profile] is None:
                    continue  # the profile's own errors are reported already
                checks = profiles[entry.profile]
            checks = checks + entry.checks
            if not checks:
                self.issues.append(ConfigIssue(
                    where, key, f"spreadsheet {entry.id!r} has no checks",
                    'add profile = "NAME" or checks = [{ kind = ..., range = ... }]'))
                continue
            duplicate = _first_duplicate([c.name for c in checks])
            if duplicate:
                self.issues.append(ConfigIssue(
                    where, key,
                    f"two checks of spreadsheet {entry.id!r} are both named {duplicate!r}",
                    "give each check a distinct name = \"...\" (results are kept per name)"))
                continue
            sheets.append(Sheet(id=entry.id, name=entry.name or entry.id, profile=entry.profile,
                                tags=entry.tags, checks=checks, origin=where,
                                fingerprint=checks_fingerprint(checks)))
        return tuple(sheets)

    # -- secrets

    def telegram_token(self, telegram: TelegramConfig) -> TelegramConfig:
        # Read-only commands do not send: a broken token variable must not stop them.
        token = _read_token(self.environ, self.issues if self.require_secrets else [])
        if self.require_secrets and token and not telegram.chat_id:
            self.add(("telegram", "chat_id"), f"{TOKEN_ENV} is set but there is no chat to send to",
                     'add chat_id = "-100..." under [telegram], or unset the token to print messages')
        if self.require_secrets and telegram.chat_id and not token:
            self.add(("telegram", "chat_id"),
                     f"chat_id is set but neither {TOKEN_ENV} nor {TOKEN_FILE_ENV} is set",
                     f"export {TOKEN_ENV} (cron does not read your shell profile), or remove "
                     "chat_id to have messages printed instead")
        if token is None:
            return telegram
        return telegram.model_copy(update={"bot_token": SecretStr(token)})

    def check_credentials(self, google: GoogleConfig) -> None:
        if not google.credentials:
            self.add(("google", "credentials"), "no service-account credentials configured",
                     'add credentials = ["secrets/sa-1.json"] under [google] (paths relative to '
                     "the config file)")
        seen: dict[str, int] = {}
        for index, path in enumerate(google.credentials):
            loc: Loc = ("google", "credentials", index)
            problem = _credential_problem(path)
            if problem:
                self.add(loc, problem[0], problem[1])
                continue
            email = json.loads(path.read_text(encoding="utf-8"))["client_email"]
            if email in seen:
                self.add(loc, f"{path.name} is the same service account as credentials[{seen[email]}]",
                         "each credential must be a different service account: quotas are per "
                         "account, so a duplicate would break the pacing arithmetic")
            seen.setdefault(email, index)


class _SheetEntry(BaseModel):
    """A [[sheets]] table as written (its checks are validated separately, one by one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, PlainValidator(lambda v: _spreadsheet_id(v))]
    name: str | None = None
    profile: str | None = None
    tags: tuple[str, ...] = ()
    checks: list[Any] | None = None  # validated one by one by the builder, for precise locations

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: object) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
            raise InvalidValue("tags must be a list of non-empty strings", 'write tags = ["moscow"]')
        return tuple(t.strip() for t in value)


class _CsvSheets:
    """sheets.csv: a header row naming columns (id, profile required; name, tags optional)."""

    def __init__(self, builder: _Builder, shown: str) -> None:
        self.builder = builder
        self.shown = shown

    def issue(self, line: int, column: str, problem: str, fix: str) -> None:
        self.builder.issues.append(ConfigIssue(f"{self.shown}:{line}", column, problem, fix))

    def parse(self, text: str) -> list[_Entry]:
        reader = csv.reader(io.StringIO(text))
        header: list[str] | None = None
        entries: list[_Entry] = []
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row) or row[0].lstrip().startswith("#"):
                continue  # blank lines and comment lines are allowed
            if header is None:
                header = [cell.strip().lower() for cell in row]
                if not self.header_ok(header, line):
                    return []
                continue
            entry = self.row(dict(zip(header, row, strict=False)), len(row) > len(header), line)
            if entry is not None:
                entries.append(entry)
        return entries

    def header_ok(self, header: list[str], line: int) -> bool:
        ok = True
        for column in header:
            if column not in _CSV_COLUMNS:
                self.issue(line, column, f"unknown column {column!r}",
                           _choices_fix(column, _CSV_COLUMNS, what="column"))
                ok = False
        for column in ("id", "profile"):
            if column not in header:
                self.issue(line, column, f"the header row has no {column!r} column",
                           "start the file with the header row: id,name,profile,tags")
                ok = False
        return ok

    def row(self, cells: dict[str, str], too_long: bool, line: int) -> _Entry | None:
        if too_long:
            self.issue(line, "", "more cells than header columns",
                       f"quote names that contain commas, and separate tags with "
                       f"'{CSV_TAG_SEPARATOR}'")
            return None
        try:
            spreadsheet_id = _spreadsheet_id(cells.get("id", "").strip())
        except InvalidValue as exc:
            self.issue(line, "id", exc.problem, exc.fix)
            return None
        profile = cells.get("profile", "").strip()
        if not profile:
            self.issue(line, "profile", "empty profile", "name the profile of checks to apply")
            return None
        tags = tuple(t.strip() for t in cells.get("tags", "").split(CSV_TAG_SEPARATOR) if t.strip())
        where = f"{self.shown}:{line}"
        return _Entry(spreadsheet_id, cells.get("name", "").strip() or None, profile, tags, (),
                      lambda column: (where, column))


# --------------------------------------------------------------------------------------------------
# Helpers


def key_path(loc: Loc) -> str:
    """('profiles', 'stock', 'checks', 2, 'range') -> "profiles.stock.checks[2].range"."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part)
            out += f".{text}" if out else text
    return out


def _reading_order(issue: ConfigIssue) -> tuple[bool, str, int]:
    """The config file's issues first, by line; then the CSV's; the environment's last."""
    file, _, line = issue.where.partition(":")
    number = line.split(":")[0]
    return issue.where == "environment", file, int(number) if number.isdigit() else 0


def _choices_fix(given: str, choices: Sequence[str], what: str = "key") -> str:
    if not choices:
        return f"no {what}s are defined yet"
    close = difflib.get_close_matches(given, choices, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{hint}allowed {what}s: {', '.join(choices)}"


def _first_duplicate(names: Sequence[str]) -> str | None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def _spreadsheet_id(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidValue(f"the id must be a quoted string, got {value!r}",
                       'write id = "..." with the id from the spreadsheet\'s URL')
    if not value.strip():
        raise InvalidValue("missing spreadsheet id",
                       "copy the id from the spreadsheet's URL: docs.google.com/spreadsheets/d/ID/")
    text = value.strip()
    if _ID_RE.fullmatch(text):
        return text
    match = _URL_ID_RE.search(text)
    if match:
        raise InvalidValue("this is a URL, not a spreadsheet id", f'write only the id: "{match.group(1)}"')
    raise InvalidValue(f"bad spreadsheet id {text!r}",
                   "an id has only letters, digits, '-' and '_': copy it from the spreadsheet's URL")


def _explain(model: type[BaseModel], error: Mapping[str, Any]) -> tuple[str, str]:
    """A pydantic error -> (problem, fix) worded for an admin editing TOML."""
    kind = error["type"]
    name = str(error["loc"][-1]) if error["loc"] else ""
    original = (error.get("ctx") or {}).get("error")
    if isinstance(original, InvalidValue):
        return original.problem, original.fix
    allowed = tuple(f.alias or n for n, f in model.model_fields.items() if n != "bot_token")
    if kind == "extra_forbidden":
        if name in _TOP_KEYS and len(error["loc"]) == 1:
            return (f"{name!r} ended up inside this section",
                    f"move {name} to the top of the file, before the first [section]")
        return f"unknown key {name!r}", _choices_fix(name, allowed)
    if kind == "missing":
        field = model.model_fields.get(name)
        hint = f" ({field.description})" if field is not None and field.description else ""
        return f"missing required key {name!r}", f"add {name} = ...{hint}"
    if kind == "literal_error":
        return (f"{error.get('input')!r} is not allowed",
                f"use one of: {error['ctx']['expected']}")
    value = error.get("input")
    return f"{error['msg'][0].lower()}{error['msg'][1:]} (got {value!r})", _type_fix(kind, error)


def _type_fix(kind: str, error: Mapping[str, Any]) -> str:
    ctx = error.get("ctx") or {}
    if kind in ("greater_than", "greater_than_equal"):
        least = ctx["gt"] + 1 if "gt" in ctx else ctx.get("ge")
        return f"write a whole number of at least {least}"
    if kind.startswith("int"):
        return "write a whole number without quotes, e.g. 60"
    if kind.startswith("string"):
        return 'write a string in double quotes, e.g. "Store 014"'
    if kind.startswith(("tuple", "list")):
        return 'write a list, e.g. ["a", "b"]'
    return "see docs/configuration.md for the accepted values"


def _read_token(environ: Mapping[str, str], issues: list[ConfigIssue]) -> str | None:
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


def _credential_problem(path: Path) -> tuple[str, str] | None:
    """What is wrong with a service-account file, never quoting its contents; None if usable."""
    shown = str(path)
    try:
        if path.stat().st_size > _MAX_SECRET_FILE_BYTES:
            return f"{shown} is too large to be a service-account key", _SA_FIX
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return (f"credentials file {shown} not found",
                "check the path: relative paths are resolved from the config file's folder")
    except IsADirectoryError:
        return f"credentials path {shown} is a folder", "point it at the JSON key file itself"
    except PermissionError:
        return (f"credentials file {shown} is not readable by this user",
                "let the user that runs cron read it (chmod 600, owned by that user)")
    except (OSError, UnicodeDecodeError) as exc:
        return f"credentials file {shown} is unreadable ({type(exc).__name__})", _SA_FIX
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # exc.msg and the position only; the document itself may hold key material.
        return (f"{shown} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                _SA_FIX)
    if not isinstance(data, dict) or data.get("type") != "service_account":
        kind = data.get("type") if isinstance(data, dict) else None
        what = f"a {kind!r} credential" if isinstance(kind, str) else "not a service-account key"
        return f"{shown} is {what}, not a service-account key", _SA_FIX
    missing = [f for f in _SA_FIELDS if not isinstance(data.get(f), str) or not data.get(f)]
    if missing:
        return f"{shown} lacks {', '.join(missing)}", _SA_FIX
    if "PRIVATE KEY" not in data["private_key"]:
        return f"{shown} has a private_key that is not a PEM key", _SA_FIX
    return None


def _config_fingerprint(sheets: Sequence[Sheet]) -> str:
    payload = "\n".join(f"{s.id}:{s.fingerprint}" for s in sorted(sheets, key=lambda s: s.id))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _warnings(sections: Mapping[str, Any], sheets: Sequence[Sheet],
              profiles: Sequence[str]) -> tuple[str, ...]:
    run: RunConfig = sections["run"]
    telegram: TelegramConfig = sections["telegram"]
    warnings = []
    if run.budget >= run.round_interval:
        suggestion = format_duration(max(run.round_interval - timedelta(seconds=30),
                                         run.round_interval / 2))
        warnings.append(
            f"run.budget ({format_duration(run.budget)}) is not shorter than run.round_interval "
            f"({format_duration(run.round_interval)}): a cron tick that finds a run still working "
            f"exits and its time is lost; set budget = \"{suggestion}\"")
    if not sheets:
        warnings.append("no spreadsheets are configured: add [[sheets]] or sheets_file")
    used = {sheet.profile for sheet in sheets}
    unused = [name for name in profiles if name not in used]
    if unused:
        warnings.append(f"profiles not used by any spreadsheet: {', '.join(unused)}")
    if not telegram.enabled:
        warnings.append("Telegram is not configured: messages will be printed to stdout")
    return tuple(warnings)


# --------------------------------------------------------------------------------------------------
# Where a key is written. tomllib gives no positions, so this scans the raw text: good enough to
# point an admin at the right line (table header, then key, then the N-th element of an array).

_HEADER_RE = re.compile(r"^[ \t]*(\[\[?)([^\[\]]+?)\]\]?[ \t]*(?:#.*)?$", re.MULTILINE)
_HEADER_PART_RE = re.compile(r"""\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)""")


class _TomlPositions:
    def __init__(self, text: str) -> None:
        self.text = text
        # (start offset of the header line, end offset, is array-of-tables, dotted name parts)
        self.headers: list[tuple[int, int, bool, tuple[str, ...]]] = []
        # Indexes precomputed so that locating each of 5,000 [[sheets]] stays linear overall.
        self.arrays: dict[tuple[str, ...], list[int]] = {}
        self.tables: dict[tuple[str, ...], int] = {}
        for match in _HEADER_RE.finditer(text):
            parts = tuple(a or b or c for a, b, c in _HEADER_PART_RE.findall(match.group(2)))
            is_array = match.group(1) == "[["
            if is_array:
                self.arrays.setdefault(parts, []).append(len(self.headers))
            else:
                self.tables.setdefault(parts, len(self.headers))
            self.headers.append((match.start(), match.end(), is_array, parts))
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset)

    def line_of(self, loc: Loc) -> int | None:
        """1-based line of the key at ``loc``, else of its table's header, else None."""
        region = self._region(loc)
        if region is None:
            return None
        start, end, rest, header_line = region
        if not rest or not isinstance(rest[0], str):
            return header_line
        pos = self._find_key(start, end, rest[0])
        if pos is None:
            return header_line
        if len(rest) > 1 and isinstance(rest[1], int):
            span = self._array_element(pos, end, rest[1])
            if span is None:
                return self.line(pos)
            if len(rest) > 2 and isinstance(rest[2], str):
                inner = self._find_key(span[0], span[1], rest[2], inline=True)
                if inner is not None:
                    return self.line(inner)
            return self.line(span[0])
        return self.line(pos)

    def _region(self, loc: Loc) -> tuple[int, int, Loc, int | None] | None:
        if len(loc) >= 2 and isinstance(loc[1], int) and isinstance(loc[0], str):
            arrays = self.arrays.get((loc[0],), [])
            if loc[1] < len(arrays):
                return self._header_region(arrays[loc[1]], loc[2:])
        for n in range(len(loc), 0, -1):  # the longest [a.b] header that loc starts with
            prefix = loc[:n]
            if all(isinstance(p, str) for p in prefix) and prefix in self.tables:
                return self._header_region(self.tables[prefix], loc[n:])  # type: ignore[index]
        end = self.headers[0][0] if self.headers else len(self.text)
        return 0, end, loc, None

    def _header_region(self, index: int, rest: Loc) -> tuple[int, int, Loc, int]:
        start, header_end, _, _ = self.headers[index]
        end = self.headers[index + 1][0] if index + 1 < len(self.headers) else len(self.text)
        return header_end, end, rest, self.line(start)

    def _find_key(self, start: int, end: int, key: str, inline: bool = False) -> int | None:
        name = rf"(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')"
        lead = r"(?:^|[{,])[ \t]*" if inline else r"^[ \t]*"
        pattern = re.compile(rf"{lead}({name})[ \t]*[=.]", re.MULTILINE)
        match = pattern.search(self.text, start, end)
        return match.start(1) if match else None

    def _array_element(self, key_pos: int, end: int, index: int) -> tuple[int, int] | None:
        """Offsets of the ``index``-th element of the array written after the key at key_pos."""
        text = self.text
        pos = text.find("=", key_pos, end)
        if pos < 0:
            return None
        pos += 1
        while pos < end and text[pos] in " \t":
            pos += 1
        if pos >= end or text[pos] != "[":
            return None
        depth, pos, count, element_start = 1, pos + 1, -1, None
        while pos < end:
            char = text[pos]
            if char == "#":
                newline = text.find("\n", pos, end)
                pos = end if newline < 0 else newline
                continue
            if depth == 1 and element_start is None and char not in " \t\r\n,]":
                count += 1
                element_start = pos
            if char in "\"'":
                pos = _skip_string(text, pos)
                continue
            if char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
            if depth == 0 or (depth == 1 and char == ","):
                if element_start is not None and count == index:
                    return element_start, pos
                if depth == 0:
                    return None
                element_start = None
            pos += 1
        return None


def _skip_string(text: str, pos: int) -> int:
    """Offset just past the TOML string starting at pos (basic, literal or multi-line)."""
    quote = text[pos]
    if text.startswith(quote * 3, pos):
        close = text.find(quote * 3, pos + 3)
        return len(text) if close < 0 else close + 3
    pos += 1
    while pos < len(text) and text[pos] not in (quote, "\n"):
        pos += 2 if quote == '"' and text[pos] == "\\" else 1
    return pos + 1
