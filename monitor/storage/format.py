"""The snapshot's layout, its validation and its schema migrations.

The snapshot is a plain tinydb database, so stock tinydb can open it for inspection::

    {"meta": {"1": {"schema_version": 2, "generation": 7}},
     "properties": {"1": {"<key>": "<JSON string>", ...}}}

All properties live in one document: a property read is a dict lookup. The ``meta`` table is the
reserved place for the schema version and the generation, so no property key is reserved.

The generation numbers snapshots: each compaction writes the next one, and a journal names the
generation it applies to (``journal``). Version 1 files have no generation and no journal (their
generation is 0). Version 2 added the journal without changing any property, so a version-1 file
opens unchanged; a version-1 sheet-monitor refuses a version-2 file as written by a newer one,
instead of reading the snapshot without its journal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

from monitor.storage.errors import StateVersionError

SCHEMA_VERSION = 2
PROPERTIES_TABLE = "properties"
META_TABLE = "meta"
DOC_ID = 1
_DOC_KEY = str(DOC_ID)

Migration = Callable[[dict[str, str]], dict[str, str]]


def _journal_added(properties: dict[str, str]) -> dict[str, str]:
    """Version 2 added the journal and the snapshot's generation; no property changed."""
    return properties


# MIGRATIONS[n] turns the properties of a version-n state into version n + 1. Each step must be a
# pure function of the old properties (it may run again, e.g. on a restored backup).
MIGRATIONS: Mapping[int, Migration] = {1: _journal_added}


class MalformedState(ValueError):
    """The bytes are not a snapshot of the expected shape; the message says what is wrong."""


@dataclass(frozen=True)
class ParsedState:
    version: int
    generation: int
    properties: dict[str, str]


def encode_snapshot(properties: Mapping[str, str], generation: int, version: int = SCHEMA_VERSION) -> bytes:
    """The on-disk form: compact UTF-8 JSON (the state can be megabytes; indentation would double it)."""
    return b"".join(snapshot_chunks(properties, generation, version))


def snapshot_chunks(
    properties: Mapping[str, str], generation: int, version: int = SCHEMA_VERSION
) -> Iterator[bytes]:
    """The same bytes as :func:`encode_snapshot`, in pieces of about ``_CHUNK_BYTES``.

    A compaction writes the snapshot from these: encoding a state of 20,000 spreadsheets in one piece
    made a string and a bytes copy of it, tens of megabytes that the process kept as its peak.
    """
    meta = {_DOC_KEY: {"schema_version": version, "generation": generation}}
    head = f'{{"{META_TABLE}":{_compact(meta)},"{PROPERTIES_TABLE}":{{"{_DOC_KEY}":{{'
    parts, size = [head], len(head)
    for number, (key, value) in enumerate(properties.items()):
        part = f"{',' if number else ''}{_compact(key)}:{_compact(value)}"
        parts.append(part)
        size += len(part)
        if size >= _CHUNK_BYTES:
            yield "".join(parts).encode("utf-8")
            parts, size = [], 0
    parts.append("}}}")
    yield "".join(parts).encode("utf-8")


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_CHUNK_BYTES = 1 << 20


def parse_state(payload: bytes) -> ParsedState:
    """Decode and validate a snapshot; raise ``MalformedState`` saying what is wrong."""
    if not payload.strip():
        raise MalformedState("the file is empty")
    try:
        data = _parsed(payload)
    except UnicodeDecodeError as exc:
        raise MalformedState(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise MalformedState(
            f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno};"
            " a truncated file looks like this)"
        ) from None
    if not isinstance(data, dict):
        raise MalformedState(f"top level is a JSON {type(data).__name__}, expected an object")
    meta = _single_document(data, META_TABLE)
    version = _counter(meta, "schema_version", None, minimum=1)
    generation = _counter(meta, "generation", 0, minimum=0)
    properties = _single_document(data, PROPERTIES_TABLE)
    for key, value in properties.items():
        if not isinstance(value, str):
            raise MalformedState(
                f"property {key!r} holds a JSON {type(value).__name__}, expected a string"
            )
    return ParsedState(version=version, generation=generation, properties=properties)


def _parsed(payload: bytes) -> Any:
    """The snapshot's JSON. pydantic-core's parser first: at 20,000 spreadsheets it reads the 26 MB
    snapshot (every document a JSON string inside it, escaped) in a third of the standard library's
    time, a tenth of a second of every run's start-up. What it refuses is parsed again by the
    standard library: a snapshot that one reads still opens (a lone surrogate escape, which the
    faster parser refuses), and one it cannot read is told in its words (where, and why)."""
    try:
        return from_json(payload, cache_strings=False)
    except ValueError:
        return json.loads(payload)


def _single_document(data: dict[str, Any], table: str) -> dict[str, Any]:
    documents = data.get(table)
    if not isinstance(documents, dict) or set(documents) != {_DOC_KEY}:
        raise MalformedState(f'table "{table}" must hold exactly one document with id {_DOC_KEY}')
    document = documents[_DOC_KEY]
    if not isinstance(document, dict):
        raise MalformedState(f'table "{table}" document {_DOC_KEY} is not an object')
    return document


def _counter(meta: dict[str, Any], name: str, default: int | None, *, minimum: int) -> int:
    value = meta.get(name, default)
    # bool is an int subclass; a "true" version is a damaged file, not version 1.
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise MalformedState(f"{name} is {value!r}, expected an integer of at least {minimum}")
    return value


def check_version(version: int, *, target: int = SCHEMA_VERSION, where: str = "the state file") -> None:
    """Refuse a state written by a newer sheet-monitor, before anything is changed."""
    if version > target:
        raise StateVersionError(
            f"{where} has schema version {version}, but this sheet-monitor understands"
            f" versions up to {target}. It was written by a newer sheet-monitor: upgrade this"
            " installation, or move the state folder aside to start over (the file is unchanged)."
        )


def migrate(
    properties: dict[str, str],
    version: int,
    *,
    target: int = SCHEMA_VERSION,
    migrations: Mapping[int, Migration] = MIGRATIONS,
    where: str = "the state file",
) -> dict[str, str]:
    """Bring version-``version`` properties to version ``target``; ``StateVersionError`` if impossible."""
    check_version(version, target=target, where=where)
    while version < target:
        step = migrations.get(version)
        if step is None:
            raise StateVersionError(
                f"{where} has schema version {version} and this sheet-monitor has no migration"
                f" from it to {version + 1}; the file is unchanged."
            )
        properties = step(dict(properties))
        version += 1
    return properties
