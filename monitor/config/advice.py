"""Advice for ``check-config``: things that are allowed but probably not meant. Never errors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from monitor.core.durations import format_duration

from .model import Sheet
from .sections import GoogleConfig, RunConfig, TelegramConfig


def warnings_for(sections: Mapping[str, Any], sheets: Sequence[Sheet],
                 profiles: Sequence[str]) -> tuple[str, ...]:
    """``sections`` by name (all valid), the resolved sheets, and every profile's name."""
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
    used = {sheet.profile for sheet in sheets}
    unused = [name for name in profiles if name not in used]
    if unused:
        warnings.append(f"profiles not used by any spreadsheet: {', '.join(unused)}")
    warnings += _keys_without_project(sections["google"])
    alerts = sections["alerts"]
    if alerts.escalate_after is None and (alerts.escalate_to_chat or alerts.escalate_to_thread):
        warnings.append("alerts.escalate_to_chat or escalate_to_thread is set but escalate_after is off: "
                        "nothing escalates; set escalate_after (e.g. \"2h\")")
    if not telegram.enabled:
        warnings.append("Telegram is not configured: messages will be printed to stdout")
    return tuple(warnings)


def _keys_without_project(google: GoogleConfig) -> list[str]:
    nameless = [path for path, project in google.credential_projects.items() if project is None]
    if not nameless or len(google.credentials) < 2:
        return []
    names = ", ".join(path.name for path in nameless)
    one = len(nameless) == 1
    return [f"{names} name{'s' if one else ''} no Google Cloud project (no project_id, and the "
            f"client_email is not a project's address): {'it is' if one else 'each is'} paced as the only "
            "credential of its project; if it shares a project with another credential, together they may "
            "exceed project_read_requests_per_minute. Download a new JSON key for it (new keys name their "
            "project)"]
