"""How much the metric history adds to the state, and that it stops growing: bytes per spreadsheet
and in all, at 700 and 5,000 spreadsheets.

Each spreadsheet has the richer profile's kept checks: a row-count change against the previous read, a
sum change over 24 hours, a header row of 12 headers, and a cross-sheet total (its own side, and the
side it lends to another spreadsheet). Its metrics change at every read, a read every 5 minutes for
``--days`` days (the worst case: every read keeps a point), driven through the engine's own
``recorded`` (monitor.engine.history); each document is encoded as the state stores it. Measured on a
sample of spreadsheets (``--sample``) whose documents are then given to N spreadsheets; the total is
also written to a state folder and its snapshot's size read back. The side a keys check compares
with (every key of A in B) is kept by its lender alone: ``--keys`` of them are measured apart.

    .venv/bin/python bench/history_growth.py [--sheets 700 5000] [--days 1 3] [--keys 1000]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.checks import ChangeCheck, CheckResult, CrossSheetCheck, HeadersChangedCheck  # noqa: E402
from monitor.config.model import Lend  # noqa: E402
from monitor.engine.history import Linked, SheetHistory, recorded  # noqa: E402
from monitor.state.schema import HISTORY  # noqa: E402
from monitor.storage import FileStore  # noqa: E402

START = datetime(2026, 11, 1, tzinfo=UTC)
ROUND = timedelta(minutes=5)
HEADERS = [f"Column header {n}" for n in range(12)]
CHECKS = (
    ChangeCheck(range="Orders!A2:A", fail="< -30"),
    ChangeCheck(range="Orders!C2:C", aggregate="sum", over="24h", warn="> 50"),
    HeadersChangedCheck(range="Orders!1:1"),
    CrossSheetCheck(range="Orders!C2:C", other="Ledger", other_range="Totals!B2:B"),
)
LINKS = Linked({CHECKS[3].name: "ledger"}, (Lend("Totals!B2:B", "sum"),))


def column(values) -> dict:
    return {"range": "Orders!C2:C", "majorDimension": "ROWS", "values": [[v] for v in values]}


def one_sheet(rng: random.Random, days: float) -> SheetHistory:
    """A spreadsheet's history after a read every 5 minutes for ``days``, each changing its metrics."""
    history = None
    at = START
    while at < START + timedelta(days=days):
        rows, total = rng.randint(500, 900), round(rng.uniform(1e4, 1e6), 2)
        results = [CheckResult(CHECKS[0].name, "change", "ok", "", rows),
                   CheckResult(CHECKS[1].name, "change", "ok", "", total),
                   CheckResult(CHECKS[2].name, "headers_changed", "ok", "", HEADERS),
                   CheckResult(CHECKS[3].name, "cross_sheet", "ok", "", total)]
        ranges = {"Orders!C2:C": column([total]), "Totals!B2:B": column([total])}
        history = recorded(CHECKS, LINKS, history, results, ranges, at)
        at += ROUND
    return history


def keys_sheet(keys: int) -> SheetHistory:
    """A catalogue lending ``keys`` keys to keys checks (their own sides keep none)."""
    values = {"range": "Items!A2:A", "majorDimension": "ROWS",
              "values": [[f"SKU-{n:06d}"] for n in range(keys)]}
    return recorded((), Linked(lends=(Lend("Items!A2:A", "keys"),)), None, [], {"Items!A2:A": values}, START)


def snapshot_bytes(sample: list[str], count: int) -> int:
    """The state snapshot's size with ``count`` spreadsheets' history documents, drawn from ``sample``."""
    with tempfile.TemporaryDirectory() as folder:
        store = FileStore(Path(folder) / "properties.json")
        store.update({HISTORY.key(f"sheet-{n:05d}"): sample[n % len(sample)] for n in range(count)})
        store.close()
        return (Path(folder) / "properties.json").stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000])
    parser.add_argument("--days", type=float, nargs="+", default=[1, 3])
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--keys", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(13)
    for days in args.days:
        sample = [HISTORY.encode(one_sheet(rng, days)) for _ in range(args.sample)]
        per_sheet = sum(len(text.encode()) for text in sample) / len(sample)
        points = max(len(text.split('"at"')) - 1 for text in sample)
        print(f"after {days:g} days of reads every 5 min: {per_sheet:,.0f} bytes per spreadsheet "
              f"({points - 1} points in its series and the read time)")
        for count in args.sheets:
            on_disk = snapshot_bytes(sample, count)
            print(f"  {count:>6,} spreadsheets: {per_sheet * count / 1e6:.2f} MB of history documents, "
                  f"state snapshot {on_disk / 1e6:.2f} MB")
    keys = len(HISTORY.encode(keys_sheet(args.keys)).encode())
    print(f"a catalogue lending {args.keys:,} keys to keys checks keeps {keys:,} bytes "
          f"({keys / args.keys:.1f} per key; the checks' own spreadsheets keep none)")


if __name__ == "__main__":
    main()
