"""Start-up of `sheet-monitor run` with a full state: from the process's start to its first request.

The state of N spreadsheets after a full round (every spreadsheet's health record, its metric history
where its checks keep one, its finished task), built in about a minute instead of a round's twenty:

1. the sandbox (its own process, latency off, quotas lifted, faults removed) serves N generated
   spreadsheets; one real `sheet-monitor run` of ``--sample-budget`` seconds reads as many as it can
   (a few hundred), so the records are the monitor's own;
2. through the state's own API (``changing_state``), every spreadsheet the sample did not read gets a
   copy of a read one's records (its health, its history, its task, renamed to its place in the
   round), and the round is moved a day back, so the next run starts a new round at once, as the
   next tick after a finished round would; saved and compacted as a run saves;
3. the state is read back and counted (health records, histories, finished tasks: each N, or the
   bench stops), and the state folder is kept as the pristine copy.

Each repetition restores that copy, starts `python -m monitor.cli run` exactly as cron would, watches
the sandbox until its first request (``first_request_at``, polled every 20 ms), then kills the run
(kill -9: the product's own guarantee is that nothing is lost by it; the state is restored anyway).
Peak RSS twice: the start-up's, the process's ``VmHWM`` at the last poll before the first request
(read before the sandbox is asked, so it precedes the request), and at the kill from ``os.wait4``
(a few reads later: a run hands out reads as fast as they come back); and the CPU time the run
had used at that last poll (``/proc/<pid>/stat``, 10 ms ticks), which the machine's other work
moves less than the wall time. The median of ``--repeat`` runs is printed; targets: under 0.5 s at
5,000 and under 1 s at 20,000.

``--monitor-root`` runs another checkout's monitor (an older commit) on the same state and sandbox,
interleaved with this one's, for before/after figures. Each checkout's modules are compiled to
bytecode before the first start is timed (``compiled``), as an install has them.

    .venv/bin/python bench/run_startup.py [--sheets 700 5000 20000] [--repeat 5] [--monitor-root PATH]
        [--sample-budget 20] [--keep FOLDER]

``--keep`` copies each built state with its config (``FOLDER/<N>/``) for profiling a run's start.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, compiled, sandbox_url, served_dataset  # noqa: E402

from monitor.config import load_config  # noqa: E402
from monitor.engine.tasks import FINISHED, Round, task_id  # noqa: E402
from monitor.state import changing_state, read_state  # noqa: E402

STARTUP_TARGETS_S = {5000: 0.5, 20000: 1.0}
HUGE_QUOTA = 10**8
POLL_SECONDS = 0.02
FIRST_REQUEST_WITHIN_S = 60.0
SETTLE_SECONDS = 1.0


def run_child(config: Path, budget: float, root: Path) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if key != "TELEGRAM_BOT_TOKEN"}
    return subprocess.Popen(
        [sys.executable, "-m", "monitor.cli", "run", "--config", str(config), "--budget", str(budget)],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )


def sample_run(config: Path, budget: float) -> None:
    """One real run that reads what it can in ``budget`` seconds and saves it."""
    child = run_child(config, budget, ROOT)
    if child.wait() != 0:
        raise SystemExit(f"the sample run failed (exit {child.returncode})")


def scaled(config_path: Path) -> dict[str, int]:
    """Every configured spreadsheet given a read one's records, the round finished and moved a day
    back (see the module docstring); the samples' count."""
    config = load_config(config_path, require_secrets=False)
    with changing_state(config.run.state_dir, actor="bench", now=datetime.now(UTC)) as session:
        state = session.state
        rnd = state.round
        read = [task for task in rnd.tasks.values()
                if task.status in FINISHED and task.target in state.health]
        if not read:
            raise SystemExit("the sample run read no spreadsheet")
        info = replace(rnd.info, started_at=rnd.info.started_at - timedelta(days=1))
        tasks = []
        for number, target in enumerate(info.targets, start=1):
            own = rnd.tasks[task_id(info.id, number)]
            if own.status in FINISHED and target in state.health:
                tasks.append(own)
                continue
            sample = read[number % len(read)]
            state.health[target] = state.health[sample.target]
            if sample.target in state.history:
                state.history[target] = state.history[sample.target]
            tasks.append(replace(sample, id=own.id, target=target))
        state.round = Round(info, tasks)
    return {"sampled": len(read)}


def counted(config_path: Path) -> dict[str, int]:
    """What the built state holds, read back as any reader would."""
    config = load_config(config_path, require_secrets=False)
    state = read_state(config.run.state_dir)
    configured = {sheet.id for sheet in config.sheets}
    return {
        "configured": len(configured),
        "health": len(configured & state.health.keys()),
        "history": len(configured & state.history.keys()),
        "finished_tasks": sum(task.status in FINISHED for task in state.round.tasks.values()),
        "damaged": len(state.damaged),
    }


