"""Start-up cost of the configuration: ``load_config`` at 700 / 5,000 / 20,000 spreadsheets, and the
import time of ``monitor.config``.

Two layouts per size, both written by the sandbox's ``write_config`` for a generated dataset: every
spreadsheet as a ``[[sheets]]`` table, and every spreadsheet as a row of ``sheets_file`` (CSV). Each
figure is the median of ``--repeat`` loads in a fresh interpreter that has imported the monitor, as
a cron run has; not in this process, whose heap full of generated datasets would slow down every
garbage collection during a load. Nothing is cached across loads.

The last lines are the import time of ``monitor.config`` in a fresh interpreter (``-X importtime``,
median of 5) and the time a fresh process takes from start to a loaded 5,000-spreadsheet config
(interpreter, the CLI's imports, ``load_config``): the configuration's share of a cron run's way to
its first request. Targets: ``load_config`` under 0.15 s at 5,000, the cost per spreadsheet flat up
to 20,000, the whole start under 0.5 s at 5,000.

    .venv/bin/python bench/config_load.py [--sheets 700 5000 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitor.core.clock import SystemClock  # noqa: E402
from sheet_sandbox import dataset as ds  # noqa: E402
from sheet_sandbox.auth import TokenAuthority  # noqa: E402

TARGET_AT_5000_S = 0.15
TARGET_START_S = 0.5
NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
LAYOUTS = ("tables", "csv")


def write(folder: Path, sheets: int, layout: str, credentials: list[Path]) -> Path:
    data = ds.generate(sheets, 7, NOW)
    over = sheets if layout == "tables" else -1  # write_config's switch to sheets.csv
    return ds.write_config(data, folder / f"{layout}-{sheets}" / "monitor.toml", credentials=credentials,
                           endpoint="http://127.0.0.1:1", sheets_file_over=over)


_LOAD = """
import statistics, sys, time
from monitor.config import load_config
times = []
for _ in range({repeat}):
    started = time.perf_counter()
    config = load_config({path!r}, {{}})
    times.append(time.perf_counter() - started)
    assert config.sheets
    del config
print(statistics.median(times))
"""


def median_load(path: Path, repeat: int) -> float:
    """Median seconds of ``load_config(path)`` over ``repeat`` loads in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _LOAD.format(repeat=repeat, path=str(path))],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return float(done.stdout)


def import_time(module: str, repeat: int = 5) -> float:
    """Cumulative import time of ``module`` in a fresh interpreter, from ``-X importtime``."""
    figures = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                              cwd=ROOT, capture_output=True, text=True, check=True)
        pattern = rf"^import time:\s+\d+ \|\s+(\d+) \|\s+{re.escape(module)}$"
        figures.append(int(re.search(pattern, done.stderr, re.MULTILINE).group(1)) / 1e6)
    return statistics.median(figures)


def process_start(path: Path, repeat: int = 5) -> float:
    """Wall time of a fresh process that imports the CLI and loads ``path`` (median)."""
    code = ("import monitor.cli.main; from monitor.config import load_config; "
            f"load_config({str(path)!r}, {{}})")
    figures = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
        figures.append(time.perf_counter() - started)
    return statistics.median(figures)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000, 20000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        credentials = TokenAuthority(SystemClock()).write_credentials(
            folder / "secrets", 1, "http://127.0.0.1:1/token")
        paths = {(n, layout): write(folder, n, layout, credentials)
                 for n in args.sheets for layout in LAYOUTS}
        figures = {key: median_load(path, args.repeat) for key, path in paths.items()}
        for layout in LAYOUTS:
            smallest = min(args.sheets)
            for n in args.sheets:
                seconds = figures[(n, layout)]
                per_sheet = 1e6 * seconds / n
                flat = per_sheet / (1e6 * figures[(smallest, layout)] / smallest)
                line = (f"load_config {layout:>6} {n:>6,} spreadsheets: {seconds:7.3f} s, "
                        f"{per_sheet:6.1f} us/spreadsheet (x{flat:.2f} of {smallest:,})")
                if n == 5000:
                    line += f"; ratio to the {TARGET_AT_5000_S} s target {seconds / TARGET_AT_5000_S:.2f}"
                print(line)
        print(f"import monitor.config: {import_time('monitor.config'):.3f} s (median of 5, -X importtime)")
        if 5000 in args.sheets:
            start = process_start(paths[(5000, "csv")])
            print(f"fresh process, CLI imports + load_config at 5,000 (csv): {start:.3f} s; "
                  f"ratio to the {TARGET_START_S} s budget for reaching the first request "
                  f"{start / TARGET_START_S:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
