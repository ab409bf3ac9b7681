"""Advice for ``check-config``: things that are allowed but probably not meant. Never errors of the
config: the runs work with them. ``warnings_for`` is the config's warnings; ``budget_misfit``, which
costs every other run, is a problem ``check-config`` does not call ready."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from monitor.core.durations import format_duration

from .model import Sheet
from .sections import GoogleConfig, RunConfig, TelegramConfig

# A run ends within budget + 5 s (its requests cut to the deadline, the notifier held to it), and its
# process needs a moment to start and to exit: the next cron tick may count on the run being gone
# only if this much of round_interval is left after the budget.
TICK_MARGIN = timedelta(seconds=10)


def budget_misfit(run: RunConfig) -> tuple[str, str] | None:
    """(problem, fix) when ``budget`` does not fit ``round_interval``, the interval of the cron line
    that starts the runs: each tick would find the previous run still holding the run lock and exit,
    its turn lost (a run every other tick). None when it fits. Allowed (the runs work, only slower),
    so not a config error: ``check-config`` reports it as a problem of the config."""
    if run.round_interval - run.budget >= min(TICK_MARGIN, run.round_interval / 2):
        return None
    suggestion = format_duration(max(run.round_interval - timedelta(seconds=30), run.round_interval / 2))
    return (f"budget {format_duration(run.budget)} does not end before the next round_interval "
            f"({format_duration(run.round_interval)}) tick: a run takes up to budget + 5 s, so the next "
            "tick finds it still working, exits, and its turn is lost (a run every other tick)",
            f'set budget = "{suggestion}" under [run]; or, if the cron line runs less often than every '
            f"{format_duration(run.round_interval)}, set round_interval to its interval")


def warnings_for(sections: Mapping[str, Any], sheets: Sequence[Sheet],
                 profiles: Sequence[str], folder_profiles: Sequence[str] = ()) -> tuple[str, ...]:
    """``sections`` by name (all valid), the resolved sheets, every profile's name, and the profiles
    of the [[folders]] (used by whatever spreadsheets Drive lists in them)."""
    telegram: TelegramConfig = sections["telegram"]
    warnings = []
    used = {sheet.profile for sheet in sheets} | set(folder_profiles)
    unused = [name for name in profiles if name not in used]
    if unused:
        warnings.append(f"profiles not used by any spreadsheet or folder: {', '.join(unused)}")
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
