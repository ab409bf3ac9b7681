"""What the file store's operations cost as the state grows: one update, opening, compaction.

For a state of N keys of ~300 bytes each (the size of a task or health record): the median and p90
of one ``update()`` of 3 keys (journal append + fdatasync), over a few hundred; opening the state
read-only with those updates still in the journal (parse + replay, what the watchdog pays);
opening it as a writer (replay + compaction); and one compaction alone (``close()``), which is what
every save cost before the journal. The target: the update's cost flat in N.

    .venv/bin/python bench/store_update.py [--keys 1000 10000 100000] [--updates 300] [--dir PATH]

``--dir`` chooses the filesystem (default: the system's temp folder); fsync costs depend on it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.storage import FileStore  # noqa: E402

VALUE_BYTES = 300


def value(rng: random.Random) -> str:
    # JSON-like text of the record size; varied so no layer can shortcut identical values.
    return '{"status":"done","note":"' + "".join(rng.choices("abcdefghij", k=VALUE_BYTES - 28)) + '"}'


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def measure(keys: int, updates: int, folder: Path) -> dict[str, float]:
    rng = random.Random(keys)
    state_dir = folder / f"state-{keys}"
    names = [f"task:{n:06d}" for n in range(keys)]
    with FileStore.in_dir(state_dir) as store:
        store.set_properties({name: value(rng) for name in names})

    store = FileStore.in_dir(state_dir)
    costs = []
    for _ in range(updates):
        change = {name: value(rng) for name in rng.sample(names, 3)}
        costs.append(timed(lambda change=change: store.update(change)))
    journal_bytes = store.journal_size
    snapshot_bytes = store.path.stat().st_size
    # The writer is left open, as a killed run leaves its journal: what do the next openers pay?
    read_open = timed(lambda: FileStore.in_dir(state_dir, read_only=True).close())
    store.close()  # compacts; its cost is measured on a clean state below, the same work
    killed = FileStore.in_dir(state_dir)
    for _ in range(updates):
        killed.update({name: value(rng) for name in rng.sample(names, 3)})
    write_open = timed(lambda: FileStore.in_dir(state_dir).close())  # replay + compaction
    # (killed is abandoned: the writer that opened after it compacted its journal)
    compaction = []
    for _ in range(3):
        writer = FileStore.in_dir(state_dir)
        writer.update({names[0]: value(rng)})
        compaction.append(timed(writer.close))
    costs.sort()
    return {
        "keys": keys,
        "snapshot_mb": snapshot_bytes / 1e6,
        "journal_kb": journal_bytes / 1e3,
        "update_median_ms": statistics.median(costs),
        "update_p90_ms": costs[int(len(costs) * 0.9)],
        "open_read_only_ms": read_open,
        "open_writer_ms": write_open,
        "compaction_ms": statistics.median(compaction),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        rows = [measure(keys, args.updates, Path(tmp)) for keys in args.keys]
    print(f"one update() of 3 keys of ~{VALUE_BYTES} B, median of {args.updates}; times in ms")
    print(f"{'keys':>8} {'snapshot':>9} {'journal':>8} {'update':>7} {'p90':>6} "
          f"{'open ro':>8} {'open rw':>8} {'compact':>8}")
    for r in rows:
        print(f"{r['keys']:>8,} {r['snapshot_mb']:>7.1f}MB {r['journal_kb']:>6.0f}KB "
              f"{r['update_median_ms']:>7.2f} {r['update_p90_ms']:>6.2f} {r['open_read_only_ms']:>8.1f} "
              f"{r['open_writer_ms']:>8.1f} {r['compaction_ms']:>8.1f}")
    flat = rows[-1]["update_median_ms"] / rows[0]["update_median_ms"]
    print(f"update cost at {rows[-1]['keys']:,} keys / at {rows[0]['keys']:,} keys: x{flat:.2f}"
          " (flat: about 1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
