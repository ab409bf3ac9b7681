"""Shared by the run benchmarks: a sandbox in its own process, serving a generated dataset.

The sandbox runs as a separate process (``sheet-monitor sandbox serve``) so that its threads do not
compete with the measured run for the interpreter lock, as Google's servers would not.
"""

from __future__ import annotations

import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from monitor.core.clock import SystemClock

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def served_dataset(folder: Path, *, sheets: int, credentials: int, per_user: int, per_project: int,
                   seed: int = 7, request_timeout: str = "2s", faults: bool = True,
                   run: dict[str, str] | None = None, latency: str = "google",
                   latency_scale: float | None = None, projects: int = 1,
                   google: dict[str, object] | None = None, feed_delay: str = "google",
                   feed_delay_scale: float | None = None):
    """Start the sandbox with ``sheets`` generated spreadsheets; yield the written config's path.

    ``latency`` is the sandbox's answer-time model: "google" (real Google's, the default: a bench
    measures what a run meets) or "off" for a bench that measures the monitor's own costs;
    ``latency_scale`` multiplies Google's draws. ``feed_delay`` is Drive's change-feed delay: "google"
    (a spreadsheet's edits reach the change feed at the file's next moment, about every 3 minutes, as
    at Google: the default) or "off"; ``feed_delay_scale`` multiplies its period. ``faults=False``
    removes the dataset's injected faults (slow, hanging, flaky spreadsheets; its missing ones and
    renamed tabs stay, they are data), so that a round is not spent waiting on them.
    ``run`` adds keys to the config's [run] table, e.g. ``{"round_interval": "24h"}`` or
    ``{"change_detection": False}`` (strings are written quoted, booleans as TOML's), and ``google``
    to its [google] table, e.g. ``{"max_concurrent_reads": 1}``. ``projects`` spreads the credentials
    over that many Cloud projects, each with its own ``per_project`` quota.
    """
    config = folder / "monitor.toml"
    command = [
        sys.executable, "-m", "monitor.cli", "sandbox", "serve", "--no-telegram",
        "--generate", str(sheets), "--seed", str(seed),
        "--write-credentials", str(folder / "secrets"), "--credentials", str(credentials),
        "--write-config", str(config),
        "--read-per-user", str(per_user), "--read-per-project", str(per_project),
        "--latency", latency, "--projects", str(projects), "--feed-delay", feed_delay,
    ]
    if latency_scale is not None:
        command += ["--latency-scale", str(latency_scale)]
    if feed_delay_scale is not None:
        command += ["--feed-delay-scale", str(feed_delay_scale)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        for line in process.stdout:
            if line.startswith("serving"):
                break
        else:
            raise SystemExit("the sandbox did not start: " + " ".join(command))
        text = config.read_text()
        # The written config has no request_timeout (the monitor's default is 30 s): without this
        # line, the dataset's one hanging spreadsheet alone cost a run 3 x 30 s of waiting.
        text = re.sub(r'(?m)^request_timeout = .*\n', "", text)
        text = text.replace("[google]\n", f'[google]\nrequest_timeout = "{request_timeout}"\n', 1)
        for key, value in (run or {}).items():
            text = re.sub(rf"(?m)^{key} = .*\n", "", text)  # the written config's own (its budget)
            text = text.replace("[run]\n", f"[run]\n{key} = {toml_value(value)}\n", 1)
        for key, value in (google or {}).items():
            text = text.replace("[google]\n", f'[google]\n{key} = {value!r}\n', 1)
        config.write_text(text)
        if not faults:
            remove_faults(config)
        yield config
    finally:
        process.terminate()
        process.wait(timeout=10)


def toml_value(value: str | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else f'"{value}"'


def sandbox_url(config: Path) -> str:
    return next(line.split("=", 1)[1].strip().strip('"') for line in config.read_text().splitlines()
                if line.startswith("api_endpoint"))


def remove_faults(config: Path) -> None:
    import requests

    with requests.Session() as control:
        control.trust_env = False  # never through a proxy: the sandbox is on 127.0.0.1
        control.delete(f"{sandbox_url(config)}/_sandbox/faults", timeout=10).raise_for_status()


class TimedReader:
    """Wraps the real reader to add up the time spent waiting for the API."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    def read(self, *args, **kwargs):
        return self._timed(self.inner.read, *args, **kwargs)

    def read_detailed(self, *args, **kwargs):
        # A spreadsheet showing #N/A or #REF! is read again with Google's details (engine.inspect).
        return self._timed(self.inner.read_detailed, *args, **kwargs)

    def read_with_zone(self, *args, **kwargs):
        # The values and the time zone in one request, before a spreadsheet's dates are first judged
        # (engine.zone_refresh).
        return self._timed(self.inner.read_with_zone, *args, **kwargs)

    def time_zone(self, *args, **kwargs):
        # The zone alone, for a spreadsheet whose checks read no range (engine.inspect).
        return self._timed(self.inner.time_zone, *args, **kwargs)

    def modified_time(self, *args, **kwargs):
        return self._timed(self.inner.modified_time, *args, **kwargs)

    def tab_titles(self, *args, **kwargs):
        # The tabs a spreadsheet has, once Google refused a range (engine.inspect).
        return self._timed(self.inner.tab_titles, *args, **kwargs)

    def _timed(self, request, *args, **kwargs):
        import time

        started = time.perf_counter()
        try:
            return request(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started
            self.calls += 1


class SleepCountingClock(SystemClock):
    """The system clock, adding up the time the run chose to sleep."""

    def __init__(self) -> None:
        self.slept = 0.0

    def sleep(self, seconds: float) -> None:
        self.slept += max(seconds, 0.0)
        super().sleep(seconds)


def compiled(root: Path) -> None:
    """The checkout's bytecode written before a bench times a run's start-up, as an installed monitor
    has it (pip compiles a wheel's modules as it installs them). Else a shell with PYTHONDONTWRITEBYTECODE set
    (this machine's are) would have every run compile its ~150 modules from source again: ~0.15 s of
    CPU that no cron run of an install spends, and only for a checkout that had not cached them."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "monitor")], check=True,
                   stdout=subprocess.DEVNULL)
