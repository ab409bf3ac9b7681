"""How much an anomaly check's history adds to the state, and that it stops growing: bytes per
spreadsheet, and in all at 700 and 5,000 spreadsheets, for each seasonality, after days of reads.

Each spreadsheet has one anomaly check over a sum (the worst case for size: every value a distinct
number with cents, never repeating), read every 30 minutes (a bucket keeps its last read's value, so
more reads add nothing), driven through the engine's own ``recorded`` (monitor.engine.history); each
document is encoded as the state stores it. One point in 50 is judged anomalous (left out of
baselines, which the document records). Measured on a sample (``--sample``) given to N spreadsheets;
the total is also written to a state folder and its snapshot's size read back.

    .venv/bin/python bench/anomaly_history.py [--sheets 700 5000] [--days 7 30 120] [--sample 3]
"""

from __future__ import annotations

import argparse
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from history_growth import snapshot_bytes  # noqa: E402

from monitor.checks import AnomalyCheck, CheckResult  # noqa: E402
from monitor.engine.history import Linked, SheetHistory, recorded  # noqa: E402
from monitor.state.schema import HISTORY  # noqa: E402

START = datetime(2026, 6, 1, tzinfo=UTC)
READ = timedelta(minutes=30)
SEASONALITIES = ("none", "day_of_week", "hour_of_day", "hour_of_week")


def one_sheet(rng: random.Random, check: AnomalyCheck, days: float) -> SheetHistory:
    history = None
    at = START
    while at < START + timedelta(days=days):
        total = round(rng.uniform(1e4, 1e6), 2)
        status = "fail" if rng.random() < 0.02 else "ok"
        result = CheckResult(check.name, "anomaly", status, "", total)
        history = recorded([check], Linked(), history, [result], {}, at, UTC)
        at += READ
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000])
    parser.add_argument("--days", type=float, nargs="+", default=[7, 30, 120])
    parser.add_argument("--sample", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(17)
    for seasonality in SEASONALITIES:
        check = AnomalyCheck(range="Daily!B2:B", metric="sum", seasonality=seasonality, min_history="1d")
        line = []
        for days in args.days:
            sample = [HISTORY.encode(one_sheet(rng, check, days)) for _ in range(args.sample)]
            per_sheet = sum(len(text.encode()) for text in sample) / len(sample)
            line.append(f"{per_sheet:,.0f} B after {days:g} d")
        print(f"{seasonality}: " + ", ".join(line))
        for count in args.sheets:
            on_disk = snapshot_bytes(sample, count)
            print(f"  {count:>6,} spreadsheets after {args.days[-1]:g} d: "
                  f"{per_sheet * count / 1e6:.2f} MB of history documents, "
                  f"state snapshot {on_disk / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
