"""Publishing the status page after a run: ``[report] html`` written, never failing the run."""

from __future__ import annotations

import logging
from datetime import datetime

from monitor.config import Config
from monitor.core.logs import log_event
from monitor.report.publish import write_page
from monitor.state import State


def publish_page(config: Config, state: State, now: datetime) -> None:
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
