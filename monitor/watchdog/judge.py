"""The watchdog's judgement: is the monitor running? A pure function of what the runs left behind.

:func:`judge_runner` reads the heartbeat of the latest run and the outcomes of the last ones (see
``monitor.engine.heartbeat``) and returns a :class:`Verdict` (after healthchecks: period + grace).
Nothing here does I/O; ``monitor.watchdog.watch`` reads the state and keeps the watchdog's memory.

Verdicts, checked in this order (the first that applies wins):

- ``config_broken``: the runs refuse the monitor's config, so every run exits at once: it does not
  load (the watchdog read its own parts leniently: ``monitor.config.lenient``), or a service-account
  key it names is missing or unusable;
- ``state_inaccessible``: this user may not read the state folder, or a file of the state (another
  owner's, of mode 0700): the runs, as this same user, stop there too, and tell no one;
- ``state_unwritable``: this user cannot save a state in the state folder (another owner, a
  read-only filesystem, a full disk): runs cannot save, so they cannot tell anyone either;
- ``state_missing``: there is no state file;
- ``state_unreadable``: the state file and its last good copy cannot be used;
- ``stuck``: a run started and has not finished after its budget + ``stuck_grace``;
- ``silent``: no run finished within ``max_silence``. The boundary is inclusive: a run that finished
  exactly ``max_silence`` ago is still within the allowed silence, so "at" is healthy and one
  instant later is silent;
- ``failing``: the last ``failed_runs`` finished runs all ended in an outcome other than ``ok`` or
  ``nothing_to_do`` (today: ``degraded``);
- ``runner_stopped``: runners share one state (several hosts on one Redis) and the others carry on,
  but one of them is stuck or silent by the rules above (judged on its own heartbeat and runs); the
  rules above judge all runners together first, so "all of them stopped" is ``silent`` or ``stuck``;
- ``delivery_halted``: the runs work but Telegram refuses a chat as a whole (a wrong bot token, a chat
  not found, the bot removed, a channel refusing every message alike): nobody hears the alerts, so the
  monitor is not healthy whatever the runs say. The watchdog then prints and pings the heartbeat
  URL's failure endpoint, as it cannot count on Telegram;
- ``healthy``.

Times are aware UTC throughout: local time would make daylight-saving changes look like an hour of
silence (or hide one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from monitor.config import WatchdogConfig
from monitor.core.wording import counted
from monitor.engine.heartbeat import GOOD_OUTCOMES, Heartbeat, RunSummary
from monitor.notify.documents import Halt
from monitor.notify.messages import duration_text, since_text

HEALTHY = "healthy"
SILENT = "silent"
STUCK = "stuck"
FAILING = "failing"
STATE_MISSING = "state_missing"
STATE_UNREADABLE = "state_unreadable"
STATE_UNWRITABLE = "state_unwritable"
STATE_INACCESSIBLE = "state_inaccessible"
CONFIG_BROKEN = "config_broken"
DELIVERY_HALTED = "delivery_halted"
RUNNER_STOPPED = "runner_stopped"
STATUSES = (HEALTHY, SILENT, STUCK, FAILING, STATE_MISSING, STATE_UNREADABLE, STATE_UNWRITABLE,
            STATE_INACCESSIBLE, DELIVERY_HALTED, CONFIG_BROKEN, RUNNER_STOPPED)


@dataclass(frozen=True)
class WatchdogSettings:
    """The config's [watchdog] table (defaults and their reasons live in monitor.config only)."""

    max_silence: timedelta
    reminder_every: timedelta
    stuck_grace: timedelta
    failed_runs: int
    label: str = ""  # where the watchdog runs (host name), so a team with two installs can tell

    @classmethod
    def from_config(cls, watchdog_config: WatchdogConfig, label: str = "") -> WatchdogSettings:
        return cls(
            max_silence=watchdog_config.max_silence,
            reminder_every=watchdog_config.reminder_every,
            stuck_grace=watchdog_config.stuck_grace,
            failed_runs=watchdog_config.failed_runs,
            label=label,
        )


