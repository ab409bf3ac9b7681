"""One round read by three runners on one Redis, sharing two Cloud projects' quotas.

Target: the round takes the time the quotas allow, its reads / (reads per minute the credentials
sustain), plus at most 10 % (ratio <= 1.10), with zero 429s: the per-credential and per-project
limits hold in every rolling minute although three processes send, each knowing only its own
credentials. And beside it, the same round read by one runner on the file backend with all the
credentials: the figure a single machine gets.

The sandbox runs in its own process with Google's latency model and real quotas (60 reads a minute
per account, 300 per project) and 12 accounts in 2 projects (sa-1..6 in the first, sa-7..12 in the
second). Each project has more accounts (6 x 60 = 360) than its quota allows: its quota binds, and
two runners share each one:

    runner-1  sa-1..4             project 1
    runner-2  sa-5, sa-6, sa-7, sa-8  projects 1 and 2
    runner-3  sa-9..12            project 2

Each runner on its own would pace a project at what its credentials allow (runner-1 at 240 a minute,
runner-2 at 120 in each), so without shared pacing runner-1 and runner-2 together send 360 a minute
in project 1 and meet 429s; with it, the sandbox refuses nothing. The sustained rate is 2 x 300.

How the three runners share the round depends on what main holds: when the config knows
``[state] runner`` (several runners working one round on one state), every runner gets every
spreadsheet on one state prefix and they read the round together. Otherwise each runner reads a
third of the spreadsheets (and the catalogue they all check against) on a state prefix of its own,
sharing only the quota log (``[state] quota_prefix``); the bench says which mode it ran. Either way
the project quotas are shared across processes, which is what this measures.

Every run is ``python -m monitor.cli run`` in its own process, started together, with a one-hour
budget; the round time is from their start to the last one's exit (each ends when its round is
done). The bench checks what it claims: every runner's round is complete, the sandbox served at
least one read per spreadsheet, each account's requests came from the runner that owns it, and the
429s are the sandbox's own count. ``--scale K`` shortens it as bench/round_time.py's does (quotas x
K, latency / K). ``--unshared`` gives each runner a quota log of its own (``quota_prefix``), as if the
runners paced alone: the 429s that sharing prevents (the bench then fails its target on purpose).

    .venv/bin/python bench/multi_runner_round.py [--sheets 2000] [--scale 1] [--skip-file] [--logs DIR]
                                                 [--unshared]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, sandbox_url, served_dataset  # noqa: E402

from monitor.config import load_config  # noqa: E402
from monitor.config.sections import StateConfig  # noqa: E402
from monitor.engine.pacer import sustained_rate  # noqa: E402
from monitor.state import read_state  # noqa: E402
from monitor.storage.redis_store import RedisLocation  # noqa: E402

PER_USER, PER_PROJECT = 60, 300
PROJECTS, PER_PROJECT_CREDENTIALS = 2, 6
RUNNERS = {"runner-1": (1, 2, 3, 4), "runner-2": (5, 6, 7, 8), "runner-3": (9, 10, 11, 12)}
TARGET_RATIO = 1.10
DEFAULT_TIMEOUT_SECONDS = 30.0
REDIS_URL = os.environ.get("SHEET_MONITOR_TEST_REDIS", "redis://127.0.0.1:6379/0")
SHARED_ROUND = "runner" in StateConfig.model_fields  # several runners on one round, on main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=1, help="quotas x K, latency and timeout / K")
    parser.add_argument("--skip-file", action="store_true", help="do not measure one runner on files")
    parser.add_argument("--logs", type=Path, help="keep each run's log lines in this folder")
    parser.add_argument("--unshared", action="store_true",
                        help="each runner paces alone (a quota log of its own): what sharing prevents")
    args = parser.parse_args()
    mode = ("one round, shared by the runners ([state] runner)" if SHARED_ROUND else
            "each runner its own third of the spreadsheets on its own state prefix, sharing only the "
            "quota log ([state] quota_prefix): the runners-on-one-round work is not on main")
    print(f"mode: {mode}")
    redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    shared = measure(args, runners=True)
    print(describe(args, "3 runners on Redis" + (", each pacing alone" if args.unshared else ""), shared))
    ok = shared["ok"] and shared["ratio"] <= TARGET_RATIO
    if not args.skip_file:
        single = measure(args, runners=False)
        print(describe(args, "1 runner on files ", single))
        print(f"3 runners on Redis / 1 runner on files: {shared['wall_s'] / single['wall_s']:.2f}")
        ok = ok and single["ok"]
    return 0 if ok else 1


def measure(args, *, runners: bool) -> dict:
    scale = args.scale
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=args.sheets, credentials=PROJECTS * PER_PROJECT_CREDENTIALS, projects=PROJECTS,
        per_user=PER_USER * scale, per_project=PER_PROJECT * scale, faults=False,
        request_timeout=f"{DEFAULT_TIMEOUT_SECONDS / scale:g}s", latency_scale=1 / scale,
        run={"round_interval": "24h"},  # one round only, however long it takes
    ) as config_path:
        prefix = f"bench-multi-runner:{uuid.uuid4().hex}"
        configs = runner_configs(config_path, prefix, args.unshared) if runners else {"single": config_path}
        try:
            started = time.perf_counter()
            finished = run_together(configs, args.logs)
            wall = time.perf_counter() - started
            with requests.Session() as control:
                control.trust_env = False
                stats = control.get(f"{sandbox_url(config_path)}/_sandbox/stats", timeout=10).json()
            return judged(args, stats, wall, rounds_done(configs), finished, configs)
        finally:
            delete_keys(prefix)


def runner_configs(config_path: Path, prefix: str, unshared: bool = False) -> dict[str, Path]:
    """Each runner's config, beside the generated one: its own credentials, its spreadsheets, Redis."""
    text = config_path.read_text()
    head, *blocks = re.split(r"(?m)^(?=\[\[sheets\]\]$)", text)
    csv_rows = sheets_csv(config_path)
    configs = {}
    for index, (name, numbers) in enumerate(RUNNERS.items()):
        keys = ", ".join(f'"secrets/sa-{n}.json"' for n in numbers)
        own_head = re.sub(r"(?m)^credentials = .*$", f"credentials = [{keys}]", head)
        own_head = own_head.replace('state_dir = "state"', f'state_dir = "state-{name}"')
        own_blocks = blocks
        if SHARED_ROUND:
            state = f'prefix = "{prefix}:state"\nrunner = "{name}"\n'
            if unshared:
                state += f'quota_prefix = "{prefix}:quota:{name}"\n'
        else:
            quota = f"{prefix}:quota:{name}" if unshared else f"{prefix}:quota"
            state = f'prefix = "{prefix}:{name}"\nquota_prefix = "{quota}"\n'
            own_blocks = own_share(blocks, index, lambda block: 'profile = "catalogue"' in block)
            if csv_rows:
                own_rows = [csv_rows[0], *own_share(csv_rows[1:], index, lambda row: ",catalogue," in row)]
                config_path.with_name(f"sheets-{name}.csv").write_text("".join(own_rows))
                own_head = own_head.replace('"sheets.csv"', f'"sheets-{name}.csv"')
        state_table = f'\n[state]\nbackend = "redis"\nurl = "{REDIS_URL}"\n{state}\n'
        path = config_path.with_name(f"{name}.toml")
        path.write_text(own_head + state_table + "".join(own_blocks))
        configs[name] = path
    return configs


