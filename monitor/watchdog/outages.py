"""The watchdog's alert memory: one alert per outage, a slow reminder, one "recovered" message.

:func:`advance` applies a verdict to the memory and says which message to send: an alert when an
outage starts, a reminder every ``reminder_every`` while it lasts, a "recovered" message with the
outage's length when it ends (alerts on flips of state only, as healthchecks does). When an outage's
kind changes (a stuck run is replaced by silence, say) the memory records the new kind and the next
reminder names it, but no extra message goes out: one outage, one alert. Pure: ``now`` comes in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime

from monitor.core.timefmt import UtcTime, format_utc
from monitor.core.tracking import document
from monitor.notify.messages import Message, duration_text, esc, sentences, utc_text
from monitor.watchdog.judge import (
    CONFIG_BROKEN,
    DELIVERY_HALTED,
    FAILING,
    HEALTHY,
    RUNNER_STOPPED,
    SILENT,
    STATE_INACCESSIBLE,
    STATE_MISSING,
    STATE_UNREADABLE,
    STATE_UNWRITABLE,
    STUCK,
    Verdict,
    WatchdogSettings,
)

_TITLES = {
    SILENT: "Monitor runs stopped",
    STUCK: "Monitor run stuck",
    FAILING: "Monitor runs failing",
    STATE_MISSING: "Monitor state file missing",
    STATE_UNREADABLE: "Monitor state file unreadable",
    CONFIG_BROKEN: "Monitor config broken",
    STATE_UNWRITABLE: "Monitor cannot save its state",
    STATE_INACCESSIBLE: "Monitor cannot read its state",
    DELIVERY_HALTED: "Alerts cannot reach Telegram",
    RUNNER_STOPPED: "A monitor runner stopped",
}
_HINTS = {
    RUNNER_STOPPED: "The other runners do its share meanwhile. Check that host's cron, its run's log and "
    "the machine; a runner retired for good is forgotten by deleting its heartbeat and runs "
    "(docs/operations.md, \"Several runners on one Redis\").",
    SILENT: "Check cron (<code>crontab -l</code>), the run's log and the machine.",
    STUCK: "Look at the run's log and for a hung <code>sheet-monitor run</code> process: while it "
    "holds the run lock, no other run starts.",
    FAILING: "Google may be degraded: see the run's log and the alerts before this one.",
    STATE_MISSING: "Check <code>state_dir</code> in the config and that the state folder exists; on "
    "Redis, <code>[state]</code> and that Redis kept its data (<code>appendonly yes</code>).",
    STATE_UNREADABLE: "Runs cannot start either; see the Runbook in docs/operations.md.",
    CONFIG_BROKEN: "Every run stops at it. Fix it, then run <code>sheet-monitor check-config</code> "
    "until it says Ready.",
    STATE_UNWRITABLE: "Runs stop at their first save, so they cannot send alerts either (their outbox "
    "is in that folder); nothing is checked until this is fixed.",
    STATE_INACCESSIBLE: "Runs as this user stop at the same place, so they cannot send alerts either "
    "(their outbox is in that folder); nothing is checked until this is fixed.",
    DELIVERY_HALTED: "Run <code>sheet-monitor check-config</code> and "
    "<code>sheet-monitor notify test</code>, "
    "fix the bot token, chat_id or api_base; the alerts wait in the outbox and go once Telegram "
    "accepts.",
}


@document
class WatchdogMemory:
    """Nothing known (the default): the first unhealthy verdict is a new outage."""

    status: str = HEALTHY
    since: UtcTime | None = None  # when the current outage (or, once healthy, the recovery) began
    last_alert_at: UtcTime | None = None
    last_reminder_at: UtcTime | None = None


@dataclass(frozen=True)
class AlertDecision:
    memory: WatchdogMemory
    messages: tuple[Message, ...]
    kind: str | None  # "alert" | "reminder" | "recovered" | None (nothing to say)


def advance(memory: WatchdogMemory, verdict: Verdict, now: datetime, settings: WatchdogSettings,
            unsent: int = 0) -> AlertDecision:
    """Alert on healthy -> unhealthy, remind every ``reminder_every`` while unhealthy, report the
    recovery once on unhealthy -> healthy. ``unsent``: the outage's alert and reminders still
    waiting for Telegram; the recovery says so (the caller drops them: they are news no longer)."""
    was_healthy = memory.status == HEALTHY
    if verdict.healthy:
        if was_healthy:
            return AlertDecision(memory, (), None)
        began = memory.since or now
        ended = verdict.healthy_since if verdict.healthy_since and verdict.healthy_since >= began else now
        text = _recovered_text(memory.status, began, ended, settings, unsent)
        recovered = (_message("recovered", began, now, text),)
        return AlertDecision(WatchdogMemory(since=now), recovered, "recovered")

    if was_healthy:
        began = min(verdict.began_at, now) if verdict.began_at else now
        text = _alert_text(verdict, began, settings)
        return AlertDecision(WatchdogMemory(verdict.status, began, last_alert_at=now),
                        (_message("alert", began, now, text),), "alert")

    last_said = memory.last_reminder_at or memory.last_alert_at
    if last_said is not None and now - last_said < settings.reminder_every:
        return AlertDecision(replace(memory, status=verdict.status), (), None)
    began = memory.since or now
    text = _reminder_text(verdict, began, now, settings)
    return AlertDecision(replace(memory, status=verdict.status, last_reminder_at=now),
                    (_message("reminder", began, now, text),), "reminder")


OUTAGE_KEYS = ("watchdog:alert:", "watchdog:reminder:")  # the keys of an outage's own messages (below)


def _message(kind: str, began: datetime, now: datetime, text: str) -> Message:
    # Stable for one outage and one pass: composing the same message again (a crash before the
    # memory was saved) is recognised by the outbox instead of sent twice.
    digest = hashlib.sha256(f"{kind}|{format_utc(began)}|{format_utc(now)}".encode()).hexdigest()[:16]
    return Message(key=f"watchdog:{kind}:{digest}", text=text)


def _where(settings: WatchdogSettings) -> str:
    return f" on <code>{esc(settings.label, 80)}</code>" if settings.label else ""


def _alert_text(verdict: Verdict, began: datetime, settings: WatchdogSettings) -> str:
    return (
        f"🚨 <b>{esc(_TITLES[verdict.status])}</b>{_where(settings)}\n"
        f"{_reason(verdict)}\n"
        f"Problem since {utc_text(began)}. {_HINTS.get(verdict.status, '')}"
    )


def _reminder_text(verdict: Verdict, began: datetime, now: datetime, settings: WatchdogSettings) -> str:
    down_for = duration_text((now - began).total_seconds())
    return (
        f"⏰ <b>Still down: {esc(_TITLES[verdict.status])}</b>{_where(settings)}\n"
        f"{_reason(verdict)}\n"
        f"Down for {down_for} (since {utc_text(began)})."
    )


def _recovered_text(status: str, began: datetime, ended: datetime, settings: WatchdogSettings,
                    unsent: int = 0) -> str:
    title = _TITLES.get(status, "Monitor outage")
    length = duration_text((ended - began).total_seconds())
    # Its alert could not reach the chat (Telegram refused it, or was down): said here instead of
    # arriving, stale, just before this message.
    unheard = " Its alert could not reach this chat while it lasted." if unsent else ""
    return (
        f"✅ <b>Monitor runs are healthy again</b>{_where(settings)}\n"
        f"Outage ({esc(title.lower())}) lasted {length}: "
        f"from {utc_text(began)} to {utc_text(ended)}.{unheard}"
    )


def _reason(verdict: Verdict) -> str:
    # A reason can be long (the state's recovery names every file and the commands to move them
    # aside): whole sentences, never a command cut in the middle.
    return esc(sentences(verdict.reason, _REASON_LENGTH), _REASON_LENGTH + 1)


_REASON_LENGTH = 2000  # well under Telegram's 4096 with the title and the hint around it
