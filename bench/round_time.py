"""Round time against the rolling quota window at Google's latency: a full round, then a burst of edits.

Google counts reads per credential and per Cloud project over a rolling 60-second window, so N reads
at L a window cannot take less than floor((N - 1) / L) x 60 s plus one read's answer: each window's
allowance sent at once, the last window's last read answered. Target: a run takes at most 1.05 x that
least time, with zero 429s, both for

- **a full round**: a first one (a fresh state), every spreadsheet read. Its reads are one per
  spreadsheet (for each one with a freshness check on a range, every generated one, a
  ``spreadsheets.get`` with grid data that gives its time zone with its values), plus the read with
  Google's details of each store showing #N/A or #REF!. ``--sheets 700`` is a round of about 708
  reads, ``--sheets 1150`` (the default) one of about 1,158.
- **a burst of edits**: a window after that round, ``--edits`` spreadsheets are edited at once (their
  freshness range, through the sandbox's control API) and the next run reads what Drive's change
  feed names, the zones known by then: a batchGet each, and the details of those showing #N/A.

N is the Sheets reads the sandbox served in that run (a batchGet, or a ``spreadsheets.get``: a zone,
a read with details, a refused range's tab titles), L the reads a window the credentials sustain (per
project, the lower of its credentials' quotas together, 60/min each, and the project's own, 300/min,
summed), and one read the sandbox's mean answer time in that run. The time measured is the run's
round: from its log's ``round_started`` to the last read it applied (the run's start-up and its end,
Drive's feed and the save, are not reads; the process's wall time is printed beside it).

The sandbox runs in its own process with its latency model on (real Google's: median ~0.4 s, a long
tail, larger answers slower; docs/sandbox.md) and Google's real quotas, Drive's feed shows an edit at
once (``--feed-delay off``: the bench times reads, not Drive), and every run is ``python -m
monitor.cli run`` in its own process, as cron starts it, with a one-hour budget and ``change_poll =
"off"``, so that it ends with its round's work. A setup ``PxC`` is P projects of C credentials each.
``--sequential`` reads one spreadsheet at a time (``max_concurrent_reads = 1``), for comparison.
``--hanging F`` makes a fraction F of the spreadsheets hang (the request is held until the client
gives up) at the monitor's default 30 s timeout. ``--monitor-root`` runs another checkout's monitor (an
older commit, say) against the same sandbox, for before/after figures. ``--no-burst`` skips the edits;
``--log DIR`` keeps each run's log lines (JSON), where its reads' times can be looked at.

``--scale K`` shortens the bench: quotas x K, latency / K and the request timeout / K (the window
stays 60 s, so a round of N reads takes about 1/K the time); the retry backoff (3 s, 9 s) is the
engine's own and is not scaled, which makes the hanging scenario slightly kinder when K > 1.

The bench checks what it claims from the sandbox's own counts (``by_spreadsheet``): in the full round
every spreadsheet the sandbox holds was asked for its values (a batchGet: a zone read alone does not
count), and every one it does not hold was asked; in the burst every edited spreadsheet was asked for
its values again; the round is complete in the state; 429s are the sandbox's own count.

    .venv/bin/python bench/round_time.py [--sheets 1150] [--setups 1x5] [--edits 500] [--no-burst]
                                         [--sequential] [--hanging 0.05] [--scale 1]
                                         [--monitor-root PATH] [--log DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, sandbox_url, served_dataset  # noqa: E402
from edit_watch import editable_payloads, with_marker  # noqa: E402

from monitor.config import load_config  # noqa: E402
from monitor.engine.pacer import WINDOW_SECONDS, sustained_rate  # noqa: E402
from monitor.engine.tasks import FINISHED  # noqa: E402
from monitor.state import read_state  # noqa: E402

PER_USER, PER_PROJECT = 60, 300  # Google's default read quotas per minute
DEFAULT_TIMEOUT_SECONDS = 30.0  # the monitor's default request timeout
TARGET_RATIO = 1.05
BATCH_GET = "GET /v4/spreadsheets/{id}/values:batchGet"  # a spreadsheet's values
# grid data (a first read's values with the zone, or a read with details), ?fields=properties.timeZone
# (a zone alone: a plan that reads no range, none of the generated ones), or a refused range's titles
SPREADSHEET_GET = "GET /v4/spreadsheets/{id}"
SHEETS_READS = (BATCH_GET, SPREADSHEET_GET)
# Events the run logs when it applies a read's answer (engine/run.py, engine/task_results.py)
READ_EVENTS = {"task_done", "zone_read", "task_retry", "task_failed", "task_quota_wait", "credential_refused"}
# Between the round and the burst: the round's last sends age out of every window (the pacer's 60 s
# and its 1 s margin), so the burst starts with the whole allowance as a run after a pause does.
QUIET_SECONDS = WINDOW_SECONDS + 2.0


@dataclass
class Phase:
    """One run's reads against the least time the rolling window allows."""

    name: str
    reads: int  # Sheets reads the sandbox served during the run
    batch_gets: int
    spreadsheet_gets: int
    round_s: float  # round_started to the last read applied, from the run's log
    wall_s: float  # the run's process, start-up to exit
    one_read_s: float  # the sandbox's mean answer time during the run
    per_window: int  # L: the reads a window the credentials sustain
    quota_exceeded: int
    done: int
    expected: int
    values_missing: list[str]  # spreadsheets that should have had their values asked and did not
    finished: dict
    peak_in_flight: int | None

    @property
    def least_s(self) -> float:
        return math.floor(max(self.reads - 1, 0) / self.per_window) * WINDOW_SECONDS + self.one_read_s

    @property
    def ratio(self) -> float:
        return self.round_s / self.least_s if self.least_s > 0 else math.inf

    @property
    def complete(self) -> bool:
        return self.done == self.expected and not self.values_missing

    @property
    def met(self) -> bool:
        return self.complete and self.quota_exceeded == 0 and self.ratio <= TARGET_RATIO


