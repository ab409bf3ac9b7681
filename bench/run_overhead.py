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
- where the overhead goes: the saves (each timed around the state repository's ``save``) and, within
  them, the disk's flush (``os.fdatasync``/``os.fsync``: the journal's durability, which depends on
  the disk and on what else writes to it, not on the monitor); judging (around the run's ``judge``);
  the rest (the run's bookkeeping and the hand-over of each read to its worker and back). The
  overhead counts all of them, the flush included: a run cannot go on before its lease is on disk.
  The CPU time of the run's thread is printed too: on a busy machine the wall time also holds the
  time the thread waited for a core, which its CPU time does not;
- that the run really did the work: every spreadsheet checked in this round (tasks finished = N,
  each with a verdict recorded at or after the run started), each read judged by every check of
  its profile, and, from the sandbox's own counts, every configured spreadsheet read by a Sheets
  request and none more than three times (its values, a second read with Google's details, a retry:
  one round, not two); the script fails (exit 1) if not. The round interval is a day and the run
  does not watch Drive's feed (``change_poll = "off"``), so it ends with its one round however slow
  the machine.

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
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SleepCountingClock, TimedReader, sandbox_url, served_dataset  # noqa: E402
from run_memory import one_round_read, sheets_reads  # noqa: E402

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
from monitor.engine import run as engine_run  # noqa: E402
from monitor.google.reader import GspreadReader  # noqa: E402
from monitor.state import read_state  # noqa: E402
from monitor.state.repository import StateRepository  # noqa: E402
from sheet_sandbox.dataset import PROFILE, stock_profile  # noqa: E402
from sheet_sandbox.dataset_generate import CHECKED_LAST_ROW, STOCK_TAB, WATCHED_SUPPLIER  # noqa: E402

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


class Timed:
    """Adds up the time inside ``owner.name`` (and counts the calls) while installed: a bench may wrap
    what it measures."""

    def __init__(self, owner: object, name: str) -> None:
        self.owner, self.name = owner, name
        self.seconds: list[float] = []
        self._original = getattr(owner, name)

    def __enter__(self) -> Timed:
        original, seconds = self._original, self.seconds

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                seconds.append(time.perf_counter() - started)

        setattr(self.owner, self.name, timed)
        return self

    def __exit__(self, *exc_info) -> None:
        setattr(self.owner, self.name, self._original)

    @property
    def total(self) -> float:
        return sum(self.seconds)


def measure(sheets: int, checkpoint_every: float, profile: str = "dataset") -> dict:
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=sheets, credentials=1, per_user=10**8, per_project=10**8, faults=False,
        latency="off", google={"max_concurrent_reads": 1},  # one worker: its API time is the run's wait
        run={"round_interval": "24h", "change_poll": "off"},  # one round, and the run ends with it
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
        with ExitStack() as timers:
            saves = timers.enter_context(Timed(StateRepository, "save"))
            judging = timers.enter_context(Timed(engine_run, "judge"))
            # The journal's fdatasync, a snapshot's and its folder's fsync.
            flushes = [timers.enter_context(Timed(os, name)) for name in ("fdatasync", "fsync")
                       if hasattr(os, name)]
            started, cpu = time.perf_counter(), time.thread_time()
            result = run_once(config, budget=timedelta(minutes=30), clock=clock,
                              reader_factory=reader_factory, checkpoint_every=checkpoint_every,
                              messages_to=io.StringIO())
            wall, cpu = time.perf_counter() - started, time.thread_time() - cpu
        state = read_state(config.run.state_dir)
        with requests.Session() as control:
            control.trust_env = False  # never through a proxy: the sandbox is on 127.0.0.1
            stats = control.get(f"{sandbox_url(config_path)}/_sandbox/stats", timeout=30).json()
    served = one_round_read(sheets_reads(stats), [sheet.id for sheet in config.sheets])
    checked = sum(1 for record in state.health.values()
                  if record.last_checked_at and record.last_checked_at >= started_at)
    read = sum(1 for record in state.health.values() if record.read_at and record.read_at >= started_at)
    report = result.report
    overhead = wall - timed[0].seconds - clock.slept
    per_task = 1000 / max(report.tasks, 1)
    flushed = sum(timer.total for timer in flushes)
    return {
        "sheets": sheets, "checks": len(config.sheets[0].checks), "ranges": len(config.sheets[0].ranges),
        "tasks": report.tasks, "finished": state.round.finished(), "checked": checked,
        "skipped": sum(1 for record in state.health.values() if record.skipped),
        "read": read, "judged": len(judging.seconds), "served": served,
        "wall_s": wall, "api_s": timed[0].seconds, "slept_s": clock.slept,
        "overhead_ms_per_task": overhead * per_task,
        "saves_ms_per_task": saves.total * per_task, "flush_ms_per_task": flushed * per_task,
        "judge_ms_per_task": judging.total * per_task, "cpu_ms_per_task": cpu * per_task,
        "saves": len(saves.seconds), "save_ms_median": 1000 * statistics.median(saves.seconds),
        "save_ms_p90": 1000 * statistics.quantiles(saves.seconds, n=10)[-1],
    }


def did_the_work(m: dict) -> str | None:
    """Why the run's figures would not measure what they claim, or None: every spreadsheet of the
    round given a verdict in this run (a missing one's is its failed read), and every read that
    worked judged by the profile's checks."""
    if m["finished"] != m["sheets"] or m["checked"] + m["skipped"] < m["sheets"]:
        return (f"{m['finished']} of {m['sheets']} tasks finished, {m['checked']} spreadsheets checked: "
                "the round was not done")
    if m["read"] == 0 or m["judged"] < m["read"]:
        return f"{m['read']} spreadsheets read but {m['judged']} reads judged"
    return m["served"]  # the sandbox's counts: one round read every spreadsheet


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
              f"finished, {m['checked']} given a verdict in this run, {m['read']} read and judged by "
              f"{m['checks']} checks (+{m['skipped']} skipped by an open breaker); "
              f"wall {m['wall_s']:.1f} s, API {m['api_s']:.1f} s, slept {m['slept_s']:.1f} s", flush=True)
        print(f"        overhead {m['overhead_ms_per_task']:.2f} ms/task (target {TARGET_MS} ms: ratio "
              f"{m['overhead_ms_per_task'] / TARGET_MS:.2f}); {m['saves']} saves, median "
              f"{m['save_ms_median']:.2f} ms, p90 {m['save_ms_p90']:.2f} ms", flush=True)
        rest = m["overhead_ms_per_task"] - m["saves_ms_per_task"] - m["judge_ms_per_task"]
        print(f"        of it: saves {m['saves_ms_per_task']:.2f} ms/task (the disk's flush "
              f"{m['flush_ms_per_task']:.2f}), judging {m['judge_ms_per_task']:.2f} ({m['judged']} reads "
              f"judged), the rest {rest:.2f}; without the flush "
              f"{m['overhead_ms_per_task'] - m['flush_ms_per_task']:.2f} ms/task; "
              f"CPU of the run's thread {m['cpu_ms_per_task']:.2f} ms/task", flush=True)
        if (failure := did_the_work(m)) is not None:
            print(f"not measured: {failure}", file=sys.stderr)
            return 1
    if len(results) > 1:
        first, last = results[0], results[-1]
        growth = last["sheets"] / first["sheets"]
        overhead = last["overhead_ms_per_task"] / first["overhead_ms_per_task"]
        save = last["save_ms_median"] / first["save_ms_median"]
        print(f"x{growth:.0f} spreadsheets: overhead per task x{overhead:.2f}, median save x{save:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
