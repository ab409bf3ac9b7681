"""Writing the status page: atomically (a temporary file in the same folder, then renamed), so a web
server or a person never sees half a page (after a run: ``monitor.app.report_step``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from monitor.config import Config
from monitor.report.page import render_page
from monitor.report.page_data import build_report
from monitor.state import State
from monitor.storage.files import atomic_write_bytes

PAGE_MODE = 0o644  # a web server reads it


def write_page(config: Config, state: State, now: datetime, path: Path) -> int:
    """Render the page for ``state`` at ``now`` and put it at ``path`` whole; the bytes written.
    Raises OSError when the folder cannot be written (the temporary file is removed)."""
    text = render_page(build_report(config, state, now)).encode()
    atomic_write_bytes(path, text, mode=PAGE_MODE)
    return len(text)
