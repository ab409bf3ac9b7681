"""The configuration: one TOML file plus the environment -> one frozen, validated ``Config``.

Contract: ``load_config(path, environ)`` returns a ``Config`` or raises ``ConfigError`` listing every
problem found (up to ``MAX_REPORTED_ISSUES``), each naming where (``file:line``), the key path
(``profiles.stock.checks[2].range``), what is wrong and how to fix it. Loading reads the config file,
the optional sheets CSV, the credential files and the token file; it never touches the network or the
state. Secrets come only from the environment and never appear in ``repr(config)`` or in errors.

Modules, one concern each: ``defaults`` (every default with its reason; docs/configuration.md
mirrors it), ``issues`` (ConfigIssue, ConfigError), ``fields`` and ``sections`` (the file's
sections), ``model`` (Config, Profile, Sheet), ``loader`` (load_config), ``sheets`` and
``sheets_csv`` (spreadsheets as written -> Sheets), ``maintenance`` ([[maintenance]] windows),
``secrets`` (token, credential files), ``explain`` (pydantic errors -> problem and fix),
``positions`` (file:line of a key), ``advice`` (warnings).
The checks themselves are ``monitor.checks``' models.
"""

from .defaults import CONFIG_ENV, DEFAULT_CONFIG_NAME, DEFAULTS, TOKEN_ENV, TOKEN_FILE_ENV, Default
from .issues import MAX_REPORTED_ISSUES, ConfigError, ConfigIssue
from .loader import config_of_text, load_config, resolve_config_path
from .maintenance import MaintenanceWindow
from .model import Config, Profile, Sheet, checks_fingerprint
from .reworded import key_path
from .sections import (
    MAX_CONCURRENT_READS,
    UNREAD_PROJECT,
    AlertsConfig,
    BreakerConfig,
    GoogleConfig,
    MetricsConfig,
    ReportConfig,
    RunConfig,
    StateConfig,
    TelegramConfig,
    WatchdogConfig,
)
from .sheets_csv import CSV_TAG_SEPARATOR

__all__ = [
    "CONFIG_ENV",
    "CSV_TAG_SEPARATOR",
    "DEFAULTS",
    "DEFAULT_CONFIG_NAME",
    "MAX_CONCURRENT_READS",
    "MAX_REPORTED_ISSUES",
    "TOKEN_ENV",
    "TOKEN_FILE_ENV",
    "UNREAD_PROJECT",
    "AlertsConfig",
    "BreakerConfig",
    "Config",
    "ConfigError",
    "ConfigIssue",
    "Default",
    "GoogleConfig",
    "MaintenanceWindow",
    "Profile",
    "ReportConfig",
    "RunConfig",
    "Sheet",
    "TelegramConfig",
    "MetricsConfig",
    "StateConfig",
    "WatchdogConfig",
    "checks_fingerprint",
    "key_path",
    "config_of_text",
    "load_config",
    "resolve_config_path",
]
