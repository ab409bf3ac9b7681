"""What `check-config` prints: the plan for a config, with the quota arithmetic of a round."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from monitor.config import Config
from monitor.core.durations import format_duration
from monitor.engine.quota import credentials_needed, round_estimate


def config_plan(config: Config) -> dict[str, Any]:
    """The plan for a Config: spreadsheets, reads per round, the quota arithmetic and warnings."""
    google, run = config.google, config.run
    count = len(config.sheets)
    credentials = len(google.credentials)
    per, project = google.read_requests_per_minute, google.project_read_requests_per_minute
    interval = run.round_interval.total_seconds()
    budget = run.budget.total_seconds()
    plan: dict[str, Any] = {
        "config": str(config.path),
        "state_dir": str(run.state_dir),
        "spreadsheets": count,
        "checks": sum(len(sheet.checks) for sheet in config.sheets),
        "ranges": sum(len(sheet.ranges) for sheet in config.sheets),
        "reads_per_round": count,  # one values:batchGet per spreadsheet, whatever its ranges
        "drive_reads_per_round": sum(1 for sheet in config.sheets if sheet.needs_modified_time),
        "credentials": credentials,
        "read_requests_per_minute": per,
        "project_read_requests_per_minute": project,
        "reads_per_minute": min(credentials * per, project),
        "round_interval_seconds": interval,
        "budget_seconds": budget,
        "round_seconds": None,
        "fits": None,
        "credentials_needed": credentials_needed(count, interval, per, project) if count else 0,
        "runs_per_round": None,
    }
    warnings = list(config.warnings)
    if credentials == 0:
        plan["summary"] = f"{count} spreadsheets, no credentials: nothing can be read"
        plan["warnings"] = warnings
        return plan
    seconds = round_estimate(count, credentials, per, project)
    fits = seconds <= interval
    plan.update(round_seconds=round(seconds, 1), fits=fits,
                runs_per_round=max(1, math.ceil(seconds / budget)) if count else 0)
    accounts = f"{credentials} credential{'s' if credentials != 1 else ''} at {per}/min"
    capped = f" (capped by the project quota of {project}/min)" if credentials * per > project else ""
    plan["summary"] = (
        f"{count} spreadsheets, {accounts}{capped}: a full round needs at least "
        f"{seconds / 60:.1f} min of quota; round_interval {format_duration(run.round_interval)}: "
        f"{'fits' if fits else 'does not fit'}"
    )
    if not fits:
        warnings.append(_quota_warning(count, credentials, seconds, plan["credentials_needed"], config))
    plan["warnings"] = warnings
    return plan


def _quota_warning(count: int, credentials: int, seconds: float, needed: int | None, config: Config) -> str:
    interval = format_duration(config.run.round_interval)
    head = (f"a full round of {count} spreadsheets needs {seconds / 60:.1f} min of quota but "
            f"round_interval is {interval}: rounds run back to back and each takes longer than planned")
    if needed is None:
        project = config.google.project_read_requests_per_minute
        least = format_duration(timedelta(minutes=math.ceil(count / project)))
        return (f"{head}; the project quota ({project}/min) alone cannot read them within {interval}: "
                f"ask Google for a higher project quota or set round_interval to at least {least}")
    return f"{head}; {needed} credentials would fit it (you have {credentials})"
