"""A week of made-up history for the demo's status page and the benchmarks: the demo runs one round,
which alone would draw charts of one point. What is generated is said where it is shown.

Runs every ``interval`` before ``before`` (duration, reads per project, 429s, retries, the fleet by
health) and, per spreadsheet, verdict changes: most stay ok all along, some have a few bad episodes,
a few flap. Seeded: the same seed makes the same history.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.engine.health import FAIL, OK, VERDICT_CHANGES_KEPT, WARN, Health, SheetHealth, VerdictChange
from monitor.engine.heartbeat import RunOutcome
from monitor.engine.run_counts import RunCounts
from monitor.engine.runlog import RunRecord, add_run
from monitor.engine.runner_state import RunnerState

FLAPPING, TROUBLED = 0.03, 0.15  # shares of spreadsheets that flap, that have a few bad episodes


def add_generated_history(state: RunnerState, sheet_ids: Sequence[str], before: datetime, keep: timedelta,
                          interval: timedelta, budget: timedelta, quotas: Mapping[str, int],
                          seed: int = 7) -> int:
    """Put made-up runs and verdict changes into ``state`` for the ``keep`` before ``before`` (kept
    changes come first in each record); the number of runs made."""
    rng = random.Random(seed)
    start = before - keep
    timelines = {sid: _timeline(rng, start, before) for sid in sheet_ids}
    for sid, changes in timelines.items():
        record = state.health.get(sid) or SheetHealth()
        state.health[sid] = replace(record, changes=(*changes, *record.changes)[-VERDICT_CHANGES_KEPT:])
    moments = sorted((change.at, sid, change.health)
                     for sid, changes in timelines.items() for change in changes)
    current: dict[str, Health] = {}
    runs, at, n = 0, start + interval, 0
    while at < before:
        while n < len(moments) and moments[n][0] <= at:
            current[moments[n][1]] = moments[n][2]
            n += 1
        add_run(state.runlog, _run(rng, runs, at, budget, quotas, Counter(current.values())), before, keep)
        runs, at = runs + 1, at + interval
    return runs


def _timeline(rng: random.Random, start: datetime, end: datetime) -> tuple[VerdictChange, ...]:
    kind = rng.random()
    changes = [VerdictChange(start + timedelta(minutes=rng.randint(1, 30)), OK)]
    episodes = 0 if kind > FLAPPING + TROUBLED else rng.randint(1, 3) if kind > FLAPPING else 20
    span = (end - start).total_seconds()
    for at in sorted(rng.uniform(0.05, 0.95) * span for _ in range(episodes)):
        began = start + timedelta(seconds=at)
        if began <= changes[-1].at:
            continue
        lasted = timedelta(minutes=rng.choice((5, 10, 30, 90, 240)))
        changes.append(VerdictChange(began, rng.choice((WARN, FAIL))))
        if began + lasted < end:
            changes.append(VerdictChange(began + lasted, OK))
    return tuple(changes)


def _run(rng: random.Random, n: int, at: datetime, budget: timedelta, quotas: Mapping[str, int],
         health: Counter) -> RunRecord:
    duration = min(rng.gauss(45, 8) + (60 if rng.random() < 0.03 else 0), budget.total_seconds())
    by_project = {project: int(limit * rng.uniform(0.3, 0.7) * duration / 60)
                  for project, limit in quotas.items()}
    refusals = 1 if rng.random() < 0.02 else 0
    retries = {"transient": rng.randint(0, 3)} if rng.random() < 0.2 else {}
    return RunRecord(
        run_id=f"run-{at.strftime('%Y%m%dT%H%M%SZ')}-demo{n:04d}", started_at=at,
        duration_seconds=round(max(duration, 5.0), 1), budget_seconds=budget.total_seconds(),
        outcome=RunOutcome.OK if not refusals else RunOutcome.DEGRADED,
        counts=RunCounts(reads_by_credential={"(generated)": sum(by_project.values())},
                         reads_by_project=by_project, quota_refusals=refusals, retries_by_class=retries),
        health={str(name): count for name, count in sorted(health.items())},
    )
