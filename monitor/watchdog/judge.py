"""The watchdog's judgement: is the monitor running? Pure functions over plain data.

``evaluate`` reads what the runner left in the state file (``heartbeat`` and ``runs``, see
``monitor.state``) and returns a :class:`Verdict`. ``advance`` applies the verdict to the watchdog's
own alert memory and says which messages to send: one alert when an outage starts, a reminder every
``reminder_every`` while it lasts, one "recovered" message with the outage length when it ends
(after healthchecks: period + grace, alerts on flips of state only). Nothing here does I/O;
``monitor.watchdog_pass`` reads files, keeps the memory and delivers.

Verdicts, checked in this order (the first that applies wins):

- ``state_missing``: there is no state file (``heartbeat is None``);
- ``state_unreadable``: the state file and its last good copy cannot be used;
- ``stuck``: a run started and has not finished after its budget + ``stuck_grace``;
- ``silent``: no run finished within ``max_silence``. The boundary is inclusive: a run that finished
  exactly ``max_silence`` ago is still within the allowed silence, so "at" is healthy and one
  instant later is silent;
- ``failing``: the last ``failed_runs`` finished runs all ended in an outcome other than ``ok`` or
  ``nothing_to_do`` (today: ``degraded``);
- ``healthy``.

An outage is any stretch of unhealthy verdicts. When its kind changes (a stuck run is replaced by
silence, say) the memory records the new kind and the next reminder names it, but no extra message
goes out: one outage, one alert. Times are aware UTC throughout: local time would make
daylight-saving changes look like an hour of silence (or hide one).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from monitor.core.timefmt import format_utc, parse_utc
from monitor.notify.alerts import Message, duration_text, esc

HEALTHY = "healthy"
SILENT = "silent"
STUCK = "stuck"
FAILING = "failing"
STATE_MISSING = "state_missing"
STATE_UNREADABLE = "state_unreadable"
STATUSES = (HEALTHY, SILENT, STUCK, FAILING, STATE_MISSING, STATE_UNREADABLE)

GOOD_OUTCOMES = frozenset({"ok", "nothing_to_do"})  # everything else a finished run reports is a failure

_TITLES = {
    SILENT: "Monitor runs stopped",
    STUCK: "Monitor run stuck",
    FAILING: "Monitor runs failing",
    STATE_MISSING: "Monitor state file missing",
    STATE_UNREADABLE: "Monitor state file unreadable",
}


@dataclass(frozen=True)
class WatchdogSettings:
    """From the config's [watchdog] table (defaults and their reasons live in monitor.config)."""

    max_silence: timedelta = timedelta(minutes=15)
    reminder_every: timedelta = timedelta(hours=4)
    stuck_grace: timedelta = timedelta(minutes=2)
    failed_runs: int = 3
    label: str = ""  # where the watchdog runs (host name), so a team with two installs can tell

    @classmethod
    def from_config(cls, watchdog_config: object, label: str = "") -> WatchdogSettings:
        return cls(
            max_silence=watchdog_config.max_silence,
            reminder_every=watchdog_config.reminder_every,
            stuck_grace=watchdog_config.stuck_grace,
            failed_runs=watchdog_config.failed_runs,
            label=label,
        )


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


