"""The resolved configuration: ``Config`` with its sections, ``Profile``s and ``Sheet``s."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from monitor.checks import Check, needs_modified_time, ranges_of

from .sections import AlertsConfig, BreakerConfig, GoogleConfig, RunConfig, TelegramConfig, WatchdogConfig


def checks_fingerprint(checks: Sequence[Check]) -> str:
    """A short stable hash of checks as configured: equal iff kinds, parameters and order are."""
    payload = json.dumps([c.model_dump(mode="json") for c in checks], sort_keys=True,
                         separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def first_duplicate(names: Sequence[str]) -> str | None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    checks: tuple[Check, ...]


class Sheet(BaseModel):
    """One spreadsheet to monitor with its checks resolved (profile's first, then its own)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    profile: str | None
    tags: tuple[str, ...]
    checks: tuple[Check, ...]
    origin: str = Field(description='where it is configured, e.g. "monitor.toml:42", "sheets.csv:7"')
    fingerprint: str = Field(description="checks_fingerprint(checks): changes iff its checks change")

    @property
    def ranges(self) -> tuple[str, ...]:
        """Distinct ranges its checks read, in check order: what one batchGet must fetch."""
        return ranges_of(self.checks)

    @property
    def needs_modified_time(self) -> bool:
        """True if a freshness check asks for the file's modified time (one Drive request)."""
        return needs_modified_time(self.checks)


class Config(BaseModel):
    """Everything a command needs, validated once. Paths are absolute; durations are timedeltas."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path
    run: RunConfig
    google: GoogleConfig
    breaker: BreakerConfig
    telegram: TelegramConfig
    alerts: AlertsConfig
    watchdog: WatchdogConfig
    profiles: tuple[Profile, ...]
    sheets: tuple[Sheet, ...]
    fingerprint: str = Field(description="changes iff the set of spreadsheets or any check changes")
    warnings: tuple[str, ...] = Field(description="advice for check-config; not errors")

    @cached_property
    def sheets_by_id(self) -> Mapping[str, Sheet]:
        return {sheet.id: sheet for sheet in self.sheets}


def config_fingerprint(sheets: Sequence[Sheet]) -> str:
    """Changes iff the set of spreadsheet ids or the checks of any of them change (not names, tags)."""
    payload = "\n".join(f"{s.id}:{s.fingerprint}" for s in sorted(sheets, key=lambda s: s.id))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
