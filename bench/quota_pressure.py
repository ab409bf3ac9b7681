"""Per-project 429 pressure: another tool spends part of one Cloud project's read quota while a run
reads a round with 2 projects x 3 credentials.

Target: the monitor stops the right credentials (the busy project's, never the other project's) and
meets at most one 429 per credential per minute, and the round takes about what the quota left to
it allows.

The sandbox runs in its own process with Google's latency and quotas (60 reads/min per account, 300
per project) and 12 accounts over two projects: the monitor's config names sa-1..3 (project 1) and
sa-7..9 (project 2); "another tool" reads steadily with sa-4..6, in project 1, at ``--tool-rate``
reads a minute (default 150), warmed up for a minute before the run starts, so project 1 leaves the
monitor about 300 - 150 of its 180 a minute. The tool sends at its pace whatever it is answered,
as a program that knows nothing of the monitor would. The run is ``python -m monitor.cli run`` in
its own process with a one-hour budget (it ends when the round is done); ``--monitor-root`` runs
another checkout's monitor against the same sandbox (the previous release, say).

Counted from the sandbox's stats, sampled every ``--sample`` seconds: each account's requests and
429s; "most in a minute" is the largest count of one credential's 429s over any 60 s between two
samples. ``--scale K`` multiplies the quotas and the tool's rate by K and divides the latency by
K (the window stays 60 s), for a shorter run.

    .venv/bin/python bench/quota_pressure.py [--sheets 700] [--tool-rate 150] [--scale 1]
                                             [--monitor-root PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import requests
from gspread.exceptions import APIError

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import sandbox_url, served_dataset  # noqa: E402
from round_time import run_cli, run_finished  # noqa: E402

from monitor.config import load_config  # noqa: E402
from monitor.google.client import build_gspread_client  # noqa: E402

PER_USER, PER_PROJECT = 60, 300
MONITOR = (1, 2, 3, 7, 8, 9)  # sa-N of the config: three in each project
TOOL = (4, 5, 6)  # another tool's accounts, in project 1


class OtherTool:
    """Reads one spreadsheet steadily from its accounts, one thread each, whatever it is answered."""

    def __init__(self, base: str, keys: list[Path], spreadsheet: str, per_minute: float) -> None:
        self.clients = [build_gspread_client(key, endpoint=base, timeout=10) for key in keys]
        self.spreadsheet = spreadsheet
        self.interval = 60.0 * len(keys) / per_minute
        self.answers: Counter[int] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._read, args=(client, n), daemon=True)
                         for n, client in enumerate(self.clients)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=15)

    def _read(self, client, offset: int) -> None:
        due = time.monotonic() + offset * self.interval / len(self.clients)
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            due += self.interval
            try:
                client.http_client.values_batch_get(self.spreadsheet, ["Stock!A1"])
                status = 200
            except APIError as exc:
                status = exc.response.status_code
            except requests.RequestException:
                status = 0
            with self._lock:
                self.answers[status] += 1


class Sampler:
    """The sandbox's stats every ``every`` seconds, on its own thread: (seconds since start, stats)."""

    def __init__(self, base: str, every: float) -> None:
        self.base, self.every = base, every
        self.samples: list[tuple[float, dict]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._started = time.monotonic()

    def start(self) -> None:
        self._started = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=15)
        self._take(requests.Session())  # the last one, after the run

    def _loop(self) -> None:
        with requests.Session() as session:
            session.trust_env = False  # never through a proxy: the sandbox is on 127.0.0.1
            self._take(session)
            while not self._stop.wait(self.every):
                self._take(session)

    def _take(self, session: requests.Session) -> None:
        session.trust_env = False
        stats = session.get(f"{self.base}/_sandbox/stats", timeout=10).json()
        self.samples.append((time.monotonic() - self._started, stats))


def keep_credentials(config: Path, numbers: tuple[int, ...]) -> None:
    """Make the written config name only the monitor's accounts (``sa-N.json``)."""
    listed = ", ".join(f'"secrets/sa-{n}.json"' for n in numbers)
    text = re.sub(r"(?m)^credentials = \[.*\]$", f"credentials = [{listed}]", config.read_text())
    config.write_text(text)


def first_sheet(config: Path) -> str:
    return load_config(config).sheets[0].id


def email_of(key: Path) -> str:
    return json.loads(key.read_text())["client_email"]


def refused(stats: dict, email: str) -> int:
    return stats.get("quota_exceeded_by_user", {}).get(email, 0)


def most_in_a_minute(samples: list[tuple[float, dict]], email: str) -> int:
    """The most 429s one account met between two samples at most 60 s apart."""
    counts = [(at, refused(stats, email)) for at, stats in samples]
    most = 0
    for index, (start, before) in enumerate(counts):
        for at, after in counts[index + 1:]:
            if at - start > 60.0:
                break
            most = max(most, after - before)
    return most


