"""Suggested checks against every breakage the dataset generator knows, on the demo's 750 stores.

The demo's dataset (750 spreadsheets, seed 7): its healthy stores (``--from K``: the first K) and the
head office's catalogue are read whole, as `sheet-monitor suggest` reads them, and a profile is
suggested from them (one for the stores, one for the catalogue, which the stores' SKUs are checked
against); the proposal is loaded as a config is (``load_config``). That profile then judges
every healthy store as it is (a first read: must raise no finding), and a copy of each healthy store
with each breakage of the data injected (``sheet_sandbox.dataset.broken_copy``, as ``generate``
breaks a store): a breakage is caught when the verdict is not ok; the two breakages that come after
a first read (rows deleted, a header renamed) are judged against the history the healthy copy's read
left, as a run judges them. Columns moved is a harmless change (checks by header still find them):
it must raise no finding. The faults of the sandbox (a spreadsheet missing or unshared, 5xx, slow,
hanging) fail the read whatever the checks, and are no profile's to catch: listed, not counted.

Reads go through the sandbox's own rendering of its answers (tests/suggest_catching.py), without a
socket: the figures are the checks', not the network's. Prints the figures and what was missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from suggest_catching import FAULTS, HARMLESS, catch_breakages  # noqa: E402

from sheet_sandbox import dataset  # noqa: E402

DEMO_SHEETS, DEMO_SEED = 750, 7  # `sheet-monitor demo`'s defaults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=DEMO_SHEETS)
    parser.add_argument("--seed", type=int, default=DEMO_SEED)
    parser.add_argument("--from", dest="sample", type=int, default=None,
                        help="healthy stores the profile is suggested from (default: all of them, as "
                             "`suggest` is run on a whole fleet)")
    parser.add_argument("--later", type=float, default=1.0,
                        help="hours after the suggestion the stores are judged (default 1)")
    parser.add_argument("--toml", action="store_true", help="print the suggested profile too")
    args = parser.parse_args()
    started = time.monotonic()
    now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    data = dataset.generate(args.sheets, args.seed, now)
    with tempfile.TemporaryDirectory() as folder:
        found = catch_breakages(data, now, args.sample, timedelta(hours=args.later), Path(folder))
    if args.toml:
        print(found.toml)
    kinds = [b.kind for b in dataset.BREAKAGES if b.kind not in FAULTS]
    print(f"suggest_catch: {args.sheets} generated spreadsheets (seed {args.seed}); a profile of "
          f"{found.checks} checks suggested from {found.suggested_from} healthy stores and the catalogue, "
          f"judged {args.later:g} h later on {found.healthy} healthy stores and a copy of each per "
          f"breakage ({len(kinds)} kinds)")
    print(f"healthy copies with a finding: {len(found.false_alarms)} of {found.healthy}")
    for line in found.false_alarms[:10]:
        print(f"  {line}")
    print(f"\n{'breakage':<22}{'caught':>8}{'missed':>8}")
    for kind in kinds:
        mark = "  (harmless: caught = no finding)" if kind in HARMLESS else ""
        print(f"{kind:<22}{found.caught[kind]:>8}{found.missed[kind]:>8}{mark}")
    share = found.caught_count / found.breakages
    harmful = sum(found.missed[k] for k in HARMLESS)
    print(f"\ncaught {found.caught_count} of {found.breakages} breakages ({100 * share:.1f} %); harmless "
          f"changes with a finding: {harmful}")
    print(f"not the profile's (the read fails whatever the checks): {', '.join(sorted(FAULTS))}")
    for kind, where in found.missed_where.items():
        print(f"missed {kind} {len(where)} times, e.g. {where[0]}")
    print(f"took {time.monotonic() - started:.1f} s")
    sys.exit(0 if share >= 0.95 and not found.false_alarms and not harmful else 1)


if __name__ == "__main__":
    main()