def timed_start(config: Path, root: Path, control: requests.Session, pristine: Path, folder: Path
                ) -> tuple[float, float, float, float]:
    """(seconds to the first request, CPU seconds before it, peak RSS before it and at the kill, in
    MB) of one run started on the pristine state."""
    shutil.rmtree(folder)
    shutil.copytree(pristine, folder)
    os.sync()  # the copy on disk before the run starts: its writeback does not fall in the start-up
    base = sandbox_url(config)
    control.delete(f"{base}/_sandbox/stats", timeout=10).raise_for_status()
    started_at = time.time()
    child = run_child(config, 60, root)
    first, before, cpu = None, 0.0, 0.0
    try:
        while first is None and time.time() - started_at < FIRST_REQUEST_WITHIN_S:
            time.sleep(POLL_SECONDS)
            # Read before the sandbox is asked: when it then says "no request yet", they preceded one.
            peak, spent = peak_so_far(child.pid), cpu_so_far(child.pid)
            if child.poll() is not None:
                break
            first = control.get(f"{base}/_sandbox/stats", timeout=10).json()["first_request_at"]
            if first is None:
                before, cpu = peak, spent
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        _, _, usage = os.wait4(child.pid, 0)
        # Requests the killed run had sent may still be answered: let them land before the next
        # repetition clears the counts, or the next run's first request would be one of these.
        time.sleep(SETTLE_SECONDS)
    if first is None or first < started_at:
        raise SystemExit(f"no request of this run within {FIRST_REQUEST_WITHIN_S:.0f} s "
                         f"(exit {child.returncode})")
    return first - started_at, cpu, before, usage.ru_maxrss / 1024


def cpu_so_far(pid: int) -> float:
    """The process's CPU time so far (user and system), in seconds; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0


def peak_so_far(pid: int) -> float:
    """The process's peak resident set so far (VmHWM), in MB; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return 0.0


def measure(sheets: int, repeat: int, roots: dict[str, Path], sample_budget: float, keep: Path | None
            ) -> None:
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=sheets, credentials=1, per_user=HUGE_QUOTA, per_project=HUGE_QUOTA, faults=False,
        request_timeout="30s", run={"round_interval": "24h", "change_poll": "off"}, latency="off",
    ) as config, requests.Session() as control:
        control.trust_env = False  # never through a proxy: the sandbox is on 127.0.0.1
        config.write_text(config.read_text().replace("[run]\n", "[run]\nchange_detection = false\n", 1))
        sample_run(config, sample_budget)
        built = scaled(config) | counted(config)
        expected = built["configured"]
        assert expected == sheets, f"{expected} spreadsheets configured, not {sheets}"
        assert built["health"] == built["finished_tasks"] == expected, f"the state is not full: {built}"
        assert built["history"] > 0 and not built["damaged"], f"the state is not as built: {built}"
        folder = Path(load_config(config, require_secrets=False).run.state_dir)
        pristine = Path(tmp) / "pristine"
        shutil.copytree(folder, pristine)
        if keep is not None:  # the config, its files and the built state, to profile a run's start
            shutil.copytree(tmp, keep / str(sheets), ignore=shutil.ignore_patterns("pristine"))
        snapshot = sum(path.stat().st_size for path in pristine.rglob("properties.json"))
        print(f"{sheets:>6} spreadsheets: state of {built['health']} health records, {built['history']} "
              f"histories, {built['finished_tasks']} finished tasks (copies of {built['sampled']} read), "
              f"snapshot {snapshot / 1e6:.1f} MB", flush=True)
        times: dict[str, list[tuple[float, float, float, float]]] = {label: [] for label in roots}
        for _ in range(repeat):
            for label, root in roots.items():  # interleaved: the machine's load falls on both alike
                times[label].append(timed_start(config, root, control, pristine, folder))
        for label, runs in times.items():
            seconds, cpu, before, killed = (statistics.median(run[n] for run in runs) for n in range(4))
            limit = STARTUP_TARGETS_S.get(sheets)
            met = "met" if limit is not None and seconds < limit else "NOT met"
            verdict = "" if limit is None else f" (target {limit} s: {met})"
            print(f"  {label}: start-up to the first request {seconds:.2f} s median of {len(runs)} "
                  f"[{', '.join(f'{run[0]:.2f}' for run in runs)}]{verdict}, CPU {cpu:.2f} s before it "
                  f"(the last poll's); peak RSS {before:.1f} MB "
                  f"before it, {killed:.1f} MB at the kill; load average {os.getloadavg()[0]:.2f}",
                  flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, nargs="+", default=[700, 5000, 20000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sample-budget", type=float, default=20.0,
                        help="seconds of the real run whose records are copied (default 20)")
    parser.add_argument("--monitor-root", type=Path, help="also run the monitor of this checkout")
    parser.add_argument("--keep", type=Path, help="copy each built state and its config into this folder")
    args = parser.parse_args()
    roots = {"this": ROOT}
    if args.monitor_root is not None:
        roots["other"] = args.monitor_root.resolve()
    for root in roots.values():
        compiled(root)
    print(f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    for sheets in args.sheets:
        measure(sheets, args.repeat, roots, args.sample_budget, args.keep)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
