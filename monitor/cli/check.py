"""`check-config` (validate and print the plan) and `check ID` (read one spreadsheet now).

`check ID` inspects a spreadsheet exactly as a run does (``monitor.engine.inspect``), but records
nothing: no queue, breaker, health or DLQ change, and it needs no lock. It does spend one read of a
credential's quota; it picks the credential the last run used least in its final minute, so that a
check typed between runs does not push a run into a 429.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, NoReturn

import click

from monitor import admin
from monitor.admin.plan import MEASURED, TYPICAL
from monitor.admin.reports import error_dict
from monitor.checks import health_of
from monitor.cli.common import clock, reading_options
from monitor.cli.output import echo_fields, echo_table, emit_json, fail, styled_status
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit
from monitor.config import Config, Sheet
from monitor.core.durations import format_duration
from monitor.core.errors import SheetReadError
from monitor.core.logs import configure_logging
from monitor.core.timefmt import format_utc
from monitor.engine.inspect import SheetPlan, judge, read
from monitor.engine.quota import QuotaPacer
from monitor.state import read_state
from monitor.storage import StateError


@click.command("check-config")
@reading_options
def check_config(config_path: Path | None, as_json: bool) -> None:
    """Validate the config (credential files included) and print the plan: spreadsheets, reads per
    round, the quota arithmetic per Google Cloud project, the round time at the quota and at the last
    run's read time, and warnings. Exit 2 with every problem listed if it is invalid."""
    configure_logging(level=logging.WARNING)
    config = load_or_exit(config_path, require_secrets=True)
    plan = admin.config_plan(config, _last_read_seconds(config))
    if as_json:
        emit_json({"valid": True, **plan})
        return
    click.echo(f"Config OK: {plan['config']}")
    drive = f", plus {plan['drive_reads_per_round']} Drive reads" if plan["drive_reads_per_round"] else ""
    per_round = f"{plan['reads_per_round']} (one values:batchGet per spreadsheet{drive})"
    echo_fields([
        ("spreadsheets", f"{plan['spreadsheets']} ({plan['checks']} checks over {plan['ranges']} ranges)"),
        ("reads per round", per_round),
        *_project_fields(plan),
        ("quota", plan["summary"]),
        ("read time", _read_time(plan)),
        ("runs per round", _runs(plan, config)),
        ("state", plan["state_dir"]),
        ("telegram", "enabled" if config.telegram.enabled else "not configured: messages go to stdout"),
    ])
    if plan["warnings"]:
        click.echo(f"\nWarnings ({len(plan['warnings'])}):")
        for warning in plan["warnings"]:
            click.echo(f"  - {click.style(warning, fg='yellow')}")


def _last_read_seconds(config: Config) -> float | None:
    """The last run's mean read time, if a run measured one; the plan's hint, so an unreadable state
    (`status`'s business) is no reason to fail."""
    try:
        state = read_state(config.run.state_dir, only=("heartbeat",))
    except StateError:
        return None
    stats = state.heartbeat.stats if state is not None and state.heartbeat is not None else None
    return stats.mean_read_seconds if stats is not None else None


def _project_fields(plan: dict[str, Any]) -> list[tuple[str, str]]:
    projects = plan["projects"]
    head = (f"{len(projects)} ({plan['read_requests_per_minute']}/min per credential, "
            f"{plan['project_read_requests_per_minute']}/min per project)")
    fields = [("projects", head)]
    for project in projects:
        names = ", ".join(Path(path).name for path in project["credentials"])
        fields.append((f"  {project['project']}",
                       f"{names}: {project['reads_per_minute']} reads/min; alone, a round in "
                       f"{project['round_seconds_alone'] / 60:.1f} min"))
    return fields


def _read_time(plan: dict[str, Any]) -> str:
    if plan["round_seconds_at_latency"] is None:
        return "-"
    source = MEASURED if plan["read_seconds_source"] == "last_run" else TYPICAL
    return (f"{plan['read_seconds']:.2f} s a read ({source}): {plan['reads_in_flight']} reads in flight "
            f"(max_concurrent_reads {plan['max_concurrent_reads']}), a round in "
            f"{plan['round_seconds_at_latency'] / 60:.1f} min")