def own_share(entries: list[str], index: int, lends) -> list[str]:
    """Runner ``index``'s third of the stores, and every spreadsheet the stores check against."""
    lenders = [entry for entry in entries if lends(entry)]
    stores = [entry for entry in entries if not lends(entry)]
    return stores[index::len(RUNNERS)] + lenders


def sheets_csv(config_path: Path) -> list[str]:
    """The lines of the generated sheets.csv (a large dataset's spreadsheets), none when inline."""
    path = config_path.with_name("sheets.csv")
    return path.read_text().splitlines(keepends=True) if path.exists() else []


def run_together(configs: dict[str, Path], logs: Path | None = None) -> dict[str, dict]:
    """Start every runner at once (one-hour budget); each one's run_finished log line.

    Each run logs to a file, not a pipe: a pipe read only once its run has ended fills up while the
    others work, and a run blocked writing its log stops reading (it looked like the runners taking
    turns)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    folder = logs or next(iter(configs.values())).parent
    folder.mkdir(parents=True, exist_ok=True)
    processes = {}
    for name, path in configs.items():
        with (folder / f"{name}.log").open("w") as log:
            processes[name] = subprocess.Popen(
                [sys.executable, "-m", "monitor.cli", "run", "--config", str(path), "--budget", "3600",
                 "--no-progress"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
    finished = {}
    for name, process in processes.items():
        process.wait(timeout=4000)
        text = (folder / f"{name}.log").read_text()
        lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        last = [line for line in lines if line.get("event") == "run_finished"]
        if process.returncode != 0 or not last:
            raise SystemExit(f"{name}'s run failed (exit {process.returncode}): {text[-2000:]}")
        finished[name] = last[-1]
    return finished


def rounds_done(configs: dict[str, Path]) -> dict[str, tuple[int, int]]:
    """(spreadsheets done or failed, spreadsheets in the round) per state read back."""
    done = {}
    for name, path in configs.items():
        config = load_config(path)
        location = config.run.state_dir
        if config.state.backend == "redis":
            location = RedisLocation(config.state.url, prefix=config.state.prefix)
        counts = read_state(location).round.counts()
        done[name] = (sum(n for status, n in counts.items() if status in ("done", "failed")),
                      sum(counts.values()))
        if SHARED_ROUND:
            break  # one state, one round
    return done


def judged(args, stats: dict, wall: float, done: dict, finished: dict, configs: dict[str, Path]) -> dict:
    by_endpoint = stats.get("by_endpoint", {})
    batch_gets = by_endpoint.get("GET /v4/spreadsheets/{id}/values:batchGet", 0)
    spreadsheet_gets = by_endpoint.get("GET /v4/spreadsheets/{id}", 0)  # zones, reads with details
    bound = 60.0 * (batch_gets + spreadsheet_gets) / sustained_rate(
        [PER_PROJECT_CREDENTIALS] * PROJECTS, PER_USER * args.scale, PER_PROJECT * args.scale)
    # Every spreadsheet was asked: a batchGet, or its zone read when that failed first (a 404).
    complete = all(n == total for n, total in done.values()) and \
        sum(total for _, total in done.values()) >= args.sheets and \
        max(batch_gets, spreadsheet_gets) >= args.sheets
    strangers = foreign_requests(stats.get("by_user", {}), configs)
    return {"wall_s": wall, "bound_s": bound, "ratio": wall / bound, "batch_gets": batch_gets,
            "spreadsheet_gets": spreadsheet_gets, "quota_exceeded": stats.get("quota_exceeded", 0),
            "done": done, "complete": complete, "strangers": strangers, "finished": finished,
            "by_user": stats.get("by_user", {}), "refused": stats.get("quota_exceeded_by_user", {}),
            "ok": complete and not strangers and stats.get("quota_exceeded", 0) == 0}


def foreign_requests(by_user: dict[str, int], configs: dict[str, Path]) -> list[str]:
    """Accounts that sent requests without being in any runner's config (none should)."""
    configured = set()
    for path in configs.values():
        for key in load_config(path).google.credentials:
            configured.add(json.loads(key.read_text())["client_email"])
    return sorted(user for user in by_user if user not in configured and "@" in user)


