"""Peak memory and start-up time of `sheet-monitor run` processes, at 700, 5,000 and 20,000 spreadsheets.

Serves N generated spreadsheets from a sandbox process (quotas out of the way, injected faults removed so
the round is not spent waiting on hanging and slow spreadsheets: memory depends on what the run holds,
not on how long it waits), then starts `python -m monitor.cli run --config ... --budget ...` as a child
process, exactly as cron would, twice:

- the first run builds the round and the state from nothing and checks every spreadsheet (the round
  interval is a day, so the run ends when its round is done);
- the second starts from the full state the first left with the round interval cut to one second, so
  it builds a new round at once and checks every spreadsheet again: the steady case cron sees, doing
  real work. Its budget is the first run's time plus a margin (with a one-second interval a run would
  start round after round until its budget is spent).

For each run: the child's peak resident set size from ``os.wait4`` (the kernel's ru_maxrss for that one
process), how many spreadsheets it read (from its log), and its start-up: from the moment the process
is started to the moment its first read request goes out (the first ``task_*`` log line's time minus
its duration). Targets: peak under 100 MB at 5,000 and under 200 MB at 20,000; start-up under 0.5 s at
5,000.

    .venv/bin/python bench/run_memory.py [--sheets 700 5000 20000] [--budget 1200]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, served_dataset  # noqa: E402

TARGETS_MB = {5000: 100.0, 20000: 200.0}
STARTUP_TARGET_S = 0.5
HUGE_QUOTA = 10**8


def run_child(config: Path, budget: float) -> dict:
    """One `sheet-monitor run` as cron starts it: exit code, peak RSS, reads, start-up."""
    env = {key: value for key, value in os.environ.items() if key != "TELEGRAM_BOT_TOKEN"}
    started_at = time.time()
    child = subprocess.Popen(
        [sys.executable, "-m", "monitor.cli", "run", "--config", str(config), "--budget", str(budget)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )
    stderr = child.stderr.read()  # drain it, or a chatty run would block on a full pipe
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.time() - started_at
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    reads = [line for line in lines if line.get("event", "").startswith("task_") and "duration_ms" in line]
    first_request = None
    if reads:
        first = reads[0]
        logged_at = datetime.fromisoformat(first["ts"].replace("Z", "+00:00")).timestamp()
        first_request = logged_at - first["duration_ms"] / 1000
    return {
        "code": os.waitstatus_to_exitcode(status), "peak_mb": usage.ru_maxrss / 1024, "wall_s": wall,
        "reads": len(reads), "startup_s": None if first_request is None else first_request - started_at,
        "last": lines[-1] if lines else stderr.strip()[-300:],
    }


def measure(sheets: int, budget: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=sheets, credentials=1, per_user=HUGE_QUOTA, per_project=HUGE_QUOTA, faults=False,
        run={"round_interval": "24h"}, latency="off",
    ) as config:
        first = run_child(config, budget)
        first["label"] = "first run (fresh state)"
        config.write_text(config.read_text().replace('round_interval = "24h"', 'round_interval = "1s"'))
        second = run_child(config, max(30.0, first["wall_s"] * 1.2))
        second["label"] = "second run (full state, a new round)"
    return [first, second]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000, 20000])
    parser.add_argument("--budget", type=int, default=1200, help="seconds for the first run (default 1200)")
    args = parser.parse_args()
    ok = True
    for sheets in args.sheets:
        for run in measure(sheets, args.budget):
            target = TARGETS_MB.get(sheets)
            ratio = f" (target {target:.0f} MB: ratio {run['peak_mb'] / target:.2f})" if target else ""
            startup = f"{run['startup_s']:.2f} s" if run["startup_s"] is not None else "-"
            print(f"{sheets:>6} spreadsheets, {run['label']}: exit {run['code']}, {run['reads']} reads in "
                  f"{run['wall_s']:.1f} s, start-up to the first request {startup}, peak RSS "
                  f"{run['peak_mb']:.1f} MB{ratio}", flush=True)
            if run["code"] != 0 or run["reads"] < sheets:
                print(f"  did not check every spreadsheet; last log line: {run['last']}")
                ok = False
            if target and run["peak_mb"] >= target:
                ok = False
            if sheets == 5000 and (run["startup_s"] or 0) >= STARTUP_TARGET_S:
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