def _runs(plan: dict[str, Any], config) -> str:
    runs = plan["runs_per_round"]
    if runs is None:
        return "-"
    budget = format_duration(config.run.budget)
    return f"{runs} (each run works at most budget = {budget})"


@click.command()
@reading_options
@click.argument("spreadsheet_id", metavar="ID")
def check(config_path: Path | None, as_json: bool, spreadsheet_id: str) -> None:
    """Read one spreadsheet now and print each check's result and the cells involved. Changes no
    queue, breaker or health state; spends one read of Google quota (plus one Drive read for a
    freshness check on the file's modified time)."""
    configure_logging(level=logging.WARNING)
    config = load_or_exit(config_path, require_secrets=True)
    sheet = config.sheets_by_id.get(spreadsheet_id)
    if sheet is None:
        fail(admin.unknown_id_message(spreadsheet_id), EXIT_USAGE)
    # gspread and google-auth load only for the command that reads.
    from monitor.google.reader import GspreadReader

    plan = SheetPlan.of(sheet, config)
    credential = _credential(config)
    timeout = config.google.request_timeout.total_seconds()
    reader = GspreadReader.for_config(config, timeout)
    now = clock.now()
    # Sheets reads count against the quota the runs pace; a Drive read (freshness on the file's
    # modified time) counts against Drive's own quota.
    spent = {"reads": 1 if plan.ranges else 0, "drive_reads": 1 if plan.needs_modified_time else 0,
             "credential": credential}
    try:
        # With Google's details at once: a check of one spreadsheet has no later try to learn
        # whether an #N/A is IMPORTRANGE still computing (monitor.engine.inspect); still one read.
        results = judge(plan, read(plan, reader, credential, lambda: timeout, detailed=True), now)
    except SheetReadError as error:
        _read_failed(sheet, error_dict(error.info()), spent, as_json)
    health = health_of(results)
    if as_json:
        emit_json({"id": sheet.id, "name": sheet.name, "checked_at": format_utc(now), "health": health,
                   "results": [r.to_dict() for r in results], "quota_spent": spent})
        return
    click.echo(f"{sheet.name} ({sheet.id}): {styled_status(health)}")
    echo_table(("check", "status", "message", "cells"),
               [(r.check_name, r.status, r.message, ", ".join(r.cells)) for r in results],
               status_column=1, empty="(no checks configured)")
    drive = " and one Drive read" if spent["drive_reads"] else ""
    click.echo(f"\nSpent one read of {Path(credential).name}'s quota{drive}; nothing was recorded.", err=True)


def _credential(config: Config) -> str:
    """The credential with the most room left, judged from the last run's saved quota log."""
    pacer = QuotaPacer.from_config(config)
    try:
        state = read_state(config.run.state_dir, only=("quota",))
    except StateError:  # the quota log is only a hint; an unreadable state is `status`'s business
        state = None
    if state is not None:
        pacer.restore(state.quota)
    credential, wait = pacer.acquire(clock.time())
    if credential is None:
        fail(f"every credential used its quota in the last minute; try again in {wait:.0f} s",
             EXIT_OPERATIONAL)
    return credential


def _read_failed(sheet: Sheet, error: dict, spent: dict, as_json: bool) -> NoReturn:
    if as_json:
        emit_json({"id": sheet.id, "name": sheet.name, "health": "error", "error": error,
                   "quota_spent": spent})
    else:
        status = f" (HTTP {error['http_status']})" if error.get("http_status") else ""
        click.echo(f"{sheet.name} ({sheet.id}): could not be read: {error.get('error_class')}{status}: "
                   f"{error.get('message')}")
    raise SystemExit(EXIT_OPERATIONAL)


COMMANDS = (check_config, check)
