"""The sandbox for tests: both fake APIs on free ports of 127.0.0.1, inside a ``with`` block.

    with running_sandbox(clock=ManualClock(datetime.now(UTC)), latency="off") as sandbox:
        paths = sandbox.write_credentials(tmp_path, 2)
        sandbox.google.store.put_control("sheet-1", {...})
        client = build_gspread_client(paths[0], endpoint=sandbox.base_url)

Leaving the block stops both servers, releases held ("hanging") requests and joins every thread the
servers started.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monitor.core.clock import SystemClock

from .google import GoogleSandbox
from .http import HTTPServerThread
from .switches import GOOGLE


@dataclass
class SandboxHandle:
    """What a test needs: the URLs, the live fake APIs (to seed and inspect) and their clock."""

    base_url: str  # the fake Google API: endpoint for the gspread seam; token_uri is base_url/token
    google: GoogleSandbox
    clock: Any
    telegram_url: str | None = None  # None when the fake Telegram is not available or not wanted
    telegram: Any = None

    @property
    def token_uri(self) -> str:
        return f"{self.base_url}/token"

    def write_credentials(self, directory: str | os.PathLike, count: int,
                          projects: int = 1) -> list[Path]:
        """``count`` service-account files for this sandbox (``sa-N.json``, mode 0600), spread over
        ``projects`` Cloud projects in contiguous blocks (each project has its own quota windows)."""
        return self.google.auth.write_credentials(directory, count, self.token_uri, projects)


@contextmanager
def running_sandbox(
    *,
    clock: Any = None,
    seed: int = 0,
    read_per_user: int = 60,
    read_per_project: int = 300,
    write_per_user: int = 60,
    write_per_project: int = 300,
    telegram: bool = True,
    latency: object = GOOGLE,
    feed_delay: object = GOOGLE,
) -> Iterator[SandboxHandle]:
    """Serve the fake Google API (and the fake Telegram API when ``telegram``) until the block ends.

    ``latency`` is Google's answer times by default (see latency.py); "off" answers at once, a number
    scales the model (0.1: a tenth of each draw). ``feed_delay`` is Drive's change-feed delay,
    Google's by default (a spreadsheet's edits reach changes.list and modifiedTime at the file's
    next moment, about every 3 minutes, see feed_delay.py), "off" or a scale. ``clock`` defaults
    to the system clock. A ManualClock used with google-auth's real token flow must start near the
    real time, because google-auth stamps its JWT from the real clock.
    """
    clock = clock if clock is not None else SystemClock()
    google = GoogleSandbox(
        clock=clock,
        seed=seed,
        read_per_user=read_per_user,
        read_per_project=read_per_project,
        write_per_user=write_per_user,
        write_per_project=write_per_project,
        latency=latency,
        feed_delay=feed_delay,
    )
    with ExitStack() as stack:
        google_server = stack.enter_context(HTTPServerThread(google))
        handle = SandboxHandle(base_url=google_server.base_url, google=google, clock=clock)
        fake_telegram = _make_fake_telegram(clock) if telegram else None
        if fake_telegram is not None:
            telegram_server = stack.enter_context(HTTPServerThread(fake_telegram))
            handle.telegram = fake_telegram
            handle.telegram_url = telegram_server.base_url
        yield handle


def _make_fake_telegram(clock: Any) -> Any:
    """The fake Telegram app, or None while its module does not exist yet."""
    try:
        module = importlib.import_module("sheet_sandbox.telegram")
    except ModuleNotFoundError as exc:
        if exc.name != "sheet_sandbox.telegram":
            raise  # the module exists but is broken: say so rather than hide it
        return None
    return module.FakeTelegram(clock)