@dataclass(frozen=True)
class RunnerReading:
    """What the watchdog could learn from the runner's state."""

    exists: bool  # False: there is no state file at all
    readable: bool = True
    heartbeat: Heartbeat | None = None  # None: no run has written one
    runs: tuple[RunSummary, ...] = ()  # oldest first
    error: str | None = None  # why it is unreadable
    migrations: dict[str, str] = field(default_factory=dict)  # chat migrations the runner's outbox learnt
    unwritable: str | None = None  # why a run cannot save in the state folder, with the fix
    halts: dict[str, Halt] = field(default_factory=dict)  # chats refusing the runner's messages, by chat
    missing: str | None = None  # why there is no state, when the watchdog knows better than "no file"
    # Runners sharing the state: each one's heartbeat and runs (oldest first), by name; empty for one
    # runner, whose are ``heartbeat`` and ``runs``.
    runners: dict[str, tuple[Heartbeat | None, tuple[RunSummary, ...]]] = field(default_factory=dict)
    inaccessible: str | None = None  # why this user may not read the state folder, with the fix

    def together(self) -> RunnerReading:
        """All runners judged as one: the latest run's heartbeat, every runner's runs in the order
        they finished. Itself for one runner."""
        if not self.runners:
            return self
        beats = [beat for beat, _ in self.runners.values() if beat is not None]
        latest = max(beats, key=lambda beat: beat.started_at, default=None)
        runs = sorted((run for _, each in self.runners.values() for run in each),
                      key=lambda run: run.finished_at)
        return replace(self, heartbeat=latest, runs=tuple(runs))


@dataclass(frozen=True)
class ConfigTrouble:
    """The runs refuse the monitor's config: since when (the file's last change; None when the file
    loads and what changed is a file it names, a service-account key) and what is wrong."""

    since: datetime | None
    first: str  # the first problem with its place and fix: "monitor.toml:12: sheets[0].id: ... (fix: ...)"
    more: int = 0  # problems besides it


@dataclass(frozen=True)
class Verdict:
    """``began_at``: the last good sign before the problem (None: unknown, the outage starts when
    the watchdog first sees it). ``healthy_since``: for a healthy verdict, when the current unbroken
    stretch of good runs began; it ends an outage in the "recovered" message."""

    status: str
    reason: str  # plain text for people and logs
    began_at: datetime | None = None
    last_finished_at: datetime | None = None
    healthy_since: datetime | None = None

    @property
    def healthy(self) -> bool:
        return self.status == HEALTHY


def judge_runner(reading: RunnerReading, now: datetime, settings: WatchdogSettings,
             config: ConfigTrouble | None = None) -> Verdict:
    """Judge the runner from ``reading`` (and ``config``, the config's problems if it does not load);
    ``now`` must be aware."""
    if now.tzinfo is None:
        raise ValueError("naive datetime: the watchdog compares aware UTC times only")
    if config is not None:
        return _config_broken(config, reading, now)
    if reading.inaccessible:
        # Nothing behind it can be seen: not the runs, nor whether the folder could be written.
        return Verdict(STATE_INACCESSIBLE, reading.inaccessible)
    if reading.unwritable:
        # First: it explains every other symptom (no heartbeat saved, no run finishing).
        return Verdict(STATE_UNWRITABLE, reading.unwritable, last_finished_at=_last_finished(reading))
    if not reading.exists:
        return Verdict(STATE_MISSING, reading.missing or "the state file does not exist: no run has ever"
                       " saved, or it was deleted or moved")
    if not reading.readable:
        return Verdict(STATE_UNREADABLE, f"the state file cannot be read: {reading.error or 'unknown error'}")
    together = reading.together()
    heartbeat, runs = together.heartbeat, together.runs
    last_finished = _last_finished(together)
    return (
        _stuck(heartbeat, last_finished, now, settings)
        or _silent(heartbeat, last_finished, now, settings)
        or _failing(runs, last_finished, settings)
        or _runner_stopped(reading.runners, last_finished, now, settings)
        or _delivery_halted(reading.halts, last_finished, now)
        or Verdict(
            HEALTHY,
            f"last run finished at {_ago(now, last_finished)}",
            last_finished_at=last_finished,
            healthy_since=_healthy_since(runs, settings.max_silence) or last_finished,
        )
    )


def _config_broken(config: ConfigTrouble, reading: RunnerReading, now: datetime) -> Verdict:
    count = f" ({config.more + 1} problems; the first)" if config.more else ""
    if config.since is None:
        # A key file was removed or spoilt, not the config edited: the last run that finished is the
        # last good sign (told at once all the same, not after max_silence as "runs stopped").
        last = _last_finished(reading.together())
        return Verdict(CONFIG_BROKEN, f"the runs refuse the monitor's config{count}: {config.first}",
                       began_at=last, last_finished_at=last)
    since = min(config.since, now)
    shown = f"{since:%H:%M} UTC" if since.date() == now.date() else f"{since:%Y-%m-%d %H:%M} UTC"
    return Verdict(CONFIG_BROKEN, f"the monitor's config is broken since {shown}{count}: {config.first}",
                   began_at=since)


