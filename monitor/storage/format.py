"""The state file's layout, its validation and its schema migrations.

The file is a plain tinydb database, so stock tinydb can open it for inspection::

    {"meta": {"1": {"schema_version": 1}}, "properties": {"1": {"<key>": "<JSON string>", ...}}}

All properties live in one document: a property read is a dict lookup, and tinydb's per-operation
cost does not grow with the number of keys. The ``meta`` table is the reserved place for the schema
version, so no property key is reserved.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from monitor.storage.errors import StateVersionError

SCHEMA_VERSION = 1
PROPERTIES_TABLE = "properties"
META_TABLE = "meta"
DOC_ID = 1
_DOC_KEY = str(DOC_ID)

Migration = Callable[[dict[str, str]], dict[str, str]]

# MIGRATIONS[n] turns the properties of a version-n file into version n + 1. Each step must be a pure
# function of the old properties (it may run again on a restored backup). Empty while only version 1
# exists; the first schema change adds MIGRATIONS[1] and sets SCHEMA_VERSION = 2.
MIGRATIONS: Mapping[int, Migration] = {}


class MalformedState(ValueError):
    """The bytes are not a state file of the expected shape; the message says what is wrong."""


@dataclass(frozen=True)
class ParsedState:
    version: int
    data: dict[str, Any]  # the whole tinydb document tree, ready for the storage

    @property
    def properties(self) -> dict[str, str]:
        return self.data[PROPERTIES_TABLE][_DOC_KEY]


def empty_state(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    return {META_TABLE: {_DOC_KEY: {"schema_version": version}}, PROPERTIES_TABLE: {_DOC_KEY: {}}}


def parse_state(payload: bytes) -> ParsedState:
    """Decode and validate a state file; raise ``MalformedState`` saying what is wrong."""
    if not payload.strip():
        raise MalformedState("the file is empty")
    try:
        data = json.loads(payload)
    except UnicodeDecodeError as exc:
        raise MalformedState(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise MalformedState(
            f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno};"
            " a truncated file looks like this)"
        ) from None
    if not isinstance(data, dict):
        raise MalformedState(f"top level is a JSON {type(data).__name__}, expected an object")
    version = _read_version(data)
    properties = _single_document(data, PROPERTIES_TABLE)
    for key, value in properties.items():
        if not isinstance(value, str):
            raise MalformedState(
                f"property {key!r} holds a JSON {type(value).__name__}, expected a string"
            )
    return ParsedState(version=version, data=data)


def _single_document(data: dict[str, Any], table: str) -> dict[str, Any]:
    documents = data.get(table)
    if not isinstance(documents, dict) or set(documents) != {_DOC_KEY}:
        raise MalformedState(f'table "{table}" must hold exactly one document with id {_DOC_KEY}')
    document = documents[_DOC_KEY]
    if not isinstance(document, dict):
        raise MalformedState(f'table "{table}" document {_DOC_KEY} is not an object')
    return document


def _read_version(data: dict[str, Any]) -> int:
    version = _single_document(data, META_TABLE).get("schema_version")
    # bool is an int subclass; a "true" version is a damaged file, not version 1.
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise MalformedState(f"schema_version is {version!r}, expected a positive integer")
    return version


def migrate(
    parsed: ParsedState,
    *,
    target: int = SCHEMA_VERSION,
    migrations: Mapping[int, Migration] = MIGRATIONS,
    where: str = "the state file",
) -> ParsedState:
    """Bring ``parsed`` to version ``target``; a newer or unmigratable file is a ``StateVersionError``."""
    if parsed.version > target:
        raise StateVersionError(
            f"{where} has schema version {parsed.version}, but this sheet-monitor understands"
            f" versions up to {target}. It was written by a newer sheet-monitor: upgrade this"
            " installation, or move the state folder aside to start over (the file is unchanged)."
        )
    version, properties = parsed.version, parsed.properties
    while version < target:
        step = migrations.get(version)
        if step is None:
            raise StateVersionError(
                f"{where} has schema version {version} and this sheet-monitor has no migration"
                f" from it to {version + 1}; the file is unchanged."
            )
        properties = step(dict(properties))
        version += 1
    if version == parsed.version:
        return parsed
    data = dict(parsed.data)
    data[META_TABLE] = {_DOC_KEY: {"schema_version": version}}
    data[PROPERTIES_TABLE] = {_DOC_KEY: properties}
    return ParsedState(version=version, data=data)
