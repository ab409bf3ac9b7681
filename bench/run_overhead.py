"""Runner overhead per task and the cost of one checkpoint, at 700, 5,000 and 20,000 spreadsheets.

Serves N generated spreadsheets from a sandbox process with quotas out of the way, no added latency and
the dataset's injected faults removed (slow and hanging spreadsheets would only lengthen the wall time,
which is not measured; missing spreadsheets and renamed tabs stay: the failure paths still run), runs
one `run` over them in this process until the whole round is done, with one read in flight
(``max_concurrent_reads = 1``, so that the time inside requests is time the run waited), and reports:

- overhead per task: the wall time minus the time inside the reader's requests and the run's
  deliberate sleeps (retry waits), per task: the run's own work, and handing each read to its
  worker and back. Target: under 5 ms, and flat in N;
- time per checkpoint save: each save of the state during the run, measured around the state
  repository's ``save`` (it writes what changed since the previous one). Flat in N is the point;
- that the run really did the work: every spreadsheet checked in this round (tasks finished = N,
  each with a verdict recorded at or after the run started).

With ``--profile richer`` every spreadsheet is judged by a richer profile than the dataset's: every
kind of check, every aggregate, row filters, a percentile and a capped severity (``richer_checks``),
so that the run's cost per task is measured with what evaluation may cost at its most.

    .venv/bin/python bench/run_overhead.py [--sheets 700 5000 20000] [--checkpoint-every 0.2]
                                           [--profile dataset|richer]
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SleepCountingClock, TimedReader, served_dataset  # noqa: E402

from monitor.app.run import run_once  # noqa: E402
from monitor.checks import (  # noqa: E402
    Check,
    FormulaErrorsCheck,
    FreshnessCheck,
    NotEmptyCheck,
    RowCountCheck,
    ThresholdCheck,
)
from monitor.config import load_config  # noqa: E402
from monitor.google.reader import GspreadReader  # noqa: E402
from monitor.sandbox.dataset import PROFILE, stock_profile  # noqa: E402
from monitor.sandbox.dataset_generate import CHECKED_LAST_ROW, STOCK_TAB, WATCHED_SUPPLIER  # noqa: E402
from monitor.state import read_state  # noqa: E402
from monitor.state.repository import StateRepository  # noqa: E402

TARGET_MS = 5.0
LAST = CHECKED_LAST_ROW


def richer_checks() -> list[Check]:
    """Every kind and aggregate over the generated Stock tab (columns A..H, rows 2..500), some
    filtered by the Supplier (C) or Reorder level (G) column, one capped to warn."""
    tab, supplier = STOCK_TAB, f"C = '{WATCHED_SUPPLIER}'"
    threshold = [
        ThresholdCheck(name=f"richer {index} {aggregate}", range=f"{tab}!F2:F{LAST}", aggregate=aggregate,
                       fail=condition, **extra)
        for index, (aggregate, condition, extra) in enumerate((
            ("min", "< 0", {"warn": "< 5"}), ("max", "> 100000", {}), ("sum", "< 0", {}),
            ("count", "< 1", {}), ("value", "< -1000", {}), ("avg", "< 0", {"where": supplier}),
            ("distinct", "< 1", {}), ("percentile", "> 100000", {"percentile": 95, "severity": "warn"}),
            ("avg", "> 100000", {"where": "G in (5, 10) or C contains 'Mills'", "owner": "@olga"}),
        ))]
    return [
        *stock_profile(),
        NotEmptyCheck(range=f"{tab}!B2:B{LAST}", where="G >= 5"),
        RowCountCheck(range=f"{tab}!A2:A{LAST}", where=supplier, max=LAST),
        FormulaErrorsCheck(range=f"Sales!A1:D{LAST}"),
        FreshnessCheck(range=f"Sales!A2:A{LAST}", fail="> 30d"),
        *threshold,
    ]


def toml_inline(table: dict) -> str:
    """A check as written, as a TOML inline table (its values are strings and numbers)."""
    return "{ " + ", ".join(f"{key} = {json.dumps(value)}" for key, value in table.items()) + " }"


def with_profile(config_path: Path, checks: list[Check]) -> None:
    """Replace the written config's stock profile's checks with ``checks``."""
    text = config_path.read_text()
    start = text.index("checks = [\n", text.index(f"[profiles.{PROFILE}]"))
    end = text.index("\n]\n", start)
    written = "".join(f"\n  {toml_inline(check.as_written())}," for check in checks)
    config_path.write_text(text[:start] + "checks = [" + written + text[end:])


class SaveTimer:
    """Times every StateRepository.save while installed (a bench may wrap what it measures)."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._original = StateRepository.save

    def __enter__(self) -> SaveTimer:
        original, seconds = self._original, self.seconds

        def timed(repository, state):
            started = time.perf_counter()
            try:
                return original(repository, state)
            finally:
                seconds.append(time.perf_counter() - started)

        StateRepository.save = timed
        return self

    def __exit__(self, *exc_info) -> None:
        StateRepository.save = self._original