def measure(args, projects: int, per_project_credentials: int) -> list[Phase]:
    scale = args.scale
    credentials = projects * per_project_credentials
    google = {"max_concurrent_reads": 1} if args.sequential else {}
    per_window = sustained_rate([per_project_credentials] * projects, PER_USER * scale, PER_PROJECT * scale)
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=args.sheets, credentials=credentials, projects=projects,
        per_user=PER_USER * scale, per_project=PER_PROJECT * scale, faults=False,
        request_timeout=f"{DEFAULT_TIMEOUT_SECONDS / scale:g}s", latency_scale=1 / scale, google=google,
        feed_delay="off",  # an edit is in the feed at once: the bench times reads, not Drive's delay
        # one round per run, however long it takes, and the run ends with its round's work
        run={"round_interval": "24h", "change_poll": "off"},
    ) as config_path, requests.Session() as control:
        control.trust_env = False  # never through a proxy: the sandbox is on 127.0.0.1
        config = load_config(config_path)
        base = sandbox_url(config_path)
        ids = [sheet.id for sheet in config.sheets]
        hanging = hang(control, base, ids, args.hanging)
        held = {sid for sid in ids if control.get(f"{base}/_sandbox/spreadsheets/{sid}", timeout=30).ok}
        before = stats_of(control, base)
        round_began = time.monotonic()
        full = run_phase("full round", config_path, args, control, base, before, per_window)
        after, _ = full.pop("stats"), full.pop("lines")
        by_sheet = after.get("by_spreadsheet", {})
        # Asked for its values: a batchGet, or a grid read with its zone (each generated spreadsheet
        # reads ranges, so none asks its zone alone). One the sandbox does not hold was asked.
        missing = [sid for sid in ids if (sum(by_sheet.get(sid, {}).get(e, 0) for e in SHEETS_READS) < 1
                                          if sid in held else not by_sheet.get(sid))]
        phases = [Phase(**full, done=settled(config.run.state_dir), expected=len(ids),
                        values_missing=missing)]
        if args.burst and not args.sequential:
            phases.append(burst(args, config_path, config, control, base, after, per_window, round_began))
    for phase in phases:
        phase.name += f" {projects}x{per_project_credentials}" + (f", {hanging} hanging" if hanging else "")
    return phases


