"""What the metrics add to a run's end: building the families from the state and writing the .prom
file, at 700 / 5,000 / 20,000 spreadsheets, and the file's size.

The state is as a finished round leaves it: a health record per spreadsheet, the round's tasks all
done but a tenth waiting for a retry, a heartbeat with stats, totals. The config is the sandbox's
``write_config`` for a generated dataset (sheets as CSV). Each figure is the median of ``--repeat``
writes (registry built and written to a temporary .prom file, renamed). Target: a small share of a
run's reserve (3 s), flat per spreadsheet; the file's size independent of N without ``per_sheet``.

    .venv/bin/python bench/metrics_write.py [--sheets 700 5000 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitor.admin.metrics import metrics_registry  # noqa: E402
from monitor.app.metrics_step import write_textfile  # noqa: E402
from monitor.config import load_config  # noqa: E402
from monitor.core.clock import SystemClock  # noqa: E402
from monitor.engine.health import OK, WARN, SheetHealth  # noqa: E402
from monitor.engine.heartbeat import Heartbeat, RunOutcome, RunStats  # noqa: E402
from monitor.engine.tasks import Round  # noqa: E402
from monitor.engine.totals import RunTotals  # noqa: E402
from monitor.state import State  # noqa: E402
from sheet_sandbox import dataset as ds  # noqa: E402
from sheet_sandbox.auth import TokenAuthority  # noqa: E402

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)


def state_for(config) -> State:
    ids = [sheet.id for sheet in config.sheets]
    rnd = Round.build(ids, NOW - timedelta(minutes=4))
    for n, task in enumerate(list(rnd.tasks.values())):
        rnd.start(task)
        if n % 10:
            rnd.succeed(task, NOW)
        else:
            rnd.release(task)
            rnd.retry_at(task, NOW + timedelta(seconds=30))
    stats = RunStats(tasks=len(ids), ok=len(ids), reads_by_credential={"k": len(ids)},
                     reads_by_project={"p": len(ids)},
                     read_seconds_buckets=(0, 1, len(ids), 0, 0, 0, 0, 0, 0))
    state = State(round=rnd, heartbeat=Heartbeat("run-1", NOW - timedelta(minutes=4), 270.0,
                                                 finished_at=NOW, outcome=RunOutcome.OK, stats=stats))
    state.totals = RunTotals().add("ok", stats)
    for n, sid in enumerate(ids):
        state.health[sid] = SheetHealth(WARN if n % 7 == 0 else OK, since=NOW, last_checked_at=NOW)
        state.health[sid] = replace(state.health[sid], read_at=NOW)
    return state


def measure(config, state: State, target: Path, repeat: int) -> tuple[float, int]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        assert write_textfile(target, metrics_registry(state, config, NOW))
        times.append(time.perf_counter() - started)
    return statistics.median(times), target.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000, 20000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        credentials = TokenAuthority(SystemClock()).write_credentials(
            folder / "secrets", 1, "http://127.0.0.1:1/token")
        print(f"{'sheets':>7} {'write':>10} {'per sheet':>12} {'file':>9}")
        for n in args.sheets:
            path = ds.write_config(ds.generate(n, 7, NOW), folder / f"c{n}" / "monitor.toml",
                                   credentials=credentials, endpoint="http://127.0.0.1:1",
                                   sheets_file_over=-1)
            config = load_config(path, {})
            seconds, size = measure(config, state_for(config), folder / f"m{n}.prom", args.repeat)
            print(f"{n:>7} {seconds * 1000:>8.1f} ms {seconds / n * 1e6:>9.1f} µs {size:>7} B")


if __name__ == "__main__":
    main()
