"""The resolved configuration: ``Config`` with its sections, ``Profile``s and ``Sheet``s.

The loader builds these from values it has already validated, without validating them again (at
20,000 spreadsheets re-checking every check of every sheet cost more than the rest of loading): the
models with ``model_construct``, so their schemas are built only if something serialises them
(``defer_build``), and ``Sheet`` is a plain frozen dataclass.
Everything that follows from a tuple of checks (ranges, modified-time need, fingerprint) is computed
once per tuple in ``CheckSet``; the spreadsheets of one profile share their profile's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from operator import attrgetter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from monitor.checks import Check, needs_modified_time, ranges_of

from .maintenance import MaintenanceWindow
from .sections import (
    AlertsConfig,
    BreakerConfig,
    GoogleConfig,
    MetricsConfig,
    ReportConfig,
    RunConfig,
    StateConfig,
    TelegramConfig,
    WatchdogConfig,
)


def checks_fingerprint(checks: Sequence[Check], extra: Sequence[str] = ()) -> str:
    """A short stable hash of checks as configured: equal iff kinds, parameters and order are (and
    ``extra``: the ranges a spreadsheet lends to other spreadsheets' cross-sheet checks)."""
    payload = json.dumps([c.model_dump(mode="json") for c in checks] + list(extra), sort_keys=True,
                         separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class CheckSet:
    """A spreadsheet's checks with what follows from them, computed once (``of``)."""

    checks: tuple[Check, ...]
    ranges: tuple[str, ...]
    needs_modified_time: bool
    fingerprint: str
    duplicate_name: str | None  # the first name two checks share (results are kept per name)

    @classmethod
    def of(cls, checks: tuple[Check, ...]) -> CheckSet:
        return cls(checks, ranges_of(checks), needs_modified_time(checks), checks_fingerprint(checks),
                   _first_duplicate([c.name for c in checks]))


def _first_duplicate(names: Sequence[str]) -> str | None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    checks: tuple[Check, ...]
    # How often its spreadsheets are read when Drive reports no change (None: [run] max_age), and
    # whether they are read every round anyway (values that move without an edit: NOW(), IMPORTRANGE).
    max_age: timedelta | None = None
    always_read: bool = False
    owner: str | None = None  # who answers for its spreadsheets, unless a sheet names its own


@dataclass(frozen=True, slots=True)
class Lend:
    """A range a spreadsheet reads for another's cross-sheet check, and what of it is kept: an
    aggregate (``Sheet`` checks' metric names) or ``"keys"`` (its distinct values)."""

    range: str
    what: str

    @property
    def key(self) -> str:
        return f"{self.what}:{self.range}"


# A plain frozen dataclass rather than a model: there are up to 20,000 of them, all built from parts
# validated already, and a model instance costs three times the time and ~1 KB more memory (its
# fields-set) for nothing a reader of a Sheet uses.
@dataclass(frozen=True, slots=True)
class Sheet:
    """One spreadsheet to monitor with its checks resolved (profile's first, then its own)."""

    id: str
    name: str
    profile: str | None
    tags: tuple[str, ...]
    checks: tuple[Check, ...]
    origin: str  # where it is configured, e.g. "monitor.toml:42", "sheets.csv:7"
    fingerprint: str  # checks_fingerprint(checks): changes iff its checks change
    ranges: tuple[str, ...]  # distinct ranges its checks read, in check order: one batchGet's ranges
    needs_modified_time: bool  # a freshness check asks for the file's modified time (a Drive request)
    max_age: timedelta | None = None  # its profile's; None: [run] max_age
    always_read: bool = False  # its profile's: read every round, whatever Drive says
    owner: str | None = None  # its own, else its profile's: named in its alert lines
    # Cross-sheet checks (monitor.config.cross): each one's other spreadsheet id, by check name; and
    # the ranges this spreadsheet reads for other spreadsheets' cross-sheet checks.
    others: tuple[tuple[str, str], ...] = ()
    lends: tuple[Lend, ...] = ()

    @classmethod
    def of(cls, id: str, name: str, profile: Profile | None, tags: tuple[str, ...], checks: CheckSet,
           origin: str, owner: str | None = None) -> Sheet:
        """A sheet from validated parts; ``checks`` brings the fields derived from the checks, its
        profile (if any) how often it is read."""
        return cls(id, name, profile.name if profile else None, tags, checks.checks, origin,
                   checks.fingerprint, checks.ranges, checks.needs_modified_time,
                   profile.max_age if profile else None, profile.always_read if profile else False,
                   owner or (profile.owner if profile else None))


@dataclass(frozen=True, slots=True)
class Folder:
    """A configured folder, its profile resolved: what each spreadsheet found in it is monitored with."""

    id: str
    name: str | None  # as the config names it; None: Drive's name
    recursive: bool
    profile: Profile
    tags: tuple[str, ...]
    owner: str | None
    origin: str  # "monitor.toml:42"
    checks: CheckSet

    def sheet(self, spreadsheet_id: str, name: str) -> Sheet:
        """The spreadsheet ``spreadsheet_id`` (Drive names it ``name``) as this folder monitors it."""
        return Sheet.of(spreadsheet_id, name, self.profile, self.tags, self.checks,
                        f"{self.origin} (folder)", self.owner)

    def url(self) -> str:
        return f"https://drive.google.com/drive/folders/{self.id}"


class Config(BaseModel):
    """Everything a command needs, validated once. Paths are absolute; durations are timedeltas."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    path: Path
    run: RunConfig
    google: GoogleConfig
    breaker: BreakerConfig
    telegram: TelegramConfig
    alerts: AlertsConfig
    watchdog: WatchdogConfig
    state: StateConfig
    metrics: MetricsConfig
    report: ReportConfig = ReportConfig()
    profiles: tuple[Profile, ...]
    sheets: tuple[Sheet, ...]
    maintenance: tuple[MaintenanceWindow, ...] = ()  # [[maintenance]] windows, resolved to spreadsheet ids
    folders: tuple[Folder, ...] = ()  # [[folders]]: Drive folders whose spreadsheets are all monitored
    fingerprint: str = Field(description="changes iff the set of spreadsheets or any check changes")
    warnings: tuple[str, ...] = Field(description="advice for check-config; not errors")

    @cached_property
    def sheets_by_id(self) -> Mapping[str, Sheet]:
        return {sheet.id: sheet for sheet in self.sheets}


def config_fingerprint(sheets: Sequence[Sheet]) -> str:
    """Changes iff the set of spreadsheet ids or the checks of any of them change (not names, tags)."""
    payload = "\n".join(f"{s.id}:{s.fingerprint}" for s in sorted(sheets, key=attrgetter("id")))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