def describe(args, what: str, m: dict) -> str:
    done = ", ".join(f"{name} {n}/{total}" for name, (n, total) in m["done"].items())
    reads = ", ".join(f"{name} {line.get('tasks')}" for name, line in m["finished"].items())
    scale = f" (scale x{args.scale})" if args.scale > 1 else ""
    return (f"{args.sheets} spreadsheets, {what}{scale}: round {m['wall_s']:.1f} s, quota bound "
            f"{m['bound_s']:.1f} s -> ratio {m['ratio']:.2f} (target <= {TARGET_RATIO}); 429s: "
            f"{m['quota_exceeded']} {refused(m['refused'])}; batchGets {m['batch_gets']}, "
            f"spreadsheets.get {m['spreadsheet_gets']}; "
            f"rounds done: {done}{'' if m['complete'] else ' (INCOMPLETE)'}; tasks per run: {reads}; "
            f"accounts outside the configs: {len(m['strangers'])}")


def refused(by_user: dict[str, int]) -> str:
    """Whose requests the sandbox refused for quota: "(sa-3: 1, sa-7: 2)", or nothing."""
    named = [f"sa-{user.split('@')[0].rsplit('-', 1)[-1]}: {n}" for user, n in sorted(by_user.items())]
    return f"({', '.join(named)})" if named else ""


def delete_keys(prefix: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
    if keys:
        client.delete(*keys)


if __name__ == "__main__":
    sys.exit(main())
