"""Peak memory of a `sheet-monitor run` process over N spreadsheets (SPEC 13: under 150 MB at 5,000).

Serves N generated spreadsheets from a sandbox process (quotas out of the way, injected faults removed
so the round is not spent waiting on hanging and slow spreadsheets: memory depends on what the run
holds, not on how long it waits), then starts `python -m monitor.cli run --config ... --budget ...`
as a child process, exactly as cron would, and reads that child's peak resident set size from
``os.wait4`` (the kernel's ru_maxrss for that one process, in KiB on Linux). Runs the command twice:
the first run builds the round and the state file from nothing, the second loads a full state file
and carries on, which is the steady case cron sees.

    .venv/bin/python bench/run_memory.py [--sheets 5000] [--budget 240]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, served_dataset  # noqa: E402

TARGET_MB = 150.0
HUGE_QUOTA = 10**8


def run_child(config: Path, budget: int) -> tuple[int, float, float, str]:
    """(exit code, peak RSS in MB, wall seconds, last stderr line) of one `sheet-monitor run`."""
    env = {key: value for key, value in os.environ.items() if key != "TELEGRAM_BOT_TOKEN"}
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "monitor.cli", "run", "--config", str(config), "--budget", str(budget)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )
    stderr = child.stderr.read()  # drain it, or a chatty run would block on a full pipe
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return child.returncode, usage.ru_maxrss / 1024, wall, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=5000)
    parser.add_argument("--budget", type=int, default=240, help="seconds per run (default 240)")
    args = parser.parse_args()
    peaks = []
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=args.sheets, credentials=1, per_user=HUGE_QUOTA, per_project=HUGE_QUOTA
    ) as config:
        base = next(line.split("=", 1)[1].strip().strip('"') for line in config.read_text().splitlines()
                    if line.startswith("api_endpoint"))
        with requests.Session() as control:
            control.trust_env = False  # never through a proxy: the sandbox is on 127.0.0.1
            control.delete(f"{base}/_sandbox/faults", timeout=10).raise_for_status()
        for label in ("first run (fresh state)", "second run (full state)"):
            code, peak, wall, last = run_child(config, args.budget)
            peaks.append(peak)
            print(f"{args.sheets} spreadsheets, {label}: exit {code}, {wall:.1f} s, peak RSS {peak:.1f} MB "
                  f"(target {TARGET_MB:.0f} MB: ratio {peak / TARGET_MB:.2f})")
            if code != 0:
                print(f"  last log line: {last}")
    return 0 if max(peaks) < TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
