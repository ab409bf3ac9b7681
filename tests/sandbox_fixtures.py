"""A generated dataset served by an in-process sandbox, with a monitor config for it.

Shared by the robustness tests: ``served_dataset`` starts the fake Google API on 127.0.0.1, loads a
generated dataset into it (optionally without its injected faults, or with its latencies scaled
down), writes service-account files and a monitor config next to each other, and hands back what a
test needs to start runs in-process (``run_once``) or as ``python -m monitor.cli run`` subprocesses.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from monitor.core.clock import ManualClock
from monitor.state import State, read_state
from monitor.storage import STATE_FILE_NAME
from sheet_sandbox import dataset as datasets
from sheet_sandbox.server import SandboxHandle, running_sandbox

# Breakage kinds that exist only as injected faults: without the faults they are healthy.
FAULT_KINDS = frozenset({"access_removed", "flaky", "server_error", "slow", "hang"})
# Variables that would point a subprocess at another config or a real Telegram bot.
_FOREIGN_ENV = ("SHEET_MONITOR_CONFIG", "TELEGRAM_BOT_TOKEN", "TELEGRAM_BOT_TOKEN_FILE")


@dataclass
class ServedDataset:
    sandbox: SandboxHandle
    dataset: datasets.Dataset
    config_path: Path
    faults_applied: bool = True
    children: list[subprocess.Popen] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return self.config_path.parent

    @property
    def state_dir(self) -> Path:
        return self.folder / "state"  # write_config's default, relative to the config

    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE_NAME

    @property
    def ids(self) -> list[str]:
        return [entry.id for entry in self.dataset.sheets]

    def expected_health(self) -> dict[str, str]:
        """Spreadsheet id -> the health the manifest says the monitor should find."""
        # A breakage made after the first read (Dataset.edits) is not made until a test applies it.
        return {
            entry.id: "ok" if (entry.kind in FAULT_KINDS and not self.faults_applied)
            or entry.kind in datasets.AFTER_FIRST_READ else entry.expect
            for entry in self.dataset.sheets
        }

    def state(self) -> State | None:
        """The saved state, opened the way the watchdog opens it (read-only, without the lock)."""
        return read_state(self.state_dir)

    def fault(self, **spec) -> None:
        self.sandbox.google.faults.add(spec)

    def run_argv(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "monitor.cli", "run", "--config", str(self.config_path), *extra]

    def start_run(self, *extra: str) -> subprocess.Popen:
        """``sheet-monitor run`` as a child process; stdout and stderr are pipes (text).

        A child still running when ``served_dataset`` ends (a test failed midway) is killed there.
        """
        process = subprocess.Popen(
            self.run_argv(*extra),
            cwd=self.folder,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.children.append(process)
        return process

    def run_cli(self, *extra: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.run_argv(*extra), cwd=self.folder, env=clean_env(), capture_output=True, text=True,
            timeout=timeout,
        )


def clean_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in _FOREIGN_ENV}


@contextmanager
def served_dataset(
    folder: Path,
    count: int,
    *,
    seed: int = 0,
    clock=None,
    faults: bool = True,
    latency_scale: float = 1.0,
    read_per_user: int = 60,
    read_per_project: int = 300,
    config_read_per_user: int | None = None,
    config_read_per_project: int | None = None,
    request_timeout: str | None = None,
    run_section: dict[str, str] | None = None,
    latency: object = "off",
    feed_delay: object = "google",
) -> Iterator[ServedDataset]:
    """Serve ``generate(count, seed)`` and write ``folder/monitor.toml`` (state in ``folder/state``).

    ``faults=False`` drops the dataset's injected faults (missing spreadsheets still answer 404 and
    renamed tabs 400, since those are data, not faults). ``latency_scale`` multiplies the "slow"
    spreadsheets' latencies; ``latency`` is the sandbox's own answer-time model, off unless a test
    asks for Google's ("google", or a scale of it); ``feed_delay`` Drive's change-feed delay, Google's
    unless a test says otherwise (see ``drive_caught_up``). The config paces at ``config_read_per_*``
    (default: the sandbox's quota); ``run_section`` adds duration keys to its ``[run]`` table, e.g.
    ``{"round_interval": "1h"}``. Its runs end with their round's work (``change_poll = "off"``), as
    the tests wait on them, unless ``run_section`` sets ``change_poll``.
    """
    kwargs = {"clock": clock} if clock is not None else {}
    with running_sandbox(
        read_per_user=read_per_user, read_per_project=read_per_project, telegram=False,
        latency=latency, feed_delay=feed_delay, **kwargs
    ) as sandbox:
        data = datasets.generate(count, seed, now=sandbox.clock.now())
        if not faults:
            data.faults = []
        else:
            data.faults = [_scaled(spec, latency_scale) for spec in data.faults]
        datasets.apply(data, sandbox.google)
        credentials = sandbox.write_credentials(folder / "secrets", 1)
        config_path = datasets.write_config(
            data,
            folder / "monitor.toml",
            credentials=credentials,
            endpoint=sandbox.base_url,
            read_per_user=config_read_per_user or read_per_user,
            read_per_project=config_read_per_project or read_per_project,
            request_timeout=request_timeout,
            run={"change_poll": "off", **(run_section or {})},
        )
        served = ServedDataset(sandbox, data, config_path, faults_applied=faults)
        try:
            yield served
        finally:
            for process in served.children:
                if process.poll() is None:
                    process.kill()
                    process.communicate()


def drive_caught_up(google) -> None:
    """Move a sandbox's manual clock past the moment its last held edit surfaces, by whole seconds
    (``google``: the GoogleSandbox or its store; nothing held, no move): every edit made before is
    then in Drive's change feed and modifiedTime, as at Google once their spreadsheets' moments
    have passed. Whole seconds keep a clock that starts on a second comparable with stored times."""
    moment = google.feed_delay.settled_by()
    if moment is not None and moment > google.clock.now():
        google.clock.advance(math.ceil((moment - google.clock.now()).total_seconds()))


def _scaled(spec: dict, scale: float) -> dict:
    if not spec.get("latency_ms"):
        return spec
    return {**spec, "latency_ms": int(spec["latency_ms"] * scale)}


@pytest.fixture(scope="module")
def control_sandbox() -> Iterator[SandboxHandle]:
    """The fake Google API alone, latency off, on a ManualClock at the real time (google-auth stamps
    its JWTs with the real clock): for tests of the control API, one per module."""
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as handle:
        yield handle
