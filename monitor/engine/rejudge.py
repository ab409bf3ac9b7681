"""Judging a spreadsheet that has not changed since its last read, without reading it.

A round that reads only what changed (``monitor.engine.change_detection``) must still catch a spreadsheet that
silently goes stale: its freshness checks depend on the clock as much as on the values. The last
read stored the newest moment each freshness check found (``SheetHealth.moments``); judging those
again at ``now`` gives what a read would give, for the price of no request. Every other check's
result cannot change without a change of values, so its finding (or its silence) is kept as it was.
"""

from __future__ import annotations

from datetime import datetime

from monitor.checks import CheckResult, FreshnessCheck, judge_age, worst
from monitor.core.timefmt import parse_utc
from monitor.engine.health import Finding, Health, Moment, SheetHealth
from monitor.engine.inspect import SheetPlan, zone_of


def moments_of(results: list[CheckResult]) -> tuple[Moment, ...]:
    """What a read's results must leave behind for its freshness checks to be judged again: the
    newest moment each one found (a check that found no date has none and keeps its finding)."""
    return tuple(
        Moment(result.check_name, parse_utc(result.observed), result.cells[0] if result.cells else None)
        for result in results if result.kind == "freshness" and result.observed is not None
    )


def rejudged(plan: SheetPlan, record: SheetHealth, now: datetime
             ) -> tuple[Health, tuple[Finding, ...]] | None:
    """The verdict and findings ``plan``'s spreadsheet has at ``now`` with the values of its last read;
    None when nothing in it depends on time (its verdict stands until its values change), or when the
    zone its dates need is not known (such a spreadsheet is read, not judged again:
    monitor.engine.change_detection).
    Moments are instants; the zone only says how the newest one is shown, as its read showed it."""
    if not record.moments or (plan.needs_time_zone and record.time_zone is None):
        return None
    zone = zone_of(plan, record.time_zone)  # a kept name is a zone: kept once known to be one
    moments = {moment.check: moment for moment in record.moments}
    kept = {finding.check: finding for finding in record.findings}
    findings: list[Finding] = []
    for check in plan.checks:
        moment = moments.get(check.name)
        if isinstance(check, FreshnessCheck) and moment is not None:
            result = judge_age(check, moment.at, moment.cell, now, zone)
            if result.is_finding:
                findings.append(Finding.of(result, check))
        elif check.name in kept:
            findings.append(kept[check.name])
    return worst(finding.status for finding in findings), tuple(findings)
