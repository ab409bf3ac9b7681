"""The config file's sections ([run], [google], [breaker], [telegram], [alerts], [watchdog], [state],
[metrics], [report]).

Each is a frozen model that forbids unknown keys and validates its defaults too, so a default is held
to the same rules as a written value. Their defaults and reasons are ``defaults.DEFAULTS``.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)

from monitor.core.durations import format_duration
from monitor.core.invalid_value import InvalidValue
from monitor.core.runners import is_runner_name

from .defaults import DEFAULTS, default
from .fields import (
    ApiBase,
    ChatId,
    DigestTime,
    Duration,
    DurationOrOff,
    HttpUrl,
    TimeZoneName,
    relative_to_config,
)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


# A run asking Drive's feed more often than this would do little else; Drive shows a Sheets edit
# minutes after it was made anyway (docs/operations.md), so the default asks every 20 s.
LEAST_CHANGE_POLL = timedelta(seconds=1)


class RunConfig(_Section):
    budget: Duration = default("run.budget")
    round_interval: Duration = default("run.round_interval")
    state_dir: Path = default("run.state_dir")
    change_detection: StrictBool = default("run.change_detection")
    change_poll: DurationOrOff = default("run.change_poll")
    max_age: Duration = default("run.max_age")
    suspects_after: Duration = default("run.suspects_after")

    @field_validator("change_poll")
    @classmethod
    def _change_poll_at_least(cls, value: timedelta | None) -> timedelta | None:
        if value is not None and value < LEAST_CHANGE_POLL:
            least = format_duration(LEAST_CHANGE_POLL)
            raise InvalidValue(f"{format_duration(value)} is shorter than {least}",
                               'write e.g. change_poll = "20s" (Drive shows an edit minutes late: asking '
                               'more often finds nothing sooner), or "off"')
        return value

    @field_validator("state_dir", mode="before", json_schema_input_type=str)
    @classmethod
    def _resolve_state_dir(cls, value: object, info: ValidationInfo) -> Path:
        if not isinstance(value, str) or not value.strip():
            raise InvalidValue(f"expected a folder path, got {value!r}", 'write e.g. state_dir = "state"')
        return relative_to_config(value, info)


# The most reads in flight a config may allow: each holds a thread and a connection; 64 keeps four
# projects at 300 reads/min busy with reads of 3 s (4 x 5/s x 3 s + 1 = 61).
MAX_CONCURRENT_READS = 64

# The group of credentials whose key files were not read (read-only commands do not open them):
# counted as one project, the reading that can never pace faster than Google allows.
UNREAD_PROJECT = "(key files not read)"


def alone_in_project(credential: Path) -> str:
    """The group of a key that names no project: it is paced as the only credential of its own."""
    return f"(no project: {credential.name})"


class GoogleConfig(_Section):
    credentials: tuple[Path, ...] = Field(
        default=(), description="service-account JSON files; reads are spread across them")
    read_requests_per_minute: int = Field(
        default=DEFAULTS["google.read_requests_per_minute"].value, gt=0)
    project_read_requests_per_minute: int = Field(
        default=DEFAULTS["google.project_read_requests_per_minute"].value, gt=0)
    max_concurrent_reads: int = Field(default=DEFAULTS["google.max_concurrent_reads"].value, ge=1,
                                      le=MAX_CONCURRENT_READS)
    request_timeout: Duration = default("google.request_timeout")
    api_endpoint: HttpUrl | None = default("google.api_endpoint")
    # Filled by the loader from the key files, never written in the file (``exclude`` marks such
    # fields): each credential's Google Cloud project, None for a key that names none. Empty when
    # the key files were not opened (read-only commands).
    credential_projects: Mapping[Path, str | None] = Field(default_factory=dict, repr=False, exclude=True)

    @field_validator("credentials", mode="before", json_schema_input_type=str | list[str])
    @classmethod
    def _resolve_credentials(cls, value: object, info: ValidationInfo) -> tuple[Path, ...]:
        if isinstance(value, str):
            value = [value]
        # A tuple is the field's own default (no [google] table): validated too, it must pass here
        # so that the "at least one credential" check can say what is really missing.
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
            raise InvalidValue("credentials must be a list of file paths",
                               'write credentials = ["secrets/sa-1.json", "secrets/sa-2.json"]')
        return tuple(relative_to_config(v, info) for v in value)

    def project_of(self, credential: Path) -> str:
        """The project ``credential`` is paced in: its key's project id, else a group of its own
        (a key naming no project), else UNREAD_PROJECT (the key files were not read)."""
        if credential not in self.credential_projects:
            return UNREAD_PROJECT
        return self.credential_projects[credential] or alone_in_project(credential)

    @property
    def projects(self) -> dict[str, tuple[Path, ...]]:
        """Project -> its credentials, both in the configured order."""
        groups: dict[str, list[Path]] = {}
        for credential in self.credentials:
            groups.setdefault(self.project_of(credential), []).append(credential)
        return {project: tuple(members) for project, members in groups.items()}

    @property
    def reads_per_minute(self) -> int:
        """Reads per minute all credentials together may make: per project the slower of its two
        quotas, summed over the projects."""
        return sum(min(len(members) * self.read_requests_per_minute, self.project_read_requests_per_minute)
                   for members in self.projects.values())


class BreakerConfig(_Section):
    failure_threshold: int = Field(default=DEFAULTS["breaker.failure_threshold"].value, gt=0)
    cooldown: Duration = default("breaker.cooldown")
    max_cooldown: Duration = default("breaker.max_cooldown")
    unreadable_after: Duration = default("breaker.unreadable_after")

    @field_validator("max_cooldown")
    @classmethod
    def _cap_not_below_cooldown(cls, value: timedelta, info: ValidationInfo) -> timedelta:
        # A field's check rather than the model's, so the error is told at max_cooldown's line;
        # cooldown comes first, and is missing here only when it is wrong itself (told at its line).
        cooldown = info.data.get("cooldown")
        if cooldown is not None and value < cooldown:
            raise InvalidValue(
                f"max_cooldown ({format_duration(value)}) is shorter than cooldown "
                f"({format_duration(cooldown)})", "make max_cooldown at least cooldown")
        return value


def _names(value: object, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidValue(f"{what} must be a list of non-empty strings", f'write {what} = ["emea"]')
    return tuple(v.strip() for v in value)


class Route(_Section):
    """A [[telegram.routes]] table: the spreadsheets with one of ``tags`` or of ``profiles`` are
    told in ``chat_id`` (and its forum topic), not in the default chat."""

    chat_id: ChatId
    message_thread_id: int | None = Field(default=None, gt=0)
    tags: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()

    @field_validator("tags", "profiles", mode="before", json_schema_input_type=str | list[str])
    @classmethod
    def _listed(cls, value: object, info: ValidationInfo) -> tuple[str, ...]:
        return _names(value, info.field_name)

    @model_validator(mode="after")
    def _selects_spreadsheets(self) -> Route:
        if not self.tags and not self.profiles:
            raise InvalidValue("a route names no tags and no profiles, so no spreadsheet takes it",
                               'add tags = ["emea"] or profiles = ["finance"]')
        return self

    def takes(self, tags: tuple[str, ...], profile: str | None) -> bool:
        return bool(set(tags) & set(self.tags)) or (profile is not None and profile in self.profiles)


_USERNAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,31}")  # Telegram's: 5-32 characters (4+ seen on old ones)


class TelegramConfig(_Section):
    """``enabled`` when both a chat and a token are known; otherwise messages are printed."""

    chat_id: ChatId | None = default("telegram.chat_id")
    message_thread_id: int | None = Field(default=None, gt=0)
    api_base: ApiBase = default("telegram.api_base")
    # The first route that takes a spreadsheet decides where its alerts go; the default chat gets
    # the others' and the monitor's own messages (summaries, digests, the state's events).
    routes: tuple[Route, ...] = default("telegram.routes")
    # The team answers from the chat: buttons under alerts and commands, read by the runs.
    listen: bool = default("telegram.listen")
    operators: tuple[str, ...] = default("telegram.operators")
    # From the environment only (never the TOML); SecretStr and repr=False keep it out of reprs.
    bot_token: SecretStr | None = Field(default=None, repr=False, exclude=True)

    @field_validator("operators", mode="before", json_schema_input_type=list[int | str])
    @classmethod
    def _people(cls, value: object) -> tuple[str, ...]:
        """User ids (numbers) and usernames ("@ivan" or "ivan"), kept as "123456" and "@ivan"."""
        if not isinstance(value, list | tuple):
            raise InvalidValue(f"expected a list of Telegram user ids and usernames, got {value!r}",
                               'write e.g. operators = ["@ivan", 123456789]')
        people = []
        for person in value:
            if isinstance(person, int) and not isinstance(person, bool) and person > 0:
                people.append(str(person))
            elif isinstance(person, str) and _USERNAME.fullmatch(person.removeprefix("@")):
                people.append("@" + person.removeprefix("@").lower())
            else:
                raise InvalidValue(f"{person!r} is neither a Telegram user id nor a username",
                                   "a user id is a number (the bot's /help shows yours), a username "
                                   "5-32 letters, digits or _ (\"@ivan\")")
        return tuple(people)

    @model_validator(mode="after")
    def _routes_need_a_default_chat(self) -> TelegramConfig:
        if self.routes and not self.chat_id:
            raise InvalidValue("routes are set but there is no default chat_id",
                               'add chat_id = "-100..." under [telegram]: what no route takes, and the '
                               "monitor's own messages, go there")
        return self

    def route_for(self, tags: tuple[str, ...], profile: str | None) -> Route | None:
        """The first route that takes a spreadsheet with ``tags`` and ``profile`` (None: the default)."""
        return next((route for route in self.routes if route.takes(tags, profile)), None)

    @property
    def enabled(self) -> bool:
        return bool(self.chat_id and self.bot_token)


class AlertsConfig(_Section):
    summary: Literal["on_change", "every_round", "off"] = default("alerts.summary")
    digest_at: DigestTime = default("alerts.digest_at")
    timezone: TimeZoneName = default("alerts.timezone")
    reminder_every: Duration = default("alerts.reminder_every")
    # A failing spreadsheet's incident nobody acknowledged this long is told once more, naming its
    # owner, in its own chat or the one named here (monitor.notify.escalation).
    escalate_after: DurationOrOff = default("alerts.escalate_after")
    escalate_to_chat: ChatId | None = default("alerts.escalate_to_chat")
    escalate_to_thread: int | None = Field(default=DEFAULTS["alerts.escalate_to_thread"].value, gt=0)

    @property
    def tzinfo(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


class ReportConfig(_Section):
    """The status page (``monitor.report``): how long its history is kept, where it is written."""

    keep: Duration = default("report.keep")
    html: Path | None = default("report.html")
    url: HttpUrl | None = default("report.url")

    @field_validator("html", mode="before", json_schema_input_type=str)
    @classmethod
    def _resolve_html(cls, value: object, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip() or value.endswith(("/", "\\")):
            raise InvalidValue(f"expected the path of a file, got {value!r}",
                               'write e.g. html = "/var/www/sheet-monitor/index.html"')
        return relative_to_config(value, info)


class WatchdogConfig(_Section):
    max_silence: Duration = default("watchdog.max_silence")
    reminder_every: Duration = default("watchdog.reminder_every")
    heartbeat_url: HttpUrl | None = default("watchdog.heartbeat_url")
    stuck_grace: Duration = default("watchdog.stuck_grace")
    failed_runs: int = Field(default=DEFAULTS["watchdog.failed_runs"].value, gt=0)


def host_runner_name() -> str:
    """This machine's host name as a runner's name: its first label, other characters as '-'."""
    label = socket.gethostname().split(".")[0]
    name = re.sub(r"[^A-Za-z0-9_-]", "-", label).lstrip("-_")[:63]
    return name or "runner"


class StateConfig(_Section):
    """Where the state lives: the folder ``[run] state_dir`` (``file``), or a Redis (``redis``)."""

    backend: Literal["file", "redis"] = default("state.backend")
    url: str | None = default("state.url")
    prefix: str = default("state.prefix")
    quota_prefix: str | None = default("state.quota_prefix")
    password_env: str = default("state.password_env")
    # Several runners sharing one Redis state each have a name (monitor.state.shared); one runner
    # on the file backend goes by it in logs only.
    runner: str = default("state.runner")
    # How long a killed runner's leases (its run, its turn at the round) outlive it; renewed every
    # third of it while it lives.
    lease: Duration = default("state.lease")

    @field_validator("runner", mode="before", json_schema_input_type=str)
    @classmethod
    def _runner_name(cls, value: object) -> str:
        if value is None:
            return host_runner_name()
        if not isinstance(value, str) or not is_runner_name(value):
            raise InvalidValue(
                f"a runner's name is 1 to 63 letters, digits, '-' or '_' (not first), got {value!r}",
                'write e.g. runner = "host-a"; two cron lines on one host need two names')
        return value

    @property
    def quota_keys(self) -> str:
        """Where the shared quota log's keys live on Redis (``quota_prefix``, else ``<prefix>:quota``)."""
        return self.quota_prefix or f"{self.prefix}:quota"

    @field_validator("url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("redis", "rediss", "unix") or not (parts.hostname or parts.path):
            raise InvalidValue(f"expected a Redis URL, got {value!r}", 'write e.g. url = "redis://127.0.0.1:6379/0"')
        if parts.password:
            # The config is read by people and kept in git; the password lives in the environment.
            raise InvalidValue("the URL holds a password", "remove it and export it in the variable named by "
                               "password_env (SHEET_MONITOR_REDIS_PASSWORD by default)")
        return value

    @field_validator("prefix", "quota_prefix", "password_env")
    @classmethod
    def _plain_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.field_name == "quota_prefix":
            return None
        if not value or not value.replace("-", "").replace("_", "").replace(":", "").isalnum():
            example = DEFAULTS[f"state.{info.field_name}"].value or "sheet-monitor:quota"
            raise InvalidValue(f"{info.field_name} must be letters, digits, '-', '_' or ':', got {value!r}",
                               f'write e.g. {info.field_name} = "{example}"')
        return value

    @model_validator(mode="after")
    def _redis_needs_a_url(self) -> StateConfig:
        if self.backend == "redis" and self.url is None:
            raise InvalidValue('backend = "redis" needs the Redis to use',
                               'add url = "redis://127.0.0.1:6379/0" to [state]')
        return self


# Spreadsheets [metrics] per_sheet may label: each adds a series per health state and a last-read time
# (~8 series). Past a few hundred, a monitor's own file outweighs node_exporter's whole output and every
# spreadsheet renamed or removed leaves series behind; the fleet's counts say the same without them.
PER_SHEET_MAX = 200


class MetricsConfig(_Section):
    """Prometheus metrics after each run: a file for node_exporter's textfile collector, a Pushgateway."""

    textfile: Path | None = default("metrics.textfile")
    pushgateway: HttpUrl | None = default("metrics.pushgateway")
    job: str = default("metrics.job")
    instance: str | None = default("metrics.instance")
    per_sheet: StrictBool = default("metrics.per_sheet")

    @field_validator("textfile", mode="before", json_schema_input_type=str)
    @classmethod
    def _prom_file(cls, value: object, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip().endswith(".prom"):
            # node_exporter's textfile collector reads only *.prom files: another name is never read.
            raise InvalidValue(f"expected a path ending in .prom, got {value!r}",
                               'write e.g. textfile = "/var/lib/node_exporter/textfile/sheet_monitor.prom"')
        return relative_to_config(value.strip(), info)

    @field_validator("pushgateway")
    @classmethod
    def _no_password(cls, value: str | None) -> str | None:
        if value is not None and (urlsplit(value).password or urlsplit(value).username):
            # The config is read by people and kept in git; the metrics must not publish a secret.
            raise InvalidValue("the URL holds a user or password",
                               "remove it: push to a Pushgateway reachable without one (its own network "
                               "or a proxy on this host)")
        return value

    @field_validator("job", "instance")
    @classmethod
    def _label_value(cls, value: str | None, info: ValidationInfo) -> str | None:
        # Both end up in the Pushgateway's URL path (/metrics/job/<job>/instance/<instance>).
        if value is not None and (not value or "/" in value or not value.isprintable()):
            raise InvalidValue(f"{info.field_name} must be non-empty text without '/', got {value!r}",
                               f'write e.g. {info.field_name} = "sheet_monitor"')
        return value


SECTIONS: Mapping[str, type[BaseModel]] = {
    "run": RunConfig,
    "google": GoogleConfig,
    "breaker": BreakerConfig,
    "telegram": TelegramConfig,
    "alerts": AlertsConfig,
    "watchdog": WatchdogConfig,
    "state": StateConfig,
    "metrics": MetricsConfig,
    "report": ReportConfig,
}
# Every key allowed at the top of the file.
TOP_KEYS = (*SECTIONS, "profiles", "sheets", "sheets_file", "folders", "maintenance")
