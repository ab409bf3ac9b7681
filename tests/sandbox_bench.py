"""A run ``Bench`` whose reader is the real gspread reader on a sandbox served on 127.0.0.1, for run
tests that meet Google's answers as they are (tests/unit/engine/test_run_computing_cells.py,
tests/unit/engine/test_run_refused_files.py). No asserts here: test modules make them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from run_fixtures import Bench

from monitor.core.clock import ManualClock
from monitor.engine.fleet import Fleet
from monitor.google.reader import GspreadReader
from monitor.notify.alerts import compose_alert
from monitor.notify.settings import AlertSettings
from sheet_sandbox.server import running_sandbox
from sheet_sandbox.telegram_html import parse_html


@dataclass
class SandboxBench(Bench):
    sandbox: object = None

    def told(self) -> str:
        """The alert people would get for everything the runs recorded, as its text."""
        [message] = compose_alert(list(self.stored().events), Fleet({}), AlertSettings())
        return parse_html(message.text).text


@contextmanager
def sandbox_bench(kind: type[SandboxBench], folder: Path) -> Iterator[SandboxBench]:
    """A ``kind`` bench on a fresh sandbox, state in ``folder/state``, one credential."""
    clock = ManualClock(start=datetime.now(UTC))  # google-auth stamps its JWTs with the real time
    with running_sandbox(clock=clock, telegram=False, latency="off") as sandbox:
        bench = kind(None, [], folder / "state", clock=clock, sandbox=sandbox)
        [credential] = sandbox.write_credentials(folder / "secrets", 1)
        bench.credentials = [str(credential)]
        bench.reader = GspreadReader.from_credentials(endpoint=sandbox.base_url, timeout=2)
        yield bench
