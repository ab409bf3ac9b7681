"""Runner overhead per task: everything a run spends except waiting for the API or sleeping.

Serves N generated spreadsheets from a sandbox process with quotas out of the way and zero added
latency, runs one `run` over them in this process, and subtracts the time spent inside the reader's
requests and in deliberate sleeps (retry waits) from the wall time. Target: under 5 ms per task at
700 and at 5,000 spreadsheets.

    .venv/bin/python bench/run_overhead.py [--sheets 700 5000] [--checkpoint-every 0.2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SleepCountingClock, TimedReader, served_dataset  # noqa: E402

from monitor.app.run import _gspread_reader, run_once  # noqa: E402
from monitor.config import load_config  # noqa: E402

TARGET_MS = 5.0


def measure(sheets: int, checkpoint_every: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=sheets, credentials=1, per_user=10**8, per_project=10**8
    ) as config_path:
        config = load_config(config_path)
        timed: list[TimedReader] = []

        def reader_factory(cfg, timeout):
            timed.append(TimedReader(_gspread_reader(cfg, timeout)))
            return timed[0]

        clock = SleepCountingClock()
        started = time.perf_counter()
        result = run_once(config, budget=timedelta(minutes=30), clock=clock, reader_factory=reader_factory,
                          checkpoint_every=checkpoint_every)
        wall = time.perf_counter() - started
    report = result.report
    overhead = wall - timed[0].seconds - clock.slept
    return {"sheets": sheets, "tasks": report.tasks, "wall_s": wall, "api_s": timed[0].seconds,
            "slept_s": clock.slept, "overhead_ms_per_task": 1000 * overhead / max(report.tasks, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000])
    parser.add_argument("--checkpoint-every", type=float, default=0.2,
                        help="seconds between merged checkpoints (the production setting)")
    args = parser.parse_args()
    for sheets in args.sheets:
        m = measure(sheets, args.checkpoint_every)
        print(f"{m['sheets']:>5} spreadsheets: {m['tasks']} tasks, wall {m['wall_s']:.1f} s, "
              f"API {m['api_s']:.1f} s, slept {m['slept_s']:.1f} s -> overhead "
              f"{m['overhead_ms_per_task']:.2f} ms/task (target {TARGET_MS} ms: "
              f"ratio {m['overhead_ms_per_task'] / TARGET_MS:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
