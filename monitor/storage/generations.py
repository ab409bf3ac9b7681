"""What this host remembers of each Redis state it wrote: the generation it last saw there.

Redis holds ``<prefix>:generation``, a random id written with a state's first change and never
changed afterwards. A Redis restarted without its data has lost it, and so has lost the monitor's
breakers, dead letters and alert memory; but an empty Redis looks the same whether it lost a state
or never held one. Only something outside Redis can tell the two apart, so the host keeps the
generation it last saw in its state folder (``[run] state_dir``): that folder is this machine's, it
outlives Redis, and the watchdog already keeps its own memory there for the same reason.

The file, ``redis-generations.json``, holds one entry per Redis and prefix (a host may have used
several), never a password. It is written atomically (temp file, fsync, rename), so a kill leaves
the old entry or the new one. A folder that cannot be read or written costs this check only, never
the run: the state itself is in Redis.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from monitor.core.logs import log_event
from monitor.storage.files import atomic_write_bytes, ensure_state_dir

FILE_NAME = "redis-generations.json"


class GenerationMemory:
    """The generations this host saw, in ``folder``; ``where`` names a Redis and prefix."""

    def __init__(self, folder: Path, where: str) -> None:
        self.path = Path(folder) / FILE_NAME
        self.where = where

    def remembered(self) -> str | None:
        """The generation last seen at ``where``; None if never (or the file cannot be read)."""
        generation = self._entries().get(self.where)
        return generation if isinstance(generation, str) and generation else None

    def remember(self, generation: str) -> None:
        """Keep ``generation`` as the one seen at ``where`` (nothing is written when it is known)."""
        entries = self._entries()
        if entries.get(self.where) == generation:
            return
        entries[self.where] = generation
        try:
            ensure_state_dir(self.path.parent)
            atomic_write_bytes(self.path, json.dumps(entries, indent=1, sort_keys=True).encode())
        except OSError as exc:
            # Without it a later loss of the Redis's data goes unnoticed (an empty state, as on a
            # fresh install); the run itself does not need it.
            log_event("redis_generation_not_kept", logging.WARNING, path=str(self.path),
                      error=f"{type(exc).__name__}: {exc.strerror or exc}")

    def _entries(self) -> dict[str, str]:
        try:
            entries = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log_event("redis_generation_unreadable", logging.WARNING, path=str(self.path),
                      error=type(exc).__name__)
            return {}
        return entries if isinstance(entries, dict) else {}
