"""JSON-lines logging: one object per line with ts, level, event, run_id and context.

Library code logs through ``log_event``; only the CLI calls ``configure_logging``. Every line passes
through a redactor that replaces known secrets (the bot token, key material) wherever they appear,
and the HTTP libraries' own INFO lines, which print request URLs with the Telegram token in them,
are silenced at the root.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

from monitor.core.timefmt import format_utc

LOGGER_NAME = "monitor"
_QUIET_LIBRARIES = ("httpx", "httpcore", "urllib3", "google.auth", "gspread", "filelock")

logger = logging.getLogger(LOGGER_NAME)


def log_event(event: str, level: int = logging.INFO, *, exc_info: bool | BaseException = False,
              **fields: Any) -> None:
    """Log one structured event; ``fields`` with None values are left out."""
    if logger.isEnabledFor(level):
        kept = {k: v for k, v in fields.items() if v is not None}
        logger.log(level, event, exc_info=exc_info, extra={"fields": kept})


class JsonFormatter(logging.Formatter):
    def __init__(self, run_id: str | None = None, secrets: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.run_id = run_id
        self.secrets = tuple(s for s in secrets if s)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": format_utc(datetime.fromtimestamp(record.created, UTC)),
            "level": record.levelname.lower(),
            "event": record.getMessage(),
        }
        if self.run_id:
            entry["run_id"] = self.run_id
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return self.redact(json.dumps(entry, ensure_ascii=False, default=str))

    def redact(self, line: str) -> str:
        for secret in self.secrets:
            line = line.replace(secret, "[redacted]")
        return line


class HumanFormatter(JsonFormatter):
    """One short line for a person at a terminal: "warning: task_retry (spreadsheet_id=..., ...)".
    Redacted like the JSON lines; no time stamp or run id, which a person watching does not need."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", {})
        detail = ", ".join(f"{key}={value}" for key, value in fields.items())
        line = f"{record.levelname.lower()}: {record.getMessage()}" + (f" ({detail})" if detail else "")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return self.redact(line)


def configure_logging(
    *, run_id: str | None = None, level: int = logging.INFO, stream: IO[str] | None = None,
    secrets: tuple[str, ...] = (), human: bool = False,
) -> logging.Handler:
    """Send the monitor's events as JSON lines to ``stream`` (stderr by default), or, with ``human``,
    as short lines for a person at a terminal; returns the handler."""
    handler = logging.StreamHandler(stream or sys.stderr)
    formatter = HumanFormatter if human else JsonFormatter
    handler.setFormatter(formatter(run_id=run_id, secrets=secrets))
    return install_handler(handler, level)


def install_handler(handler: logging.Handler, level: int) -> logging.Handler:
    """Make ``handler`` the monitor's one log handler (replacing an earlier one) at ``level``, with
    the HTTP libraries kept to warnings; returns it."""
    root = logging.getLogger()
    for existing in list(root.handlers):
        if getattr(existing, "_monitor_handler", False):
            root.removeHandler(existing)
    handler._monitor_handler = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    for name in _QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
    return handler
