"""Fixtures and helpers shared by the file backend's tests (test_storage_file, test_storage_recovery)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from monitor.core.clock import ManualClock
from monitor.storage import FileStore, StatePaths
from monitor.storage.format import parse_state
from monitor.storage.journal import parse_journal

REPO = Path(__file__).resolve().parents[1]
CLOCK_START = datetime(2026, 1, 5, 3, 47, 12, tzinfo=UTC)
STAMP = "20260105T034712Z"


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def paths(state_dir: Path) -> StatePaths:
    return StatePaths.in_dir(state_dir)


def open_store(state_dir: Path, **kwargs) -> FileStore:
    return FileStore.in_dir(state_dir, clock=ManualClock(CLOCK_START), **kwargs)


def killed_writer(state_dir: Path, *updates: dict[str, str]) -> None:
    """Leave the files as a run killed after these updates would: journal records, no compaction."""
    store = open_store(state_dir)
    for values in updates:
        store.update(values)
    # Not closed, as a killed process never closes: the store is abandoned with its journal open.


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime: proof that nothing was touched."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


def snapshot_properties(path: Path) -> dict[str, str]:
    return parse_state(path.read_bytes()).properties


def journal_of(path: Path):
    return parse_journal(path.read_bytes(), str(path))


def run_python(code: str, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env, stdout=subprocess.PIPE, text=True, **kwargs,
    )


def disk_full(*args):
    raise OSError(28, "No space left on device")
