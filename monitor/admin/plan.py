"""What `check-config` prints: the plan for a config, with the quota arithmetic of a round.

Quotas are per Google Cloud project: each project's credentials together may read at most
``project_read_requests_per_minute``, and the projects add up. How long a round takes also depends on
how long a read takes: with ``W`` reads in flight (``reads_in_flight``: ``max_concurrent_reads``
while the window has room) a round of N reads of L seconds cannot be shorter than N x L / W.

A full round's reads are one request per spreadsheet: a ``values:batchGet``, or for one whose zone is
due (a freshness check on a range: its first read, then daily, ``monitor.engine.zone_refresh``) one
``spreadsheets.get`` that gives the values and the zone, still one read. With change detection most
rounds read fewer, how many ``monitor.admin.change_plan`` estimates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from monitor.admin.change_plan import DEFAULT_EDIT_SHARES, change_detection_plan
from monitor.config import MAX_CONCURRENT_READS, Config
from monitor.core.durations import format_duration
from monitor.core.wording import counted
from monitor.engine.concurrency import TYPICAL_READ_SECONDS, reads_in_flight, round_time_at_latency
from monitor.engine.pacer import Growth, credentials_needed
from monitor.engine.settings import LEAST_BUDGET_SECONDS, RESERVE_SECONDS

MEASURED, TYPICAL = "the last run's mean", "typical of Google; no run has measured one yet"


def config_plan(config: Config, read_seconds: float | None = None,
                edit_shares: Sequence[float] = DEFAULT_EDIT_SHARES) -> dict[str, Any]:
    """The plan for a Config: spreadsheets, reads per round, the quota arithmetic per project, the
    round time at the quota and at ``read_seconds`` (the last run's mean read time; None: typical),
    and with change detection the reads per round at each of ``edit_shares`` (0 to 1)."""
    google, run = config.google, config.run
    count = len(config.sheets)
    interval = run.round_interval.total_seconds()
    projects = _projects(config, count)
    rate = sum(project["reads_per_minute"] for project in projects)
    sizes = {project["project"]: len(project["credentials"]) for project in projects}
    latency = read_seconds if read_seconds else TYPICAL_READ_SECONDS
    plan: dict[str, Any] = {
        "config": str(config.path),
        "state_dir": str(run.state_dir),
        "spreadsheets": count,
        "checks": sum(len(sheet.checks) for sheet in config.sheets),
        "ranges": sum(len(sheet.ranges) for sheet in config.sheets),
        # One read per spreadsheet whatever its ranges, its time zone, when due, in the same one.
        "reads_per_round": count,
        "drive_reads_per_round": sum(1 for sheet in config.sheets if sheet.needs_modified_time),
        "credentials": len(google.credentials),
        "read_requests_per_minute": google.read_requests_per_minute,
        "project_read_requests_per_minute": google.project_read_requests_per_minute,
        "projects": projects,
        "reads_per_minute": rate,
        "max_concurrent_reads": google.max_concurrent_reads,
        "read_seconds": latency,
        "read_seconds_source": "last_run" if read_seconds else "typical",
        "reads_in_flight": None,
        "round_interval_seconds": interval,
        "budget_seconds": run.budget.total_seconds(),
        "round_seconds": None,
        "round_seconds_at_latency": None,
        "fits": None,
        "credentials_needed": None,
        "projects_needed": None,
        "to_add": None,
        "runs_per_round": None,
        "change_detection": change_detection_plan(config, sizes if rate else {}, latency, edit_shares),
        "cross_sheet": _cross_sheet(config),
    }
    warnings = list(config.warnings)
    if (cut := _reads_cut_warning(config)) is not None:
        warnings.append(cut)
    if not rate:
        plan["summary"] = f"{count} spreadsheets, no credentials: nothing can be read"
        plan["warnings"] = warnings
        return plan
    _add_round(plan, config, sizes)
    if not plan["fits"]:
        warnings.append(_round_warning(plan, config))
    plan["warnings"] = warnings
    return plan


def _reads_cut_warning(config: Config) -> str | None:
    """A budget that leaves less time to read than ``request_timeout``: every read is cut to the time
    left, and one still unanswered when the budget ends counts as a timeout, so a spreadsheet slower
    than that fails in every run. (One too short to read at all is refused: admin.preflight.)"""
    budget, timeout = config.run.budget.total_seconds(), config.google.request_timeout.total_seconds()
    reading = budget - RESERVE_SECONDS
    if budget < LEAST_BUDGET_SECONDS or reading >= timeout:
        return None
    left = format_duration(timedelta(seconds=reading))
    enough = format_duration(timedelta(seconds=timeout + RESERVE_SECONDS))
    return (f"run.budget ({format_duration(config.run.budget)}) leaves {left} for reading, after the "
            f"{RESERVE_SECONDS:g}s a run keeps to save: less than google.request_timeout "
            f"({format_duration(config.google.request_timeout)}), so a spreadsheet that takes longer "
            f"than {left} to answer times out in every run and is reported as failing; set budget = "
            f'"{enough}" or more, or request_timeout = "{left}"')


def _cross_sheet(config: Config) -> dict[str, int]:
    """What cross-sheet checks cost: each other side is a range added to its own spreadsheet's batchGet
    (counted in ``ranges``), read when that spreadsheet is; a change of it judges aggregate dependents
    again from their last read, no request of their own, and has keys dependents read in the next
    round: with change detection, one read each per change of the keys (monitor.engine.history)."""
    keys = {check.name for sheet in config.sheets for check in sheet.checks
            if check.kind == "cross_sheet" and check.match == "keys"}
    return {"checks": sum(len(sheet.others) for sheet in config.sheets),
            "ranges_lent": sum(len(sheet.lends) for sheet in config.sheets),
            "extra_reads_per_round": 0,
            "reads_per_change_of_keys": sum(1 for sheet in config.sheets
                                            if any(name in keys for name, _ in sheet.others))}


def _projects(config: Config, reads: int) -> list[dict[str, Any]]:
    """Each project: its credentials, the reads per minute it allows, and the round (``reads``) it
    reads alone."""
    google = config.google
    rows = []
    for project, members in google.projects.items():
        could = len(members) * google.read_requests_per_minute
        rate = min(could, google.project_read_requests_per_minute)
        rows.append({"project": project, "credentials": [str(path) for path in members],
                     "reads_per_minute": rate, "capped": could > rate,
                     "round_seconds_alone": round(reads * 60 / rate, 1)})
    return rows


def _add_round(plan: dict[str, Any], config: Config, sizes: dict[str, int]) -> None:
    """The round's times, whether it fits, what would make it fit, and the summary line."""
    google = config.google
    reads, rate, latency = plan["reads_per_round"], plan["reads_per_minute"], plan["read_seconds"]
    interval = plan["round_interval_seconds"]
    at_quota = reads * 60 / rate
    at_latency = round_time_at_latency(reads, rate, latency, google.max_concurrent_reads)
    # A key naming no project, or not read, is a group of its own: nothing can be added to it.
    known = set(google.credential_projects.values())
    growth = credentials_needed(reads, interval, sizes, google.read_requests_per_minute,
                                google.project_read_requests_per_minute,
                                closed=[project for project in sizes if project not in known])
    fits = at_latency <= interval
    plan.update(
        reads_in_flight=reads_in_flight(rate, google.max_concurrent_reads),  # rate: a window's reads
        round_seconds=round(at_quota, 1), round_seconds_at_latency=round(at_latency, 1), fits=fits,
        credentials_needed=plan["credentials"] + growth.credentials,
        projects_needed=len(sizes) + len(growth.new_projects),
        to_add={"credentials": dict(growth.added), "new_projects": list(growth.new_projects)},
        runs_per_round=max(1, math.ceil(at_latency / plan["budget_seconds"])) if reads else 0,
    )
    plan["summary"] = _summary(plan, config, at_quota, at_latency)


def _summary(plan: dict[str, Any], config: Config, at_quota: float, at_latency: float) -> str:
    google = config.google
    credentials, projects = plan["credentials"], len(plan["projects"])
    accounts = f"{counted(credentials, 'credential')} at {google.read_requests_per_minute}/min"
    if projects > 1:
        accounts += f" in {projects} projects"
    capped = [project["project"] for project in plan["projects"] if project["capped"]]
    if capped:
        which = "" if projects == 1 else f" of {', '.join(capped)}"
        accounts += f" (capped by the project quota{which} of {google.project_read_requests_per_minute}/min)"
    slower = ""
    if at_latency > at_quota:
        slower = f", {at_latency / 60:.1f} min at {plan['read_seconds']:.2f} s a read"
    return (f"{plan['spreadsheets']} spreadsheets, {accounts}: a full round needs at least "
            f"{at_quota / 60:.1f} min of quota{slower}; round_interval "
            f"{format_duration(config.run.round_interval)}: {'fits' if plan['fits'] else 'does not fit'}")


def _round_warning(plan: dict[str, Any], config: Config) -> str:
    interval = format_duration(config.run.round_interval)
    count, latency = plan["spreadsheets"], plan["read_seconds"]
    if plan["round_seconds_at_latency"] > plan["round_interval_seconds"] >= plan["round_seconds"]:
        ceiling = config.google.max_concurrent_reads
        # in flight for the interval
        wanted = math.ceil(plan["reads_per_round"] * latency / plan["round_interval_seconds"])
        fix = (f"raise max_concurrent_reads to {wanted}" if ceiling < wanted <= MAX_CONCURRENT_READS
               else f"set round_interval to at least {_minutes(plan['round_seconds_at_latency'])}")
        return (f"a full round of {count} spreadsheets at {latency:.2f} s a read with at most {ceiling} "
                f"reads in flight takes {plan['round_seconds_at_latency'] / 60:.1f} min but round_interval "
                f"is {interval}: {fix}")
    head = (f"a full round of {count} spreadsheets needs {plan['round_seconds'] / 60:.1f} min of quota but "
            f"round_interval is {interval}: rounds run back to back and each takes longer than planned")
    to_add = plan["to_add"]
    growth = Growth(to_add["credentials"], tuple(to_add["new_projects"]))
    have = f"you have {plan['credentials']} in {counted(len(plan['projects']), 'project')}"
    advice = f"{head}; {_growth_text(growth)} would fit it ({have})"
    if growth.new_projects:
        least = _minutes(plan["round_seconds"])
        advice += (f"; or ask Google for a higher project quota, or set round_interval to at least {least}")
    return advice


def _growth_text(growth: Growth) -> str:
    parts = [f"{n} in {project}" for project, n in growth.added.items()]
    if growth.new_projects:
        new = len(growth.new_projects)
        each = f" (at most {max(growth.new_projects)} each)" if new > 1 else ""
        parts.append(f"{sum(growth.new_projects)} in {counted(new, 'new Google Cloud project')}{each}")
    return f"{counted(growth.credentials, 'more credential')} ({'; '.join(parts)})"


def _minutes(seconds: float) -> str:
    return format_duration(timedelta(minutes=math.ceil(seconds / 60)))