def measure(sheets: int, checkpoint_every: float, profile: str = "dataset") -> dict:
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=sheets, credentials=1, per_user=10**8, per_project=10**8, faults=False,
        latency="off", google={"max_concurrent_reads": 1},  # one worker: its API time is the run's wait
    ) as config_path:
        if profile == "richer":
            with_profile(config_path, richer_checks())
        config = load_config(config_path)
        timed: list[TimedReader] = []

        def reader_factory(cfg, timeout):  # called once, by the one worker
            timed.append(TimedReader(GspreadReader.for_config(cfg, timeout)))
            return timed[0]

        clock = SleepCountingClock()
        started_at = clock.now()
        with SaveTimer() as saves:
            started = time.perf_counter()
            result = run_once(config, budget=timedelta(minutes=30), clock=clock,
                              reader_factory=reader_factory, checkpoint_every=checkpoint_every,
                              messages_to=io.StringIO())
            wall = time.perf_counter() - started
        state = read_state(config.run.state_dir)
    checked = sum(1 for record in state.health.values()
                  if record.last_checked_at and record.last_checked_at >= started_at)
    report = result.report
    overhead = wall - timed[0].seconds - clock.slept
    return {
        "sheets": sheets, "checks": len(config.sheets[0].checks), "ranges": len(config.sheets[0].ranges),
        "tasks": report.tasks, "finished": state.round.finished(), "checked": checked,
        "skipped": sum(1 for record in state.health.values() if record.skipped),
        "wall_s": wall, "api_s": timed[0].seconds, "slept_s": clock.slept,
        "overhead_ms_per_task": 1000 * overhead / max(report.tasks, 1),
        "saves": len(saves.seconds), "save_ms_median": 1000 * statistics.median(saves.seconds),
        "save_ms_p90": 1000 * statistics.quantiles(saves.seconds, n=10)[-1],
    }


def main() -> int:
    logging.getLogger("monitor").setLevel(logging.CRITICAL)  # figures, not the runs' log lines
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000, 20000])
    parser.add_argument("--checkpoint-every", type=float, default=0.2,
                        help="seconds between merged checkpoints (0.2, the production setting, merges the "
                             "saves of a faster-than-quota run; 0 saves after every task, as production "
                             "pace does)")
    parser.add_argument("--profile", choices=("dataset", "richer"), default="dataset",
                        help="the dataset's stock profile, or a richer one with every kind, aggregate and "
                             "filter (richer_checks)")
    args = parser.parse_args()
    results = []
    for sheets in args.sheets:
        m = measure(sheets, args.checkpoint_every, args.profile)
        results.append(m)
        print(f"{m['sheets']:>6} spreadsheets, {m['checks']} checks over {m['ranges']} ranges each: "
              f"{m['tasks']} reads, round {m['finished']}/{m['sheets']} "
              f"finished, {m['checked']} read and judged in this run (+{m['skipped']} skipped by an open "
              "breaker); "
              f"wall {m['wall_s']:.1f} s, API {m['api_s']:.1f} s, slept {m['slept_s']:.1f} s", flush=True)
        print(f"        overhead {m['overhead_ms_per_task']:.2f} ms/task (target {TARGET_MS} ms: ratio "
              f"{m['overhead_ms_per_task'] / TARGET_MS:.2f}); {m['saves']} saves, median "
              f"{m['save_ms_median']:.2f} ms, p90 {m['save_ms_p90']:.2f} ms", flush=True)
    if len(results) > 1:
        first, last = results[0], results[-1]
        growth = last["sheets"] / first["sheets"]
        overhead = last["overhead_ms_per_task"] / first["overhead_ms_per_task"]
        save = last["save_ms_median"] / first["save_ms_median"]
        print(f"x{growth:.0f} spreadsheets: overhead per task x{overhead:.2f}, median save x{save:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
