"""Writing the status page: atomically (a temporary file in the same folder, then renamed), so a web
server or a person never sees half a page; and after each run, never failing it."""

from __future__ import annotations

import logging
import os
import tempfile
from datetime import datetime
from pathlib import Path

from monitor.config import Config
from monitor.core.logs import log_event
from monitor.report.model import build_report
from monitor.report.page import render_page
from monitor.state import State


def write_page(config: Config, state: State, now: datetime, path: Path) -> int:
    """Render the page for ``state`` at ``now`` and put it at ``path`` whole; the bytes written.
    Raises OSError when the folder cannot be written (the temporary file is removed)."""
    text = render_page(build_report(config, state, now)).encode()
    write_atomically(path, text)
    return len(text)


def write_atomically(path: Path, data: bytes) -> None:
    # Same folder: a rename within one filesystem is atomic; from /tmp it would be a copy.
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644)  # a web server reads it; mkstemp makes it the owner's alone
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
