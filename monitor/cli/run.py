"""`sheet-monitor run`: one time-boxed run, as cron starts it every five minutes.

Under cron (stderr is no terminal) a run writes JSON log lines and nothing else. Typed by hand it
shows a progress line and ends with a short summary (``--progress/--no-progress`` chooses either way).
"""

from __future__ import annotations

import logging
import sys
from datetime import timedelta
from pathlib import Path

import click

from monitor.app.allocator import limit_arenas
from monitor.app.operator_state import saved_state, where
from monitor.app.run import RunResult, new_run_id, run_once
from monitor.app.start_up import collector_paused
from monitor.checks import Health
from monitor.cli.output import config_option, fail
from monitor.cli.state_access import EXIT_OPERATIONAL, load_or_exit
from monitor.cli.terminal import RunProgress, stderr_is_terminal
from monitor.config import Config
from monitor.core.logs import configure_logging, install_handler, log_event
from monitor.core.wording import counted
from monitor.engine.heartbeat import StopReason
from monitor.engine.settings import LEAST_BUDGET_SECONDS
from monitor.notify.messages import utc_text
from monitor.storage import StateError

STOP_REASONS = {  # every StopReason, in words (a test holds it to the enum)
    StopReason.NONE: "-",
    StopReason.ROUND_DONE: "the round is done",
    StopReason.BUDGET: "its budget was spent",
    StopReason.WATCHED: "the round's work is done; it watched Drive's change feed until its budget was spent",
    StopReason.NO_USABLE_CREDENTIAL: "no credential can read: see the credentials' alerts",
    StopReason.API_DEGRADED: "Google failed too often: the next run starts with one probe",
}


@click.command()
@config_option
@click.option(
    "--budget",
    type=click.FloatRange(min=LEAST_BUDGET_SECONDS),  # less leaves no time to read: check-config says so too
    default=None,
    metavar="SECONDS",
    help=f"Time box of this run, {LEAST_BUDGET_SECONDS:g} seconds or more (default: [run] budget from the "
         "config).",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress line and a summary instead of JSON log lines (default: when stderr is a "
         "terminal; cron's runs log JSON).",
)
def run(config_path: Path | None, budget: float | None, progress: bool | None) -> None:
    """One time-boxed run: check due spreadsheets until the budget is spent, save, notify."""
    limit_arenas()  # before the read workers start
    with collector_paused():  # until the run is wired: see monitor.app.start_up
        _run(config_path, budget, progress)


def _run(config_path: Path | None, budget: float | None, progress: bool | None) -> None:
    config = load_or_exit(config_path, require_secrets=True, listed=False)  # the run lists its folders
    run_id = new_run_id()  # before the run, for the log lines of its start
    token = config.telegram.bot_token
    secrets = (token.get_secret_value(),) if token is not None else ()
    on_terminal = stderr_is_terminal()
    shown = None
    if progress if progress is not None else on_terminal:
        shown = install_handler(RunProgress(sys.stderr, in_place=on_terminal, secrets=secrets), logging.INFO)
    else:
        configure_logging(run_id=run_id, secrets=secrets)
    try:
        result = run_once(config, budget=timedelta(seconds=budget) if budget else None, run_id=run_id)
    except StateError as exc:
        log_event("state_unusable", logging.ERROR, error=str(exc))
        if shown is not None:
            shown.finish()
        fail(str(exc), EXIT_OPERATIONAL)
    if shown is not None:
        shown.finish()
        click.echo("\n".join(run_summary(result, shown, config)), err=True)
    refused = delivery_refused(result)
    if refused:
        # The run did its work, but what it has to say reaches nobody: not a good run, for cron's
        # mail, systemd and whoever looks at the exit status (the watchdog says so too).
        log_event("run_alerts_undelivered", logging.ERROR, error=refused)
        fail(refused, EXIT_OPERATIONAL)


def run_summary(result: RunResult, progress: RunProgress, config: Config) -> list[str]:
    """What a person who typed `sheet-monitor run` wants to know when it ends, and what to do next."""
    report = result.report
    if report is None:
        return [f"Another run is working (it holds the run lock in {where(config)}); this one did nothing. "
                "`sheet-monitor status` shows how far it got."]
    stop = STOP_REASONS[report.stop_reason]
    lines = [f"Run {report.run_id}: {report.outcome}, {report.duration_seconds:.0f} s ({stop})."]
    verdicts = ", ".join(f"{count} {verdict}" for verdict, count in sorted(progress.verdicts.items()))
    read = f"  Read {progress.reads} spreadsheet{'s' * (progress.reads != 1)}"
    lines.append(read + (f": {verdicts}" if verdicts else "") + ".")
    counts = report.counts
    if counts.dead_lettered:
        lines.append(f"  {counted(counts.dead_lettered, 'spreadsheet')} could not be read "
                     "(`sheet-monitor dlq list`).")
    if counts.retries_scheduled:  # tried again within the run, or due in the next: the round line tells
        lines.append(f"  {counted(counts.retries_scheduled, 'read')} failed and went back in the queue "
                     "to be tried again.")
    lines.append(_round_line(config))
    lines.append("  " + delivery_line(result, config))
    if progress.verdicts.get(Health.FAIL) or progress.verdicts.get(Health.ERROR) or counts.dead_lettered:
        lines.append("  Next: `sheet-monitor sheets --status fail` shows what each failing sheet found.")
    return lines


def delivery_line(result: RunResult, config: Config) -> str:
    """What became of the team's messages, as it is: never "sent" for what waits in the outbox."""
    delivery = result.delivery
    if not config.telegram.enabled:
        return "The team's messages were printed to stdout (no [telegram] chat_id and token configured)."
    if delivery is None:
        return "No message for the team."
    sent = f"{counted(delivery.sent, 'message')} sent to Telegram"
    if delivery.halts:
        refused = f"Telegram refuses the chat ({_refusal(delivery)})"
        return f"{sent}; {_waiting(delivery)} in the outbox: {refused}."
    if delivery.waiting:
        why = "" if delivery.notified else " (this run's sending failed: see the log)"
        return f"{sent}; {_waiting(delivery)} for the next run{why}."
    return f"{sent}." if delivery.sent else "Nothing new for the team."


def delivery_refused(result: RunResult) -> str | None:
    """Why this run's messages reach nobody (a chat Telegram refuses as a whole), or None."""
    delivery = result.delivery
    if delivery is None or not delivery.halts:
        return None
    return (f"Telegram refuses the chat ({_refusal(delivery)}): {_waiting(delivery)} in the outbox and go "
            "once it accepts. Fix [telegram] (the bot token, chat_id or api_base), then run "
            "`sheet-monitor notify test`")


def _waiting(delivery) -> str:
    return f"{counted(delivery.waiting, 'message')} {'waits' if delivery.waiting == 1 else 'wait'}"


def _refusal(delivery) -> str:
    halt = next(iter(delivery.halts.values()))
    what = f"{halt.status} {halt.description}" if halt.status is not None else halt.description
    return f"{what}, since {utc_text(halt.at)}"


def _round_line(config: Config) -> str:
    try:
        state = saved_state(config, only=("round", "task"))
    except StateError:  # the summary's hint only; the run itself saved
        state = None
    rnd = state.round if state is not None else None
    if rnd is None:
        return "  No round yet."
    complete = "complete" if rnd.is_complete() else "the next run goes on with it"
    return f"  Round {rnd.id}: {rnd.finished()} of {len(rnd)} spreadsheets done ({complete})."
