"""The watchdog's composition root: one pass wired from the config's watchdog parts.

Its imports stay the watchdog's own: nothing of the Google stack (gspread, google-auth), on purpose,
as the watchdog must keep working when that is what broke. An import contract (``.importlinter``)
and a test in a fresh interpreter check it. ``monitor.cli.watchdog`` turns what a pass did into
lines and exit codes.
"""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path
from typing import IO

from monitor.config import resolve_config_path
from monitor.config.lenient import WatchdogParts, load_for_watchdog
from monitor.core.clock import ManualClock, SystemClock
from monitor.core.logs import log_event
from monitor.notify.outbox import sender_for
from monitor.storage.configured import configured_location
from monitor.watchdog.judge import ConfigTrouble, WatchdogSettings
from monitor.watchdog.watch import PassReport, watchdog_pass


def load_watchdog_config(config_path: Path | None) -> WatchdogParts:
    """The parts of the config the watchdog needs, read leniently when the whole does not load (see
    ``monitor.config.lenient``); the Google credentials are only looked at as a run looks at them
    first (JSON), never loaded by the Google stack. Raises ``ConfigError`` when the watchdog itself
    cannot work (no readable file, Telegram half configured)."""
    return load_for_watchdog(resolve_config_path(config_path, os.environ), os.environ)


def config_trouble(parts: WatchdogParts) -> ConfigTrouble | None:
    """The monitor's config problems as the watchdog reports them; None when a run would take it."""
    if parts.broken is None:
        return None
    first, *others = parts.broken.issues
    head = f"{first.where}: {first.key}: {first.problem}" if first.key else f"{first.where}: {first.problem}"
    return ConfigTrouble(since=parts.broken_since, first=f"{head} (fix: {first.fix})", more=len(others))


def watch(parts: WatchdogParts, stream: IO[str], clock: SystemClock | ManualClock | None = None
          ) -> PassReport:
    """One pass over the runner's state at ``clock``'s now (the system's by default): its verdict
    told once per outage, through Telegram or, without it, on ``stream``. Raises ``StateError`` or
    ``OSError`` when the watchdog's own file or the runner's state cannot be used."""
    clock = clock or SystemClock()
    settings = WatchdogSettings.from_config(parts.watchdog, label=socket.gethostname())
    trouble = config_trouble(parts)
    if trouble is not None:
        # Every pass says it in the log; people hear it once per outage (with reminders).
        log_event("watchdog_config_broken", logging.ERROR, problem=trouble.first, more=trouble.more)
    return watchdog_pass(
        parts.run.state_dir,
        settings,
        lambda outbox: sender_for(parts.telegram, outbox, stream, clock=clock),
        clock.now(),
        heartbeat_url=parts.watchdog.heartbeat_url,
        config=trouble,
        runner=configured_location(parts.state, parts.run.state_dir, os.environ),
    )