def burst(args, config_path: Path, config, control: requests.Session, base: str, before: dict,
          per_window: int, round_began: float) -> Phase:
    """Edit ``--edits`` spreadsheets at once a window after the round (begun at ``round_began``, on
    the monotonic clock), and time the run that reads them."""
    quiet_until = time.monotonic() + QUIET_SECONDS
    payloads = editable_payloads(control, base, [sheet.id for sheet in config.sheets])
    edited = random.Random(11).sample(sorted(payloads), min(args.edits, len(payloads)))
    marker = datetime.fromtimestamp(math.floor(time.time()), UTC)
    for sheet_id in edited:
        control.put(f"{base}/_sandbox/spreadsheets/{sheet_id}", json=with_marker(payloads[sheet_id], marker),
                    timeout=30).raise_for_status()
    time.sleep(max(0.0, quiet_until - time.monotonic()))
    # The next run starts a round, and only one: the round's interval, the time since the last began
    # (a round starts once all but a tenth of it has passed), far longer than the burst's reads take.
    set_run_key(config_path, "round_interval", f"{math.floor(time.monotonic() - round_began)}s")
    stats = stats_of(control, base)  # the editing PUTs are the control API's, not reads
    phase = run_phase("burst of edits", config_path, args, control, base, stats, per_window)
    by_sheet, earlier = phase.pop("stats").get("by_spreadsheet", {}), stats.get("by_spreadsheet", {})
    missing = [sid for sid in edited if sum(by_sheet.get(sid, {}).get(e, 0) for e in SHEETS_READS)
               <= sum(earlier.get(sid, {}).get(e, 0) for e in SHEETS_READS)]
    # Judged in this run (the state's round may be a later one, which found nothing changed).
    judged = {line.get("spreadsheet_id") for line in phase.pop("lines")
              if line.get("event") in ("task_done", "task_failed")}
    return Phase(**phase, done=len(judged & set(edited)), expected=len(edited), values_missing=missing)


def run_phase(name: str, config_path: Path, args, control: requests.Session, base: str, before: dict,
              per_window: int) -> dict:
    """One run; its figures against the sandbox's counts ``before`` it (and the counts after, as
    ``stats``, and its log, as ``lines``)."""
    started = time.perf_counter()
    lines = run_cli(config_path, args.monitor_root)
    wall = time.perf_counter() - started
    if args.log is not None:
        args.log.mkdir(parents=True, exist_ok=True)
        with (args.log / f"{name.replace(' ', '-')}-{int(time.time())}.jsonl").open("w") as log:
            log.writelines(json.dumps(line) + "\n" for line in lines)
    after = stats_of(control, base)
    served = {endpoint: after["by_endpoint"].get(endpoint, 0) - before["by_endpoint"].get(endpoint, 0)
              for endpoint in SHEETS_READS}
    delayed = after["latency"]["delayed"] - before["latency"]["delayed"]
    delay = after["latency"]["total_seconds"] - before["latency"]["total_seconds"]
    finished = run_finished(lines)
    state = read_state(load_config(config_path).run.state_dir)
    return {
        "name": name, "reads": sum(served.values()), "batch_gets": served[BATCH_GET],
        "spreadsheet_gets": served[SPREADSHEET_GET], "round_s": round_seconds(lines), "wall_s": wall,
        "one_read_s": delay / delayed if delayed else 0.0, "per_window": per_window,
        "quota_exceeded": after["quota_exceeded"] - before["quota_exceeded"], "finished": finished,
        "peak_in_flight": state.heartbeat.stats.concurrency, "stats": after, "lines": lines,
    }


def round_seconds(lines: list[dict]) -> float:
    """From the run's first round_started to the last read it applied, by the log's time stamps."""
    def at(line: dict) -> float:
        return datetime.fromisoformat(line["ts"].replace("Z", "+00:00")).timestamp()

    started = next(at(line) for line in lines if line.get("event") == "round_started")
    last = max((at(line) for line in lines if line.get("event") in READ_EVENTS), default=started)
    return last - started


