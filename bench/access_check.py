"""`check-config --access` on a 700-spreadsheet sandbox at Google's answer times: every unshared
spreadsheet named, in how long, with how many Drive requests.

Serves 700 generated spreadsheets (``sheet-monitor sandbox serve``, its own process, Google's latency
model), takes the access away from 5 % of them (a 403 forever: Drive's 404 "File not found", as an
unshared file), runs the real CLI ``sheet-monitor check-config --access --json`` and checks that the
files it says it cannot open are exactly those, plus the dataset's spreadsheets that are not there.
Prints the wall time, the Drive requests (the sandbox's counts) and the Sheets requests (none).

    .venv/bin/python bench/access_check.py [--sheets 700] [--unshared 0.05]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, sandbox_url, served_dataset  # noqa: E402

MINUTE = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=700)
    parser.add_argument("--unshared", type=float, default=0.05, help="share of spreadsheets unshared")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
            Path(tmp), sheets=args.sheets, credentials=1, per_user=60, per_project=300,
            faults=False) as config:
        base = sandbox_url(config)
        control = requests.Session()
        control.trust_env = False
        listed = control.get(f"{base}/_sandbox/spreadsheets", timeout=30).json()["spreadsheets"]
        stored = sorted(entry["id"] for entry in listed if entry["stored"])
        missing = {entry["id"] for entry in listed if not entry["stored"]}
        unshared = set(random.Random(1).sample(stored, round(len(stored) * args.unshared)))
        faults = [{"spreadsheet": sid, "statuses": [403], "repeat": True} for sid in sorted(unshared)]
        control.post(f"{base}/_sandbox/faults", json=faults, timeout=30).raise_for_status()
        control.delete(f"{base}/_sandbox/stats", timeout=30).raise_for_status()
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "monitor.cli", "check-config", "--access", "--json",
                               "--config", str(config)], cwd=ROOT, capture_output=True, text=True)
        seconds = time.monotonic() - started
        access = json.loads(done.stdout)["access"]
        named = {entry["id"] for entry in access["cannot_open"] if entry["answered"]}
        unanswered = [entry for entry in access["cannot_open"] if not entry["answered"]]
        stats = control.get(f"{base}/_sandbox/stats", timeout=30).json()
    drive = sum(n for endpoint, n in stats["by_endpoint"].items() if "/drive/" in endpoint)
    sheets = sum(n for endpoint, n in stats["by_endpoint"].items() if "/v4/" in endpoint)
    expected = unshared | missing
    print(f"spreadsheets: {args.sheets} ({len(unshared)} unshared, {len(missing)} not there)")
    print(f"check-config --access: {seconds:.1f} s wall (the access check itself {access['seconds']:.1f} s), "
          f"exit {done.returncode}")
    print(f"Drive requests: {drive} ({access['requests']} by the check, for {access['asked']} files: a "
          f"request that timed out is asked again once); Sheets requests: {sheets}")
    print(f"named: {len(named & expected)} of {len(expected)}; named wrongly: {len(named - expected)}; "
          f"no answer: {len(unanswered)}")
    good = named == expected and not unanswered and access["seconds"] < MINUTE and sheets == 0
    print("ok" if good else "NOT OK")
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