def _last_finished(reading: RunnerReading) -> datetime | None:
    finished = [run.finished_at for run in reading.runs]
    if reading.heartbeat is not None and reading.heartbeat.finished_at is not None:
        finished.append(reading.heartbeat.finished_at)
    return max(finished, default=None)


def _stuck(heartbeat: Heartbeat | None, last_finished: datetime | None, now: datetime,
           settings: WatchdogSettings) -> Verdict | None:
    if heartbeat is None or heartbeat.finished_at is not None:
        return None
    budget = timedelta(seconds=heartbeat.budget_seconds)
    if now - heartbeat.started_at <= budget + settings.stuck_grace:
        return None
    return Verdict(
        STUCK,
        f"run {heartbeat.run_id} started at {_ago(now, heartbeat.started_at)} and has not finished; "
        f"its budget is {duration_text(budget.total_seconds())}",
        began_at=heartbeat.started_at,
        last_finished_at=last_finished,
    )


def _silent(heartbeat: Heartbeat | None, last_finished: datetime | None, now: datetime,
            settings: WatchdogSettings) -> Verdict | None:
    if last_finished is None:
        started = heartbeat.started_at if heartbeat else None
        return Verdict(SILENT, "no run has ever finished", began_at=started)
    if now - last_finished <= settings.max_silence:
        return None
    return Verdict(
        SILENT,
        f"no run has finished since {_ago(now, last_finished)}; allowed silence is "
        f"{duration_text(settings.max_silence.total_seconds())}",
        began_at=last_finished,
        last_finished_at=last_finished,
    )


def _failing(runs: Sequence[RunSummary], last_finished: datetime | None,
             settings: WatchdogSettings) -> Verdict | None:
    failed = _failed_streak(runs)
    if len(failed) < settings.failed_runs:
        return None
    outcomes = ", ".join(run.outcome for run in failed[-settings.failed_runs:])
    return Verdict(
        FAILING,
        f"the last {counted(len(failed), 'run')} did not end well ({outcomes})",
        began_at=failed[0].started_at,
        last_finished_at=last_finished,
    )


def _runner_stopped(runners: dict, last_finished: datetime | None, now: datetime,
                    settings: WatchdogSettings) -> Verdict | None:
    """One runner (or a few) stuck or silent while the others carry on: its host needs a look."""
    stopped = {}
    for name, (heartbeat, runs) in sorted(runners.items()):
        alone = RunnerReading(True, heartbeat=heartbeat, runs=runs)
        verdict = (_stuck(heartbeat, _last_finished(alone), now, settings)
                   or _silent(heartbeat, _last_finished(alone), now, settings))
        if verdict is not None:
            stopped[name] = verdict
    if not stopped:
        return None
    carry_on = len(runners) - len(stopped)
    reasons = "; ".join(f"runner {name}: {verdict.reason}" for name, verdict in stopped.items())
    began = [verdict.began_at for verdict in stopped.values() if verdict.began_at is not None]
    return Verdict(RUNNER_STOPPED, f"{reasons}; meanwhile {counted(carry_on, 'other runner')} worked",
                   began_at=min(began, default=None), last_finished_at=last_finished)


def _delivery_halted(halts: dict[str, Halt], last_finished: datetime | None, now: datetime) -> Verdict | None:
    if not halts:
        return None
    first = min(halts.values(), key=lambda halt: halt.at)
    chats = ", ".join(sorted(halt.chat_id or "?" for halt in halts.values()))
    status = f"{first.status} " if first.status is not None else ""
    return Verdict(
        DELIVERY_HALTED,
        f"Telegram refuses the runner's messages to chat {chats} since {_ago(now, first.at)}: "
        f"{status}{first.description}",
        began_at=first.at,
        last_finished_at=last_finished,
    )


def _failed_streak(runs: Sequence[RunSummary]) -> list[RunSummary]:
    """The runs at the end of ``runs`` that all ended badly, oldest first."""
    streak: list[RunSummary] = []
    for run in reversed(runs):
        if run.outcome in GOOD_OUTCOMES:
            break
        streak.append(run)
    return streak[::-1]


def _healthy_since(runs: Sequence[RunSummary], max_silence: timedelta) -> datetime | None:
    """When the latest unbroken stretch of good runs began: walking back from the newest, a bad
    outcome or a gap longer than ``max_silence`` between two finishes ends the stretch."""
    since: datetime | None = None
    for run in reversed(runs):
        if run.outcome not in GOOD_OUTCOMES:
            break
        if since is not None and since - run.finished_at > max_silence:
            break
        since = run.finished_at
    return since


def _ago(now: datetime, moment: datetime) -> str:
    return since_text(moment, now)