def _time(value: object) -> datetime | None:
    """A stored time, or None when absent or malformed (a damaged field is no reason to crash)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_utc(value)
    except ValueError:
        return None


def _ago(now: datetime, moment: datetime) -> str:
    return f"{format_utc(moment)} ({duration_text((now - moment).total_seconds())} ago)"


def evaluate(
    heartbeat: dict | None,
    runs: Sequence[dict],
    state_readable: bool,
    now: datetime,
    settings: WatchdogSettings,
    error: str | None = None,
) -> Verdict:
    """Judge the runner from its ``heartbeat`` and ``runs`` (oldest first).

    ``heartbeat`` is None when the state file does not exist; ``{}`` when it exists but no run has
    written one. ``state_readable`` False means neither the file nor its backup could be used;
    ``error`` then says why. ``now`` must be aware.
    """
    if now.tzinfo is None:
        raise ValueError("naive datetime: the watchdog compares aware UTC times only")
    if heartbeat is None:
        return Verdict(STATE_MISSING, "the state file does not exist: no run has ever saved, or it was "
                       "deleted or moved")
    if not state_readable:
        return Verdict(STATE_UNREADABLE, f"the state file cannot be read: {error or 'unknown error'}")

    finished = [t for t in (_time(r.get("finished_at")) for r in runs) if t is not None]
    heartbeat_finished = _time(heartbeat.get("finished_at"))
    if heartbeat_finished is not None:
        finished.append(heartbeat_finished)
    last_finished = max(finished, default=None)

    started = _time(heartbeat.get("started_at"))
    if heartbeat_finished is None and started is not None:
        allowed = timedelta(seconds=float(heartbeat.get("budget_seconds") or 0)) + settings.stuck_grace
        if now - started > allowed:
            budget = allowed - settings.stuck_grace
            return Verdict(
                STUCK,
                f"run {heartbeat.get('run_id') or '?'} started at {_ago(now, started)} and has not "
                f"finished; its budget is {duration_text(budget.total_seconds())}",
                began_at=started,
                last_finished_at=last_finished,
            )

    if last_finished is None:
        return Verdict(SILENT, "no run has ever finished", began_at=started)
    if now - last_finished > settings.max_silence:
        return Verdict(
            SILENT,
            f"no run has finished since {_ago(now, last_finished)}; allowed silence is "
            f"{duration_text(settings.max_silence.total_seconds())}",
            began_at=last_finished,
            last_finished_at=last_finished,
        )

    failed = _failed_streak(runs)
    if len(failed) >= settings.failed_runs:
        outcomes = ", ".join(str(r.get("outcome")) for r in failed[-settings.failed_runs:])
        return Verdict(
            FAILING,
            f"the last {len(failed)} runs did not end well ({outcomes})",
            began_at=_time(failed[0].get("started_at")) or _time(failed[0].get("finished_at")),
            last_finished_at=last_finished,
        )
    return Verdict(
        HEALTHY,
        f"last run finished at {_ago(now, last_finished)}",
        last_finished_at=last_finished,
        healthy_since=_healthy_since(runs, settings.max_silence) or last_finished,
    )


def _failed_streak(runs: Sequence[dict]) -> list[dict]:
    """The runs at the end of ``runs`` that all ended badly, oldest first."""
    streak: list[dict] = []
    for run in reversed(runs):
        if run.get("outcome") in GOOD_OUTCOMES:
            break
        streak.append(run)
    return streak[::-1]


def _healthy_since(runs: Sequence[dict], max_silence: timedelta) -> datetime | None:
    """When the latest unbroken stretch of good runs began: walking back from the newest, a bad
    outcome or a gap longer than ``max_silence`` between two finishes ends the stretch."""
    since: datetime | None = None
    for run in reversed(runs):
        finished = _time(run.get("finished_at"))
        if run.get("outcome") not in GOOD_OUTCOMES or finished is None:
            break
        if since is not None and since - finished > max_silence:
            break
        since = finished
    return since


# ---- the watchdog's own alert memory -------------------------------------------------------------


def new_memory() -> dict:
    """Nothing known yet: the first unhealthy verdict is a new outage."""
    return {"status": HEALTHY, "since": None, "last_alert_at": None, "last_reminder_at": None}


@dataclass(frozen=True)
class Decision:
    memory: dict  # the new alert memory (a fresh dict; the given one is not changed)
    messages: tuple[Message, ...]
    kind: str | None  # "alert" | "reminder" | "recovered" | None (nothing to say)


def advance(memory: dict | None, verdict: Verdict, now: datetime, settings: WatchdogSettings) -> Decision:
    """Apply ``verdict`` to the alert memory ``{"status", "since", "last_alert_at",
    "last_reminder_at"}``: alert on healthy -> unhealthy, remind every ``reminder_every`` while
    unhealthy, report recovery once on unhealthy -> healthy."""
    previous = {**new_memory(), **(memory or {})}
    was_healthy = previous["status"] == HEALTHY
    stamp = format_utc(now)

    if verdict.healthy:
        if was_healthy:
            return Decision(previous, (), None)
        began = _time(previous["since"]) or now
        ended = verdict.healthy_since if verdict.healthy_since and verdict.healthy_since >= began else now
        text = _recovered_text(previous["status"], began, ended, settings)
        return Decision({**new_memory(), "since": stamp}, (_message("recovered", began, now, text),),
                        "recovered")

    if was_healthy:
        began = min(verdict.began_at, now) if verdict.began_at else now
        memory = {"status": verdict.status, "since": format_utc(began), "last_alert_at": stamp,
                  "last_reminder_at": None}
        text = _alert_text(verdict, began, now, settings)
        return Decision(memory, (_message("alert", began, now, text),), "alert")

    memory = {**previous, "status": verdict.status}
    last_said = _time(previous["last_reminder_at"]) or _time(previous["last_alert_at"])
    if last_said is not None and now - last_said < settings.reminder_every:
        return Decision(memory, (), None)
    began = _time(previous["since"]) or now
    memory["last_reminder_at"] = stamp
    text = _reminder_text(verdict, began, now, settings)
    return Decision(memory, (_message("reminder", began, now, text),), "reminder")


def _message(kind: str, began: datetime, now: datetime, text: str) -> Message:
    # Stable for one outage and one pass: composing the same message again (a crash before the
    # memory was saved) is recognised by the outbox instead of sent twice.
    digest = hashlib.sha256(f"{kind}|{format_utc(began)}|{format_utc(now)}".encode()).hexdigest()[:16]
    return Message(key=f"watchdog:{kind}:{digest}", text=text)


def _where(settings: WatchdogSettings) -> str:
    return f" on <code>{esc(settings.label, 80)}</code>" if settings.label else ""


def _alert_text(verdict: Verdict, began: datetime, now: datetime, settings: WatchdogSettings) -> str:
    return (
        f"🚨 <b>{esc(_TITLES[verdict.status])}</b>{_where(settings)}\n"
        f"{esc(verdict.reason, 600)}\n"
        f"Problem since {esc(format_utc(began))}. {_hint(verdict.status)}"
    )


def _reminder_text(verdict: Verdict, began: datetime, now: datetime, settings: WatchdogSettings) -> str:
    down_for = duration_text((now - began).total_seconds())
    return (
        f"⏰ <b>Still down: {esc(_TITLES[verdict.status])}</b>{_where(settings)}\n"
        f"{esc(verdict.reason, 600)}\n"
        f"Down for {esc(down_for)} (since {esc(format_utc(began))})."
    )


def _recovered_text(status: str, began: datetime, ended: datetime, settings: WatchdogSettings) -> str:
    title = _TITLES.get(status, "Monitor outage")
    length = duration_text((ended - began).total_seconds())
    return (
        f"✅ <b>Monitor runs are healthy again</b>{_where(settings)}\n"
        f"Outage ({esc(title.lower())}) lasted {esc(length)}: "
        f"from {esc(format_utc(began))} to {esc(format_utc(ended))}."
    )


def _hint(status: str) -> str:
    return {
        SILENT: "Check cron (<code>crontab -l</code>), the run's log and the machine.",
        STUCK: "Look at the run's log and for a hung <code>sheet-monitor run</code> process: while it "
        "holds the run lock, no other run starts.",
        FAILING: "Google may be degraded: see the run's log and the alerts before this one.",
        STATE_MISSING: "Check <code>state_dir</code> in the config and that the state folder exists.",
        STATE_UNREADABLE: "Runs cannot start either; see the Runbook in docs/operations.md.",
    }.get(status, "")
