"""Writing the status page: atomically (a temporary file in the same folder, then renamed), so a web
server or a person never sees half a page; and after each run, never failing it."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from monitor.config import Config
from monitor.core.logs import log_event
from monitor.report.model import build_report
from monitor.report.page import render_page
from monitor.state import State
from monitor.storage.files import atomic_write_bytes

PAGE_MODE = 0o644  # a web server reads it


def write_page(config: Config, state: State, now: datetime, path: Path) -> int:
    """Render the page for ``state`` at ``now`` and put it at ``path`` whole; the bytes written.
    Raises OSError when the folder cannot be written (the temporary file is removed)."""
    text = render_page(build_report(config, state, now)).encode()
    atomic_write_bytes(path, text, mode=PAGE_MODE)
    return len(text)


def publish_after_run(config: Config, state: State, now: datetime) -> None:
    """The run's one call: write ``[report] html`` when set. The run has saved and notified already;
    nothing here may fail it, so any failure is one warning in the log (and the old page stays)."""
    path = config.report.html
    if path is None:
        return
    try:
        size = write_page(config, state, now, path)
    except Exception as exc:  # noqa: BLE001 - a page not written must never fail the run
        log_event("report_not_written", logging.WARNING, path=str(path), error=f"{type(exc).__name__}: {exc}")
        return
    log_event("report_written", path=str(path), bytes=size)
