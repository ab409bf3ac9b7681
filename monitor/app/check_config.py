"""``check-config`` composed: the plan of a config, what its checks do, and this machine tried for
real (the run's budget against cron, the state folder, the run lock, each key and its token, and
Telegram's bot token and chats). ``monitor.cli.check`` prints it and maps it to an exit code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from monitor import admin
from monitor.admin.explanations import explanations
from monitor.admin.preflight import Probe, preflight
from monitor.app.telegram_probe import ask_telegram
from monitor.config import Config
from monitor.config.advice import budget_misfit
from monitor.core.durations import format_duration
from monitor.state import read_state
from monitor.storage import StateError
from monitor.storage.configured import state_location


@dataclass(frozen=True)
class ConfigReview:
    plan: dict[str, Any]  # admin.config_plan's: reads, quota arithmetic, warnings
    probes: list[Probe]  # in the order they are shown
    explanations: list[dict[str, Any]]  # each profile's and spreadsheet's checks, one sentence each

    @property
    def usage_problem(self) -> bool:
        """A probe refused something the config says (exit 2), not the machine (exit 1)."""
        return any(not probe.ok and probe.usage for probe in self.probes)

    @property
    def problems(self) -> int:
        return sum(1 for probe in self.probes if not probe.ok)


def review_config(config: Config, edit_shares: tuple[float, ...], *, offline: bool) -> ConfigReview:
    """The whole of ``check-config`` for a loaded config. ``offline`` asks neither Google's token
    service nor Telegram (each key still loads and signs)."""
    plan = admin.config_plan(config, _last_read_seconds(config), edit_shares)
    probes = [schedule_probe(config), *preflight(config, offline=offline), *telegram_probes(config, offline)]
    return ConfigReview(plan, probes, explanations(config))


def schedule_probe(config: Config) -> Probe:
    """Does a run end before the next cron tick? A budget that does not is the config's problem (the
    runs work, but every other tick finds the previous run working and does nothing): not ready."""
    run = config.run
    misfit = budget_misfit(run)
    if misfit is not None:
        return Probe("run budget", False, *misfit, usage=True)
    left = format_duration(run.round_interval - run.budget)
    return Probe("run budget", True, f"{format_duration(run.budget)} leaves {left} of round_interval "
                 f"({format_duration(run.round_interval)}, the cron line's interval) to save, send and exit")


def telegram_probes(config: Config, offline: bool) -> list[Probe]:
    """Telegram's answers about the bot token and each chat, as probes (none when not asked). A
    refusal is the config's (exit 2); no answer from Telegram, the machine's or the network's."""
    if offline or not config.telegram.enabled:
        return []
    return [Probe(f"telegram {asked}", answer.ok, answer.text, None if answer.ok else answer.fix,
                  usage=not answer.ok and not answer.unreachable) for asked, answer in ask_telegram(config)]


def _last_read_seconds(config: Config) -> float | None:
    """The last run's mean read time, if a run measured one; the plan's hint, so an unreadable state
    (`status`'s business) is no reason to fail."""
    try:
        state = read_state(state_location(config), only=("heartbeat",))
    except StateError:
        return None
    stats = state.heartbeat.stats if state is not None and state.heartbeat is not None else None
    return stats.mean_read_seconds if stats is not None else None
