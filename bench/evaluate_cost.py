"""Judging alone: the cost of evaluating one generated store's checks, as a run judges a read.

Generates the dataset's stores (seed 7), reads each one's ranges from the sandbox's model in this
process (as a batchGet renders them: UNFORMATTED_VALUE, SERIAL_NUMBER dates), and judges them the
way ``engine.inspect.judge`` does: the look for codes an import shows while computing, then
``evaluate_all`` with the cross-sheet check's other side known. Prints the time per store, the best
of ``--repeat`` passes over all of them: a figure for comparing versions of the evaluation without
the run, its saves and its threads.

On a busy machine, compare instruction counts rather than times: ``--passes N`` judges N times and
prints nothing, so the difference between two runs under callgrind is the judging's own count::

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        .venv/bin/python bench/evaluate_cost.py --passes 0      # then --passes 3

(instructions per store = (Collected with 3 - Collected with 0) / (3 x stores)).

    .venv/bin/python bench/evaluate_cost.py [--stores 60] [--profile dataset|richer] [--repeat 7]
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_overhead import richer_checks  # noqa: E402

from monitor.checks import CrossSheetCheck, evaluate_all, ranges_of  # noqa: E402
from monitor.checks.aggregates import keys_of  # noqa: E402
from monitor.checks.imports import ambiguous_cell  # noqa: E402
from monitor.checks.past import OtherSide, Past  # noqa: E402
from monitor.core.clock import ManualClock  # noqa: E402
from sheet_sandbox import values  # noqa: E402
from sheet_sandbox.dataset import CATALOGUE_TAB, CATALOGUE_TITLE, generate, stock_profile  # noqa: E402
from sheet_sandbox.store import SpreadsheetStore  # noqa: E402

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def stores_read(count: int, checks) -> list[dict]:
    """Each generated store's ValueRanges for ``checks``, by range text (stores whose tabs the
    dataset renamed are left out: their read fails before any judging)."""
    dataset = generate(count + 1, seed=7, now=NOW)
    store = SpreadsheetStore(ManualClock(NOW))
    for sheet_id, payload in dataset.payloads.items():
        store.put_control(sheet_id, payload)
    reads = []
    for spreadsheet in store.all():
        try:
            reads.append({text: values.read(spreadsheet, text, "UNFORMATTED_VALUE", "SERIAL_NUMBER", "ROWS",
                                            store.rendered) for text in ranges_of(checks)})
        except values.RequestError:
            continue
    return reads


def catalogue_side(count: int, checks) -> Past:
    """The cross-sheet checks' other side, the head office's catalogue, as its read found it."""
    dataset = generate(count + 1, seed=7, now=NOW)
    store = SpreadsheetStore(ManualClock(NOW))
    for sheet_id, payload in dataset.payloads.items():
        store.put_control(sheet_id, payload)
    catalogue = next(s for s in store.all() if s.title == CATALOGUE_TITLE)
    keys = keys_of(values.read(catalogue, f"{CATALOGUE_TAB}!A2:A", "UNFORMATTED_VALUE", "SERIAL_NUMBER"))
    side = OtherSide(CATALOGUE_TITLE, tuple(sorted(set(keys.values))), NOW)
    return Past(others={check.name: side for check in checks if isinstance(check, CrossSheetCheck)})


def judge_all(reads: list[dict], checks, past: Past) -> int:
    results = 0
    for value_ranges in reads:
        ambiguous_cell(value_ranges)
        results += len(evaluate_all(checks, value_ranges, NOW, UTC, past=past))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=60)
    parser.add_argument("--profile", choices=("dataset", "richer"), default="richer")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--passes", type=int, default=None,
                        help="judge every store this many times and print nothing (for callgrind)")
    args = parser.parse_args()
    checks = richer_checks() if args.profile == "richer" else stock_profile()
    reads, past = stores_read(args.stores, checks), catalogue_side(args.stores, checks)
    if args.passes is not None:
        for _ in range(args.passes):
            judge_all(reads, checks, past)
        return 0
    results = judge_all(reads, checks, past)
    if results != len(reads) * len(checks):
        print(f"not measured: {results} results for {len(reads)} stores x {len(checks)} checks",
              file=sys.stderr)
        return 1
    best = min(_timed(judge_all, reads, checks, past) for _ in range(args.repeat))
    print(f"{len(reads)} stores, {len(checks)} checks over {len(ranges_of(checks))} ranges each "
          f"({args.profile}): {1000 * best / len(reads):.3f} ms per store (best of {args.repeat})")
    return 0


def _timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
