"""Round time on the engine's own clock: round_time.py's cases with no CPU, network or sandbox in the way.

``Run`` reads through ``SimulatedReads`` on a ManualClock, as tests/unit/engine/test_run_concurrent.py
drives it: 5 credentials of one project (300 reads a window), each spreadsheet's read 0.6 to 1.6 x
``--latency`` (fixed by seed), every read answered. What it times is the engine's own pacing (the
pacer, the reads in flight, the first read of each credential alone), against the least time the
rolling window allows, floor((N - 1) / 300) x 60 s + the mean read. A full round is first reads (grid
reads, each learning its zone with the values), a burst is batchGets. ``--monitor-root`` runs another
checkout's engine (and its test helpers), for before/after figures.

    .venv/bin/python bench/round_time_engine.py [--latency 0.45] [--ceiling 64] [--monitor-root PATH]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = [("full round", 708, True), ("full round", 1158, True), ("burst", 351, False), ("burst", 519, False)]


def case(count: int, dated: bool, ceiling: int, latency: float) -> tuple[float, float]:
    """(the round's seconds, the least time) for ``count`` reads."""
    from run_fixtures import RANGE, Bench, ScriptedReader, SimulatedReads

    from monitor.checks import FormulaErrorsCheck, FreshnessCheck
    from monitor.engine.inspect import SheetPlan
    from monitor.storage import MemoryLocation

    rng, times, made = random.Random(3), {}, []

    def seconds(sheet: str) -> float:
        return times.setdefault(sheet, latency * rng.choice([0.6, 0.8, 1.0, 1.0, 1.2, 1.6]))

    reader = ScriptedReader()
    checks = (FreshnessCheck(range=RANGE, warn="> 2h"),) if dated else (FormulaErrorsCheck(range=RANGE),)
    plans = [SheetPlan(f"s{n}", f"Store {n}", checks, (RANGE,)) for n in range(count)]
    bench = Bench(reader, plans, MemoryLocation(), credentials=tuple(f"sa-{n}" for n in range(5)),
                  make_reads=lambda clock: made.append(SimulatedReads(reader, clock, seconds)) or made[-1])
    run = bench.run(max_in_flight=ceiling, budget=timedelta(minutes=20))
    if not run.state.round.is_complete():
        raise SystemExit(f"the round of {count} did not complete")
    started = made[0].started
    mean = sum(seconds(sheet) for sheet, _ in started) / len(started)
    return run.report.duration_seconds, math.floor((count - 1) / 300) * 60 + mean


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.45, help="a read's typical seconds")
    parser.add_argument("--ceiling", type=int, default=64, help="max_concurrent_reads")
    parser.add_argument("--monitor-root", type=Path, help="run the engine of this checkout instead")
    args = parser.parse_args()
    root = args.monitor_root or ROOT
    sys.path[:0] = [str(root), str(root / "tests")]
    met = True
    for name, count, dated in CASES:
        took, least = case(count, dated, args.ceiling, args.latency)
        met = met and took <= 1.05 * least
        print(f"{name} of {count} reads: {took:.1f} s, least {least:.1f} s, ratio {took / least:.3f}",
              flush=True)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
