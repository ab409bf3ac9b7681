"""`check-config` (validate and print the plan) and `check ID` (read one spreadsheet now).

`check ID` reads through the same gspread adapter and evaluates the same checks as a run, but records
nothing: no queue, breaker, health or DLQ change, and it needs no lock. It does spend one read of a
credential's quota; it picks the credential the last run used least in its final minute, so that a
check typed between runs does not push a run into a 429.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import click

from monitor import admin
from monitor.checks import ValuesStillLoading, evaluate_all, health_of, ranges_of
from monitor.cli.output import (
    config_option,
    echo_fields,
    echo_table,
    emit_json,
    fail,
    json_option,
    styled_status,
)
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit, load_state_file
from monitor.core.clock import SystemClock
from monitor.core.durations import format_duration
from monitor.core.errors import SheetReadError
from monitor.core.logs import configure_logging
from monitor.core.timefmt import format_utc
from monitor.storage import StateError

_clock = SystemClock()


@click.command("check-config")
@config_option
@json_option
def check_config(config_path: Path | None, as_json: bool) -> None:
    """Validate the config (credential files included) and print the plan: spreadsheets, reads per
    round, the quota arithmetic and warnings. Exit 2 with every problem listed if it is invalid."""
    configure_logging(level=logging.WARNING)
    config = load_or_exit(config_path, require_secrets=True)
    plan = admin.config_plan(config)
    if as_json:
        emit_json({"valid": True, **plan})
        return
    click.echo(f"Config OK: {plan['config']}")
    drive = f", plus {plan['drive_reads_per_round']} Drive reads" if plan["drive_reads_per_round"] else ""
    per_round = f"{plan['reads_per_round']} (one values:batchGet per spreadsheet{drive})"
    echo_fields([
        ("spreadsheets", f"{plan['spreadsheets']} ({plan['checks']} checks over {plan['ranges']} ranges)"),
        ("reads per round", per_round),
        ("quota", plan["summary"]),
        ("runs per round", _runs(plan, config)),
        ("state", plan["state_dir"]),
        ("telegram", "enabled" if config.telegram.enabled else "not configured: messages go to stdout"),
    ])
    if plan["warnings"]:
        click.echo(f"\nWarnings ({len(plan['warnings'])}):")
        for warning in plan["warnings"]:
            click.echo(f"  - {click.style(warning, fg='yellow')}")


def _runs(plan: dict[str, Any], config) -> str:
    runs = plan["runs_per_round"]
    if runs is None:
        return "-"
    budget = format_duration(config.run.budget)
    return f"{runs} (each run works at most budget = {budget})"


@click.command()
@config_option
@json_option
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
    from monitor.google.reader import (
        GspreadReader,  # gspread and google-auth load only for the command that reads
    )

    credential = _credential(config)
    ranges = ranges_of(sheet.checks)
    timeout = config.google.request_timeout.total_seconds()
    endpoint = str(config.google.api_endpoint).rstrip("/") if config.google.api_endpoint else None
    reader = GspreadReader.from_credentials([credential], endpoint=endpoint, timeout=timeout)
    now = _clock.now()
    # Sheets reads count against the quota the runs pace; a Drive read (freshness on the file's
    # modified time) counts against Drive's own quota.
    spent = {"reads": 1 if ranges else 0, "drive_reads": 1 if sheet.needs_modified_time else 0,
             "credential": credential}
    try:
        value_ranges = reader.read(sheet.id, ranges, credential, timeout) if ranges else []
        modified = reader.modified_time(sheet.id, credential, timeout) if sheet.needs_modified_time else None
        results = evaluate_all(sheet.checks, dict(zip(ranges, value_ranges, strict=True)), now,
                               config.alerts.tzinfo, modified_time=modified)
    except SheetReadError as error:
        _read_failed(sheet, error.to_dict(), spent, as_json)
    except ValuesStillLoading:
        loading = {"error_class": "loading", "message": "cells still show Loading...; try again in a minute"}
        _read_failed(sheet, loading, spent, as_json)
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


def _credential(config) -> str:
    """The credential with the most room left, judged from the last run's saved quota log."""
    from monitor.app.run import pacer_of

    pacer = pacer_of(config)
    try:
        state = load_state_file(config)
    except StateError:  # the quota log is only a hint; an unreadable state is `status`'s business
        state = None
    if state is not None:
        pacer.restore(state.quota)
    credential, wait = pacer.acquire(_clock.time())
    if credential is None:
        fail(f"every credential used its quota in the last minute; try again in {wait:.0f} s",
             EXIT_OPERATIONAL)
    return credential


def _read_failed(sheet, error: dict, spent: dict, as_json: bool) -> None:
    if as_json:
        emit_json({"id": sheet.id, "name": sheet.name, "health": "error", "error": error,
                   "quota_spent": spent})
    else:
        status = f" (HTTP {error['http_status']})" if error.get("http_status") else ""
        click.echo(f"{sheet.name} ({sheet.id}): could not be read: {error.get('error_class')}{status}: "
                   f"{error.get('message')}")
    raise SystemExit(EXIT_OPERATIONAL)


COMMANDS = (check_config, check)
