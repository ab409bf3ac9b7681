"""Helpers for tests that start ``sheet-monitor run`` as a child process: its log as it comes, and
a kill -9.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time


class RunLog:
    """A child run's JSON log lines as they come, read from the pipe's descriptor (no buffering,
    so a wait never sleeps on a line already read) and kept for later."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process
        self.events: list[dict] = []
        self._pending = b""

    def wait_for(self, event: str, timeout: float = 15.0, **fields) -> dict | None:
        """The first line (read now or earlier) of ``event`` with ``fields``; None if the run ended
        without logging it."""
        seen = 0
        deadline = time.monotonic() + timeout
        while True:
            for line in self.events[seen:]:
                if line.get("event") == event and all(line.get(k) == v for k, v in fields.items()):
                    return line
            seen = len(self.events)
            left = deadline - time.monotonic()
            assert left > 0, f"no {event} within {timeout} s; saw {[e.get('event') for e in self.events]}"
            if not self._read(left):
                return None

    def to_the_end(self, timeout: float = 60.0) -> list[dict]:
        """Every line the run logs until it ends (to say in a failure what it did)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(deadline - time.monotonic()):
            pass
        return self.events

    def _read(self, timeout: float) -> bool:
        fd = self.process.stderr.fileno()
        readable, _, _ = select.select([fd], [], [], timeout)
        if not readable:
            return True
        chunk = os.read(fd, 65536)
        if not chunk:
            return False
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        self.events += [json.loads(line) for line in lines if line.startswith(b"{")]
        return True


def kill_now(process: subprocess.Popen) -> None:
    """A kill -9 of a run that must still be running."""
    assert try_kill(process), f"the run ended before it was killed ({process.returncode})"


def try_kill(process: subprocess.Popen) -> bool:
    """A kill -9 at a random moment: False if the run had already ended (it may end between any
    look at it and the signal)."""
    process.send_signal(signal.SIGKILL)
    process.communicate()
    return process.returncode == -signal.SIGKILL