def waves(samples: list[tuple[float, dict]], emails: list[str], apart: float = 10.0) -> list[int]:
    """The refusals of ``emails`` grouped into waves: samples with refusals, less than ``apart``
    seconds after the wave's previous one, belong to it. One refused read, and those already in
    flight with it, make one wave; a credential sending on into the full window makes more."""
    grouped: list[int] = []
    last_at, before = -1e9, sum(refused(samples[0][1], email) for email in emails)
    for at, stats in samples[1:]:
        now = sum(refused(stats, email) for email in emails)
        if now > before:
            if at - last_at < apart:
                grouped[-1] += now - before
            else:
                grouped.append(now - before)
            last_at = at
        before = now
    return grouped


def measure(args) -> dict:
    scale = args.scale
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=args.sheets, credentials=12, projects=2, per_user=PER_USER * scale,
        per_project=PER_PROJECT * scale, faults=False, request_timeout=f"{30 / scale:g}s",
        # One round, however long, and the run ends with its work (it does not go on watching the feed).
        latency_scale=1 / scale, run={"round_interval": "24h", "change_poll": "off"},
    ) as config_path:
        keys = {n: config_path.parent / "secrets" / f"sa-{n}.json" for n in (*MONITOR, *TOOL)}
        keep_credentials(config_path, MONITOR)
        emails = {n: email_of(keys[n]) for n in MONITOR}
        base = sandbox_url(config_path)
        tool = OtherTool(base, [keys[n] for n in TOOL], first_sheet(config_path), args.tool_rate * scale)
        tool.start()
        time.sleep(60.0)  # a minute of the tool's steady reads in project 1's window
        sampler = Sampler(base, args.sample)
        sampler.start()
        started = time.perf_counter()
        finished = run_finished(run_cli(config_path, args.monitor_root))
        wall = time.perf_counter() - started
        sampler.stop()
        tool.stop()
    first, last = sampler.samples[0][1], sampler.samples[-1][1]
    busy = [emails[n] for n in MONITOR if n <= 6]
    return {"wall_s": wall, "finished": finished, "tool": dict(tool.answers),
            "waves": waves(sampler.samples, busy), "credentials": {
        n: {"email": emails[n], "project": 1 if n <= 6 else 2,
            "reads": last["by_user"].get(emails[n], 0) - first["by_user"].get(emails[n], 0),
            "refused": refused(last, emails[n]) - refused(first, emails[n]),
            "most_in_a_minute": most_in_a_minute(sampler.samples, emails[n])}
        for n in MONITOR}}


def report(args, m: dict) -> bool:
    """Print the figures; True when the targets hold."""
    scale, minutes = args.scale, m["wall_s"] / 60.0
    tool = min(args.tool_rate, len(TOOL) * PER_USER)  # its accounts' own quotas cap what it spends
    left = max(0.0, PER_PROJECT - tool)
    rate = (min(3 * PER_USER, PER_PROJECT) + min(3 * PER_USER, left)) * scale  # reads a minute
    # What the round needed: the monitor's requests Google answered (values, time zones, reads with
    # details), not one per spreadsheet: a first round also asks each spreadsheet's zone.
    needed = sum(c["reads"] - c["refused"] for c in m["credentials"].values())
    bound = 60.0 * needed / rate
    finished = m["finished"]
    print(f"{args.sheets} spreadsheets, 2x3 credentials, another tool at {args.tool_rate * scale:g} "
          f"reads/min in project 1 (answers {m['tool']}){f', scale x{scale}' if scale > 1 else ''}"
          f"{f', monitor from {args.monitor_root}' if args.monitor_root else ''}")
    print(f"run: {finished.get('outcome')}, {finished.get('stop_reason')}, {finished.get('tasks')} reads "
          f"in {m['wall_s']:.1f} s; bound for its {needed} answered requests at the quota the tool "
          f"leaves: {bound:.1f} s "
          f"(ratio {m['wall_s'] / bound:.2f})")
    ok = True
    for project in (1, 2):
        members = {n: c for n, c in m["credentials"].items() if c["project"] == project}
        reads = sum(c["reads"] for c in members.values())
        refusals = sum(c["refused"] for c in members.values())
        print(f"project {project}: {reads} requests ({reads / minutes:.0f}/min), {refusals} refused; "
              "429s per credential (most in one minute): "
              + ", ".join(f"sa-{n} {c['refused']} ({c['most_in_a_minute']})" for n, c in members.items()))
        if project == 2:
            ok &= refusals == 0
        ok &= all(c["refused"] <= math.ceil(minutes) for c in members.values())
    print(f"project 1's refusals in waves (reads refused within {10:.0f} s of each other): {m['waves']}")
    print(f"targets (project 2 never refused; at most one 429 per credential per minute, "
          f"{math.ceil(minutes)} in {minutes:.1f} min): {'met' if ok else 'MISSED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheets", type=int, default=700)
    parser.add_argument("--tool-rate", type=float, default=150.0,
                        help="the other tool's reads a minute in project 1")
    parser.add_argument("--scale", type=int, default=1, help="quotas and the tool's rate x K, latency / K")
    parser.add_argument("--sample", type=float, default=2.0, help="seconds between two stats samples")
    parser.add_argument("--monitor-root", type=Path, help="run the monitor of this checkout instead")
    args = parser.parse_args()
    return 0 if report(args, measure(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
