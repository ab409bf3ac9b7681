"""Round time against the quota: one full round of N spreadsheets, with 1 and with 3 credentials.

Target: a round of 700 spreadsheets finishes in the time the quota allows, 700 / (total reads per
minute), plus at most 10 %, with zero 429s. Total reads per minute is min(credentials x per-user
quota, project quota).

Scaling, to keep the bench short: the real quota (60 reads/min per credential, 300/min per project)
would make the 1-credential round last ~12 minutes. By default both the sandbox and the monitor's
config get quotas x10 (600/min per credential, 3000/min per project), and the ratio is taken against
the scaled allowance, N / (scaled reads per minute). The window stays Google's rolling 60 s, so the
scaled run packs ~10x the reads into each window; what scaling cannot show is the pacer's safety
margin (1 s per 60 s window, ~1.7 % of a long round), which weighs the same at any scale only when
the round spans many windows. A round smaller than one window's allowance (3 credentials: 1,800
reads/min > 700) is bounded by the run's own speed, not by the quota, and its ratio is well below 1.
``--scale 1`` runs the real quotas (about 12 minutes with one credential).

The sandbox runs in its own process with zero added latency and its injected faults removed (slow,
hanging and flaky spreadsheets would measure retries and timeouts, not pacing): every spreadsheet
then costs exactly one read, and the ones broken in their data (404, 400 on a renamed tab, stale,
formula errors) still take their one read. The round time is the whole `run`'s wall time: start-up,
the round, and handing its events over. 429s are the sandbox's own count (GET /_sandbox/stats):
target zero.

    .venv/bin/python bench/round_time.py [--sheets 700] [--credentials 1 3] [--scale 10]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import served_dataset  # noqa: E402

from monitor.app.run import run_once  # noqa: E402
from monitor.config import load_config  # noqa: E402

PER_USER, PER_PROJECT = 60, 300  # Google's default read quotas per minute
TARGET_RATIO = 1.10


def measure(sheets: int, credentials: int, scale: int) -> dict:
    per_user, per_project = PER_USER * scale, PER_PROJECT * scale
    # One round only: with the default 5-minute round interval, a round longer than that (the
    # unscaled 1-credential one) would be followed at once by the next within the same run.
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=sheets, credentials=credentials, per_user=per_user, per_project=per_project,
        faults=False, run={"round_interval": "24h"}, latency="off",
    ) as config_path:
        config = load_config(config_path)
        base = str(config.google.api_endpoint).rstrip("/")
        with requests.Session() as control:
            control.trust_env = False
            started = time.perf_counter()
            result = run_once(config, budget=timedelta(hours=1), messages_to=io.StringIO())
            wall = time.perf_counter() - started
            stats = control.get(f"{base}/_sandbox/stats", timeout=10).json()
    report = result.report
    per_minute = min(credentials * per_user, per_project)
    allowed = 60.0 * sheets / per_minute
    return {
        "credentials": credentials, "per_minute": per_minute, "tasks": report.tasks,
        "stop_reason": report.stop_reason, "wall_s": wall, "allowed_s": allowed, "ratio": wall / allowed,
        "quota_exceeded": stats.get("quota_exceeded", 0), "by_user": stats.get("by_user", {}),
        "reads_by_credential": report.reads_by_credential,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=700)
    parser.add_argument("--credentials", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--scale", type=int, default=10, help="quota multiplier (1: Google's real quotas)")
    args = parser.parse_args()
    worst = 0.0
    for credentials in args.credentials:
        m = measure(args.sheets, credentials, args.scale)
        shares = sorted(m["reads_by_credential"].values())
        print(f"{args.sheets} spreadsheets, {credentials} credential(s) at {PER_USER * args.scale}/min "
              f"(project {PER_PROJECT * args.scale}/min, x{args.scale}): {m['tasks']} reads in "
              f"{m['wall_s']:.1f} s; quota allows {m['allowed_s']:.1f} s ({m['per_minute']}/min) -> "
              f"ratio {m['ratio']:.2f} (target <= {TARGET_RATIO}); 429s: {m['quota_exceeded']}; "
              f"reads per credential {shares}; stopped: {m['stop_reason']}")
        worst = max(worst, m["ratio"]) if m["quota_exceeded"] == 0 else float("inf")
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
