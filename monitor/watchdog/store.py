"""The watchdog's own memory and outbox, in a store of their own beside the runner's.

The watchdog never writes the runner's state (only the run lock's holder does) and must work when the
runner is broken, so it keeps its two documents in ``<state_dir>/watchdog-state.json``, a second store
of the same kind (atomic, crash-safe, with a last good copy), written only by the holder of the
``watchdog`` lock. A document that cannot be read is set aside (kept under ``damaged/<key>``) and
started afresh: losing the memory costs at most one repeated alert, which is better than a watchdog
that stops watching.

While the state folder cannot be written, the documents live in a private folder in the system's
temporary folder (:func:`fallback_dir`); the first pass that can write the state folder again takes
them back (:func:`take_back`), so the outage that began meanwhile ends with its "recovered" message.

The first release kept both in ``watchdog.json`` (its own JSON format); that file is read once,
carried over, and removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from monitor.core.logs import log_event
from monitor.notify.documents import Outbox
from monitor.state.repository import set_aside_value
from monitor.state.schema import DAMAGED_PREFIX, OUTBOX, DocumentError, Kind
from monitor.state.whole import Damage
from monitor.storage import FileLocation, PropertyStore
from monitor.watchdog.outages import WatchdogMemory

STORE_NAME = "watchdog-state"  # <state_dir>/watchdog-state.json
LEGACY_FILE_NAME = "watchdog.json"
LOCK_NAME = "watchdog"
MEMORY = Kind("memory", WatchdogMemory)


@dataclass
class WatchdogState:
    memory: WatchdogMemory
    outbox: Outbox


def load_watchdog_state(store: PropertyStore, state_dir: Path, now: datetime) -> WatchdogState:
    """The watchdog's documents (fresh ones when missing or damaged), carrying over a first-release
    ``watchdog.json`` when the store is still empty."""
    legacy = Path(state_dir) / LEGACY_FILE_NAME
    if not store.get_keys() and _there(legacy):
        return _carry_over(store, legacy)
    damaged = []
    memory = _read(store, MEMORY, WatchdogMemory(), damaged)
    outbox = _read(store, OUTBOX, Outbox(), damaged)
    if damaged:
        store.update({DAMAGED_PREFIX + damage.key: set_aside_value(damage, now) for damage in damaged},
                     [damage.key for damage in damaged])
        for damage in damaged:
            log_event("watchdog_memory_reset", logging.WARNING, key=damage.key, problem=damage.problem,
                      kept_as=DAMAGED_PREFIX + damage.key)
    return WatchdogState(memory, outbox)


def _there(path: Path) -> bool:
    """Is ``path`` there? Not, as far as this user can tell, in a state folder it may not enter (its
    memory is kept elsewhere meanwhile)."""
    try:
        return path.exists()
    except OSError:
        return False


def fallback_dir(state_dir: Path) -> Path:
    """Where the watchdog of ``state_dir`` keeps its documents while that folder cannot be written:
    one folder per user (created 0700 by the store) and per state folder."""
    digest = hashlib.sha256(str(Path(state_dir).resolve()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"sheet-monitor-{os.geteuid()}" / f"watchdog-{digest}"


def take_back(state: WatchdogState, state_dir: Path) -> WatchdogState:
    """``state`` with the memory and messages kept elsewhere while the state folder could not be
    written (none: ``state`` as it is). The copy elsewhere is removed here: the caller saves at once, and
    a crash between the two costs at most one message."""
    elsewhere = fallback_dir(state_dir)
    location = FileLocation(elsewhere)
    if not location.exists(STORE_NAME):
        return state
    with location.open(STORE_NAME, read_only=True) as store:
        kept = WatchdogState(_read(store, MEMORY, WatchdogMemory(), []), _read(store, OUTBOX, Outbox(), []))
    log_event("watchdog_memory_taken_back", folder=str(elsewhere))
    # The memory elsewhere is the newer: it saw the outage the state folder's copy did not.
    merged = WatchdogState(kept.memory, replace(state.outbox,
                                                pending=state.outbox.pending + kept.outbox.pending))
    with contextlib.suppress(OSError):
        shutil.rmtree(elsewhere)
    return merged


def save(store: PropertyStore, state: WatchdogState) -> None:
    store.update({MEMORY.key(): MEMORY.encode(state.memory), OUTBOX.key(): OUTBOX.encode(state.outbox)})


def _read(store: PropertyStore, kind: Kind, fresh, damaged: list[Damage]):
    raw = store.get_property(kind.key())
    if raw is None:
        return fresh
    try:
        return kind.decode(raw)
    except DocumentError as exc:
        damaged.append(Damage(kind.key(), str(exc), raw))
        return fresh


def _carry_over(store: PropertyStore, legacy: Path) -> WatchdogState:
    """The first release's ``{"version": 1, "alert": {...}, "outbox": {...}}``: its alert memory and
    outbox had the shapes of today's documents. What cannot be read starts afresh, as it did then."""
    try:
        data = json.loads(legacy.read_bytes())
    except (OSError, ValueError) as exc:
        data = {}
        log_event("watchdog_memory_reset", logging.WARNING, path=str(legacy), error=type(exc).__name__)
    data = data if isinstance(data, dict) else {}
    state = WatchdogState(_carried(MEMORY, data.get("alert"), WatchdogMemory()),
                          _carried(OUTBOX, data.get("outbox"), Outbox()))
    save(store, state)
    legacy.unlink(missing_ok=True)  # carried over, and saved: the old file would only mislead
    log_event("watchdog_memory_carried_over", path=str(legacy))
    return state


def _carried(kind: Kind, value, fresh):
    if value is None:
        return fresh
    try:
        return kind.validate(value)
    except DocumentError as exc:
        log_event("watchdog_memory_reset", logging.WARNING, key=kind.name, problem=str(exc))
        return fresh
