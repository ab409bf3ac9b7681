"""What sharing a Redis state costs a runner: one claim per read, one re-read per turn.

For a round of N spreadsheets, each with a health record (a state as a round leaves it): the median
and p90 of one claim (the compare-and-set script that leases a task and reads back its spreadsheet's
five documents), over a few hundred; and one turn (take the round lock, re-read the whole hash,
decode it, put it in the runner's memory, save, let go). The target: a claim flat in N and well
under a read's 0.4 s; a turn, taken a few times per run, proportional to N.

    .venv/bin/python bench/shared_claims.py [--sheets 700 20000] [--claims 300] [--url redis://...]

Uses the Redis at ``--url`` (default: the tests' SHEET_MONITOR_TEST_REDIS or 127.0.0.1:6379/0)
under a fresh prefix, deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.engine.health import OK, SheetHealth  # noqa: E402
from monitor.engine.tasks import PROCESSING, Round  # noqa: E402
from monitor.state import changing_state, own_lock  # noqa: E402
from monitor.state.shared import SharedState, prepare  # noqa: E402
from monitor.storage.redis_store import RedisLocation  # noqa: E402

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def seed(url: str, prefix: str, sheets: int) -> None:
    with changing_state(RedisLocation(url, prefix=prefix), actor="bench", now=NOW) as session:
        ids = [f"sheet-{n:06d}" for n in range(sheets)]
        session.state.round = Round.build(ids, NOW)
        for sheet_id in ids:
            session.state.health[sheet_id] = SheetHealth(health=OK, last_checked_at=NOW, read_at=NOW)


def measure(url: str, sheets: int, claims: int) -> tuple[list[float], float]:
    prefix = f"sheet-monitor-bench:{uuid.uuid4().hex}"
    location = RedisLocation(url, prefix=prefix)
    try:
        seed(url, prefix, sheets)
        prepare(location, "bench", 10.0)
        with changing_state(location, actor="run-bench", now=NOW, runner="bench",
                            lock=own_lock("bench")) as session:
            sharing = SharedState(session, location, "bench", "run-bench", 10.0)
            tasks = list(session.state.round.tasks.values())[:claims]
            times = []
            for task in tasks:
                started = time.perf_counter()
                sharing.claim(task, replace(task, status=PROCESSING, run_id="run-bench"))
                times.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            with sharing.turn():
                pass
            turn = (time.perf_counter() - started) * 1000
            sharing.close()
        return times, turn
    finally:
        client = location.client
        keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
        if keys:
            client.delete(*keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 20000])
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--url", default=os.environ.get("SHEET_MONITOR_TEST_REDIS", "redis://127.0.0.1:6379/0"))
    args = parser.parse_args()
    print(f"{'sheets':>8} {'claim p50 ms':>13} {'claim p90 ms':>13} {'turn ms':>9}")
    for sheets in args.sheets:
        times, turn = measure(args.url, sheets, min(args.claims, sheets))
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"{sheets:>8} {statistics.median(times):>13.2f} {p90:>13.2f} {turn:>9.0f}")


if __name__ == "__main__":
    main()
