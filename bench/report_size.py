"""The status page of a 750-sheet demo round with a week of generated history: how long it takes to
build and render, and how many bytes it is (targets: under a second, under 1 MB).

A real round first: the sandbox (in its own process, Google's latency off, quotas lifted) serves the
demo's generated dataset, broken spreadsheets included, and `run_once` reads it until the round is
done. Then a week of runs every 5 minutes and each spreadsheet's verdict changes are generated into
the state (monitor.app.demo_history), and the page is built from the state as a run would, timed
apart: loading the state, building the data, rendering the HTML, and the JSON's size.

    .venv/bin/python bench/report_size.py [--sheets 750] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import served_dataset  # noqa: E402

from monitor.app.demo_history import add_generated_history  # noqa: E402
from monitor.app.run import run_once  # noqa: E402
from monitor.config import load_config  # noqa: E402
from monitor.core.clock import SystemClock  # noqa: E402
from monitor.core.logs import configure_logging  # noqa: E402
from monitor.report.page import render_page  # noqa: E402
from monitor.report.page_data import build_report, project_quotas  # noqa: E402
from monitor.state import changing_state, read_state  # noqa: E402
from monitor.storage.configured import configured_location  # noqa: E402


def measure(sheets: int, repeat: int, html: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
            Path(tmp), sheets=sheets, credentials=3, per_user=100_000, per_project=300_000,
            latency="off", request_timeout="3s") as config_path:
        config = load_config(config_path, {})
        for _ in range(10):
            run_once(config, budget=timedelta(seconds=60), messages_to=open("/dev/null", "w"))  # noqa: SIM115
            state = read_state(config.run.state_dir)
            if state.round is not None and state.round.is_complete():
                break
        clock = SystemClock()
        location = configured_location(config.state, config.run.state_dir, {})
        with changing_state(location, actor="bench", now=clock.now()) as session:
            runs = add_generated_history(session.state, [s.id for s in config.sheets], clock.now(),
                                         config.report.keep, config.run.round_interval, config.run.budget,
                                         project_quotas(config))
            session.save()
        loads, builds, renders = [], [], []
        for _ in range(repeat):
            started = time.perf_counter()
            state = read_state(config.run.state_dir)
            loaded = time.perf_counter()
            data = build_report(config, state, clock.now())
            built = time.perf_counter()
            page = render_page(data)
            rendered = time.perf_counter()
            loads.append(loaded - started)
            builds.append(built - loaded)
            renders.append(rendered - built)
        size = len(page.encode())
        if html is not None:
            html.write_text(page)
        shown = data["fleet"]["by_health"]
        print(f"{sheets} spreadsheets ({', '.join(f'{n} {k}' for k, n in shown.items() if n)}), "
              f"{runs} generated runs + the real round's, {len(data['timelines']['strips'])} strips drawn")
        print(f"  state load {statistics.median(loads):.3f} s (the run has it loaded already)")
        build, render = statistics.median(builds), statistics.median(renders)
        print(f"  build {build:.3f} s + render {render:.3f} s = {build + render:.3f} s "
              f"(median of {repeat}; target < 1 s)")
        print(f"  page {size:,} bytes ({size / 1e6:.2f} MB; target < 1 MB); "
              f"JSON {len(json.dumps(data).encode()):,} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=750)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--html", type=Path, default=None, help="also save the page there")
    args = parser.parse_args()
    configure_logging(level=logging.CRITICAL)  # the runs' log lines are not the figures
    measure(args.sheets, args.repeat, args.html)


if __name__ == "__main__":
    main()
