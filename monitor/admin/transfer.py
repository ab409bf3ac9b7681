"""Moving the runner's state between backends: every key of it as one JSON file, and back.

What moves is the runner's store (``properties``: tasks, health, breakers, dead letters, mutes,
events, the outbox and alert memory, the schema), every key as stored, damaged entries set aside
included, so a move loses nothing and changes nothing. The watchdog's own store does not move: it
lives in ``[run] state_dir`` on its host whatever the backend (so that it can tell of a Redis that
is down), and a move leaves it where it is.

The file::

    {"format": "sheet-monitor-state", "version": 1, "exported_at": "...Z", "source": "<where>",
     "properties": {"<key>": "<stored JSON text>", ...}}

An import replaces the target's state in one ``update`` (atomic on either backend), under the run
lock, and only after the whole file was checked: its shape, every key, and the schema it was written
in (a state from a newer release is refused, as opening it would be).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from monitor.core.timefmt import format_utc
from monitor.state.schema import KINDS, LAYOUT, SCHEMA_KEY
from monitor.storage import PropertyStore
from monitor.storage.contract import check_key

FORMAT = "sheet-monitor-state"
VERSION = 1
_EXPORT_AGAIN = "export it again with `sheet-monitor state export FILE`"


class TransferFileError(ValueError):
    """The file is not a state export this release can import; the message says what, where, the fix."""


@dataclass(frozen=True)
class Exported:
    properties: dict[str, str]
    source: str
    exported_at: str


def export_document(store: PropertyStore, source: str, now: datetime) -> bytes:
    """The file's bytes: every key of ``store`` (a read-only one is enough: it never changes halfway)."""
    document = {"format": FORMAT, "version": VERSION, "exported_at": format_utc(now), "source": source,
                "properties": store.get_properties()}
    return (json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()


def read_export(path: Path) -> Exported:
    """The export at ``path``, checked whole; raises ``TransferFileError`` (or ``OSError``)."""
    try:
        document = json.loads(path.read_bytes())
    except UnicodeDecodeError as exc:
        raise TransferFileError(f"{path}: not UTF-8 text (byte {exc.start}); {_EXPORT_AGAIN}") from None
    except json.JSONDecodeError as exc:
        raise TransferFileError(
            f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg}); {_EXPORT_AGAIN}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise TransferFileError(
            f"{path}: not a sheet-monitor state export (\"format\" should be {FORMAT!r}); {_EXPORT_AGAIN}")
    if document.get("version") != VERSION:
        raise TransferFileError(
            f"{path}: export format version {document.get('version')!r}, this release reads {VERSION}; use"
            " the release that wrote it, or a newer one")
    properties = document.get("properties")
    if not isinstance(properties, dict):
        raise TransferFileError(
            f"{path}: \"properties\" should be an object of keys and texts; {_EXPORT_AGAIN}")
    for key, value in properties.items():
        try:
            check_key(key)
        except ValueError as exc:
            raise TransferFileError(f"{path}: {exc}; {_EXPORT_AGAIN}") from None
        if not isinstance(value, str):
            raise TransferFileError(
                f"{path}: properties[{key!r}] should be the stored JSON text (a string), got"
                f" {type(value).__name__}; {_EXPORT_AGAIN}")
    _check_schema(path, properties)
    return Exported(properties, str(document.get("source", "")), str(document.get("exported_at", "")))


def _check_schema(path: Path, properties: Mapping[str, str]) -> None:
    """Refuse a state written by a newer release (its layout or a document's version unknown here)."""
    raw = properties.get(SCHEMA_KEY)
    if raw is None:
        return  # the first release's layout had no schema key: a run rewrites it (monitor.state.legacy)
    try:
        schema: Any = json.loads(raw)
        layout, versions = schema["layout"], schema.get("documents", {})
        newer = [name for name, version in versions.items()
                 if name in KINDS and isinstance(version, int) and version > KINDS[name].version]
        unknown = [name for name in versions if name not in KINDS]
    except (ValueError, TypeError, KeyError, AttributeError):
        raise TransferFileError(
            f"{path}: properties[{SCHEMA_KEY!r}] is not a schema; {_EXPORT_AGAIN}") from None
    if not isinstance(layout, int) or layout > LAYOUT or newer or unknown:
        what = ", ".join(newer + unknown) or f"layout {layout}"
        raise TransferFileError(
            f"{path}: written by a newer sheet-monitor ({what}); import it with that release or a newer one")


def replace_all(store: PropertyStore, properties: Mapping[str, str]) -> int:
    """Make ``properties`` the whole of ``store``'s state in one atomic update; how many keys it had."""
    before = len(store.get_keys())
    store.set_properties(properties, delete_all_others=True)
    return before
