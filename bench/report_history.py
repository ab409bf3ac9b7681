"""How much the status page's history adds to the state, at 700 and 5,000 spreadsheets, and what one
run writes for it: bytes, each document encoded as the state stores it.

A week (``[report] keep``'s default) of runs every 5 minutes, each reading through 3 credentials of
one project (or 5 credentials in 2 projects: the record names each), and per spreadsheet its verdict
changes as monitor.app.demo_history makes them (most ok all along, some with bad episodes, a few
flapping) plus its 8 last read times; then the worst case, every spreadsheet at the 48 changes kept.

    .venv/bin/python bench/report_history.py [--sheets 700 5000]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.app.demo_history import add_generated_history  # noqa: E402
from monitor.engine.health import FAIL, OK, READ_TIMES_KEPT, VERDICT_CHANGES_KEPT, SheetHealth, VerdictChange  # noqa: E402,E501
from monitor.engine.runner_state import RunnerState  # noqa: E402
from monitor.state.schema import HEALTH, RUNLOG  # noqa: E402

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
WEEK, TICK, BUDGET = timedelta(days=7), timedelta(minutes=5), timedelta(minutes=6)


def history_bytes(record: SheetHealth) -> int:
    """What the history adds to a health record: its encoded size less that of the record without it."""
    bare = SheetHealth(record.health, since=record.since, last_checked_at=record.last_checked_at)
    return len(HEALTH.encode(record)) - len(HEALTH.encode(bare))


def with_credentials(state: RunnerState, names: list[str], projects: list[str]) -> None:
    """Every run's record reads through ``names`` (3 of one project; 5 in 2): its by-credential map."""
    for hour, document in list(state.runlog.items()):
        runs = tuple(replace(run, counts=replace(run.counts, reads_by_credential={name: 40 for name in names},
                                                  reads_by_project={project: 60 for project in projects}))
                     for run in document.runs)
        state.runlog[hour] = type(document)(runs)


def measure(sheets: int) -> None:
    ids = [f"1sheet{n:05d}".ljust(44, "x") for n in range(sheets)]
    state = RunnerState(health={sid: SheetHealth(OK, since=NOW - WEEK) for sid in ids})
    runs = add_generated_history(state, ids, NOW, WEEK, TICK, BUDGET, {"monitor-prod": 300})
    for shape, names, projects in (("3 credentials, 1 project", 3, 1), ("5 credentials, 2 projects", 5, 2)):
        with_credentials(state, [f"/etc/sheet-monitor/keys/monitor-{n}.json" for n in range(names)],
                         [f"monitor-prod-{n}" for n in range(projects)])
        hours = {hour: len(RUNLOG.encode(document)) for hour, document in state.runlog.items()}
        print(f"  run log, {shape}: {runs} runs in {len(hours)} keys, {sum(hours.values()) / 1e3:,.0f} KB; "
              f"a run writes its hour's document: at most {max(hours.values()):,} bytes")
    times = tuple(0.412 for _ in range(READ_TIMES_KEPT))
    typical = [history_bytes(SheetHealth(OK, since=NOW, changes=state.health[sid].changes,
                                         read_seconds=times)) for sid in ids]
    flapping = tuple(VerdictChange(NOW - timedelta(minutes=5 * n), (OK, FAIL)[n % 2])
                     for n in range(VERDICT_CHANGES_KEPT))
    worst = history_bytes(SheetHealth(OK, since=NOW, read_seconds=times, changes=flapping))
    print(f"  health records: +{sum(typical) / len(typical):.0f} bytes per spreadsheet on average "
          f"(max {max(typical):,}), {sum(typical) / 1e3:,.0f} KB in all; worst case (every one at "
          f"{VERDICT_CHANGES_KEPT} changes) +{worst:,} bytes each, {worst * sheets / 1e6:.1f} MB in all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000])
    for sheets in parser.parse_args().sheets:
        print(f"{sheets} spreadsheets, a week of runs every 5 minutes:")
        measure(sheets)


if __name__ == "__main__":
    main()
