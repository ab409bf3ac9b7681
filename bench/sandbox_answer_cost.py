"""The sandbox's CPU per answer of the reads a round sends, and a digest of every answer's bytes.

Serves ``--sheets`` generated spreadsheets (seed 7, a fixed moment, latency off, quotas lifted, no
faults) from a ``GoogleSandbox`` called in this process, without HTTP, and asks each the reads the
monitor sends for it (its plan's ranges): a ``values:batchGet`` (a burst of edits), a
``spreadsheets.get`` of the values with the zone (a first read) and one with Google's details (a
store showing #N/A). Prints the CPU time per answer (``time.process_time``, so a loaded machine
shows less than it slows the wall clock), the mean answer's size, and a SHA-256 over every answer's
status and body: two checkouts that print the same digest answered the same bytes.
``--root`` takes the sandbox (and the monitor's plans) from another checkout, for before/after.

    .venv/bin/python bench/sandbox_answer_cost.py [--sheets 700] [--repeat 3] [--root PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOMENT = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)  # generated data is dated from it: same bytes each time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=700)
    parser.add_argument("--repeat", type=int, default=3, help="passes per kind of read; the least is shown")
    parser.add_argument("--root", type=Path, help="the checkout whose sandbox answers")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root or ROOT))
    from monitor.core.clock import ManualClock
    from monitor.google import grid
    from monitor.google.reader import READ_PARAMS, ZONE_FIELD
    from sheet_sandbox import dataset
    from sheet_sandbox.google import GoogleSandbox
    from sheet_sandbox.http import Request

    data = dataset.generate(args.sheets, 7, now=MOMENT)
    google = GoogleSandbox(clock=ManualClock(MOMENT), seed=7, latency="off", read_per_user=10**9,
                           read_per_project=10**9, require_auth=False)
    dataset.apply(data, google)
    google.faults.clear()
    plans = plans_for(data, dataset, google)
    first_read = f"{ZONE_FIELD},{grid.VALUE_FIELDS}"
    kinds = {
        "batchGet (a burst's read)": lambda plan: (f"/v4/spreadsheets/{plan.id}/values:batchGet",
                                                   {"ranges": list(plan.ranges), **READ_PARAMS}),
        "grid values with the zone (a first read)": lambda plan: (
            f"/v4/spreadsheets/{plan.id}", {"ranges": list(plan.ranges), "fields": first_read}),
        "grid with details (after #N/A)": lambda plan: (
            f"/v4/spreadsheets/{plan.id}", {"ranges": list(plan.ranges), "fields": grid.FIELDS}),
    }
    digest = hashlib.sha256()
    for name, ask in kinds.items():
        requests = []
        for plan in plans:
            path, query = ask(plan)
            listed = {key: value if isinstance(value, list) else [value] for key, value in query.items()}
            requests.append(Request("GET", path, listed, {}, b""))
        best, size = float("inf"), 0
        for attempt in range(args.repeat):
            started = time.process_time()
            answers = [google(request) for request in requests]
            best = min(best, time.process_time() - started)
            if attempt == 0:
                size = sum(len(answer.body) for answer in answers)
                for answer in answers:
                    digest.update(b"%d " % answer.status + answer.body + b"\n")
        print(f"{name}: {best / len(requests) * 1000:.2f} ms CPU per answer, "
              f"{size / len(requests) / 1000:.1f} KB on average, {len(requests)} answers", flush=True)
    print(f"answers' SHA-256: {digest.hexdigest()}")
    return 0


def plans_for(data, dataset, google):
    """The monitor's plan of each generated spreadsheet, from the config the sandbox writes."""
    from monitor.config import load_config
    from monitor.engine.inspect import plans_of

    folder = Path(tempfile.mkdtemp())
    keys = google.auth.write_credentials(folder, 1, "http://127.0.0.1:9/token", 1)
    dataset.write_config(data, folder / "monitor.toml", credentials=keys, endpoint="http://127.0.0.1:9")
    return plans_of(load_config(folder / "monitor.toml"))


if __name__ == "__main__":
    sys.exit(main())
