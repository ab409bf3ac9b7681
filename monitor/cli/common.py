"""What the operator commands share: their options, quiet logs, admin errors as exit codes, changing the
state under the lock."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from monitor import admin
from monitor.admin import AdminError
from monitor.app.operator_changes import changed_state
from monitor.cli.output import config_option, fail, json_option
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, wait_option
from monitor.cli.terminal import stderr_is_terminal
from monitor.config import Config, Sheet
from monitor.core.logs import configure_logging
from monitor.state import State
from monitor.storage import StateError


def reading_options(command: Callable) -> Callable:
    """``--config`` and ``--json``: what every command that reads the state takes."""
    return config_option(json_option(command))


def changing_options(command: Callable) -> Callable:
    """``--config``, ``--json`` and ``--wait``: what every command that changes the state takes."""
    return config_option(json_option(wait_option(command)))


def admin_call(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except AdminError as exc:
        fail(str(exc), EXIT_USAGE if exc.usage else EXIT_OPERATIONAL)


def quiet_logs(level: int = logging.WARNING) -> None:
    # Commands that change state log what they did (INFO) for the audit trail; readers only warnings.
    # A person at a terminal reads the command's own output: JSON lines there would only bury it, so
    # they see warnings alone, as short lines (scripts and cron, whose stderr is no terminal, keep the
    # JSON audit trail).
    if stderr_is_terminal():
        configure_logging(level=max(level, logging.WARNING), human=True)
    else:
        configure_logging(level=level)


def sheet_or_exit(config: Config, spreadsheet_id: str) -> Sheet:
    sheet = config.sheets_by_id.get(spreadsheet_id)
    if sheet is None:
        fail(admin.unknown_id_message(spreadsheet_id), EXIT_USAGE)
    return sheet


@contextmanager
def changing_or_exit(config: Config, now: datetime, command: str, wait: float) -> Iterator[State]:
    """``operator_changes.changed_state``, its refusals as exit 1 with their message (nothing changed)."""
    try:
        with changed_state(config, now, command, wait) as state:
            yield state
    except (AdminError, StateError) as exc:
        fail(str(exc), EXIT_OPERATIONAL)