def settled(state_dir: Path) -> int:
    counts = read_state(state_dir).round.counts()
    return sum(n for status, n in counts.items() if status in FINISHED)


def stats_of(control: requests.Session, base: str) -> dict:
    return control.get(f"{base}/_sandbox/stats", timeout=30).json()


def set_run_key(config_path: Path, key: str, value: str) -> None:
    text = re.sub(rf'(?m)^{key} = .*$', f'{key} = "{value}"', config_path.read_text(), count=1)
    config_path.write_text(text)


def hang(control: requests.Session, base: str, ids: list[str], fraction: float) -> int:
    """Make ``fraction`` of the spreadsheets (chosen with a fixed seed) hang; how many."""
    chosen = random.Random(5).sample(ids, round(len(ids) * fraction))
    for sheet_id in chosen:
        control.post(f"{base}/_sandbox/faults", json={"spreadsheet": sheet_id, "hang": True},
                     timeout=10).raise_for_status()
    return len(chosen)


def run_cli(config_path: Path, monitor_root: Path | None) -> list[dict]:
    """One `run` with a one-hour budget, as a child process; its JSON log lines."""
    env = {**os.environ, "PYTHONPATH": str(monitor_root or ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "monitor.cli", "run", "--config", str(config_path), "--budget", "3600"],
        cwd=monitor_root or ROOT, env=env, capture_output=True, text=True, timeout=4000,
    )
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    if result.returncode != 0 or not any(line.get("event") == "run_finished" for line in lines):
        raise SystemExit(f"the run failed (exit {result.returncode}): {result.stderr[-2000:]}")
    return lines


def run_finished(lines: list[dict]) -> dict:
    """The run's run_finished log line (its outcome, stop reason, tasks)."""
    return next(line for line in reversed(lines) if line.get("event") == "run_finished")


def describe(args, phase: Phase) -> str:
    mode = ["one at a time" if args.sequential else "concurrent"]
    if args.scale > 1:
        mode.append(f"scale x{args.scale}")
    if args.monitor_root:
        mode.append(f"monitor from {args.monitor_root}")
    finished = phase.finished
    return (f"{args.sheets} spreadsheets, {phase.name} ({', '.join(mode)}): {phase.reads} reads "
            f"(batchGets {phase.batch_gets}, spreadsheets.get {phase.spreadsheet_gets}) at "
            f"{phase.per_window} a window: round {phase.round_s:.1f} s (run's wall {phase.wall_s:.1f} s), "
            f"least {phase.least_s:.1f} s (one read {phase.one_read_s:.3f} s) -> ratio {phase.ratio:.3f} "
            f"(target <= {TARGET_RATIO}); 429s: {phase.quota_exceeded}; peak in flight "
            f"{phase.peak_in_flight}; done {phase.done}/{phase.expected}"
            + (f"; VALUES NOT READ for {len(phase.values_missing)}" if phase.values_missing else "")
            + f"; run: {finished.get('stop_reason')}, {finished.get('tasks')} reads")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=1150,
                        help="spreadsheets; a first round reads about one more in a hundred (details)")
    parser.add_argument("--setups", nargs="+", default=["1x5"],
                        help="PxC: P Cloud projects of C credentials each")
    parser.add_argument("--edits", type=int, default=500, help="spreadsheets edited at once for the burst")
    parser.add_argument("--no-burst", dest="burst", action="store_false", help="the full round only")
    parser.add_argument("--sequential", action="store_true",
                        help="one read at a time (max_concurrent_reads = 1); the full round only")
    parser.add_argument("--hanging", type=float, default=0.0, help="fraction of spreadsheets that hang")
    parser.add_argument("--scale", type=int, default=1, help="quotas x K, latency and timeout / K")
    parser.add_argument("--monitor-root", type=Path, help="run the monitor of this checkout instead")
    parser.add_argument("--log", type=Path, help="write each run's log lines (JSON) into this folder")
    args = parser.parse_args()
    met = True
    for setup in args.setups:
        projects, per_project_credentials = (int(part) for part in setup.split("x"))
        for phase in measure(args, projects, per_project_credentials):
            print(describe(args, phase), flush=True)
            met = met and phase.met
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
