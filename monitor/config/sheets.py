"""Spreadsheets as written ([[sheets]] tables and CSV rows) -> resolved ``Sheet``s.

A sheet's checks are its profile's, then its own. Resolving reports a repeated id (naming both
places), an unknown profile, a sheet without checks and two checks sharing a name. What follows from
a tuple of checks is computed once per profile (``CheckSet``), not once per spreadsheet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, field_validator

from monitor.checks import Check
from monitor.core.invalid import InvalidValue

from .explain import choices_fix
from .fields import Duration, Owner, SpreadsheetId
from .issues import ConfigIssue
from .model import CheckSet, Profile, Sheet


@dataclass(slots=True)
class Entry:
    """A sheet as written, before profile expansion; ``locate(key)`` -> (where, key path)."""

    id: str
    name: str | None
    profile: str | None
    tags: tuple[str, ...]
    checks: tuple[Check, ...]
    locate: Callable[[str], tuple[str, str]]
    owner: str | None = None


class ProfileTable(BaseModel):
    """A [profiles.NAME] table as written, but for its checks (validated one by one by the loader)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checks: list[Any] | None = None
    max_age: Duration | None = None
    always_read: StrictBool = False
    owner: Owner | None = None


class SheetTable(BaseModel):
    """A [[sheets]] table as written (its checks are validated separately, one by one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: SpreadsheetId
    name: str | None = None
    profile: str | None = None
    tags: tuple[str, ...] = ()
    owner: Owner | None = None
    checks: list[Any] | None = None  # validated one by one by the loader, for precise locations

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: object) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
            raise InvalidValue("tags must be a list of non-empty strings", 'write tags = ["moscow"]')
        return tuple(t.strip() for t in value)


def resolve_sheets(entries: list[Entry], profiles: Mapping[str, Profile | None],
                   issues: list[ConfigIssue]) -> tuple[Sheet, ...]:
    """The sheets of ``entries`` that resolve; the problems of the others go to ``issues``.

    ``profiles`` maps each defined profile to itself, or to None when the profile has errors of its
    own (already reported: its sheets are skipped silently).
    """
    shared = {name: CheckSet.of(profile.checks) for name, profile in profiles.items()
              if profile is not None}
    sheets: list[Sheet] = []
    first_seen: dict[str, Entry] = {}
    for entry in entries:
        where, key = entry.locate("id")
        previous = first_seen.setdefault(entry.id, entry)
        if previous is not entry:
            first_where, first_key = previous.locate("id")
            issues.append(ConfigIssue(
                where, key,
                f"spreadsheet id {entry.id!r} is listed twice; first at {first_where} ({first_key})",
                "remove one of the two entries (give a spreadsheet several checks through a "
                "profile or inline checks)"))
            continue
        checks: CheckSet | None = None
        if entry.profile is not None:
            if entry.profile not in profiles:
                issues.append(ConfigIssue(
                    *entry.locate("profile"),
                    f"unknown profile {entry.profile!r}",
                    choices_fix(entry.profile, tuple(profiles), what="profile") +
                    f" (or define [profiles.{entry.profile}])"))
                continue
            if profiles[entry.profile] is None:
                continue  # the profile's own errors are reported already
            checks = shared[entry.profile]
        if entry.checks:  # inline checks: this spreadsheet's own tuple
            checks = CheckSet.of((checks.checks if checks else ()) + entry.checks)
        if checks is None or not checks.checks:
            issues.append(ConfigIssue(
                where, key, f"spreadsheet {entry.id!r} has no checks",
                'add profile = "NAME" or checks = [{ kind = ..., range = ... }]'))
            continue
        if checks.duplicate_name:
            issues.append(ConfigIssue(
                where, key,
                f"two checks of spreadsheet {entry.id!r} are both named {checks.duplicate_name!r}",
                "give each check a distinct name = \"...\" (results are kept per name)"))
            continue
        profile = profiles[entry.profile] if entry.profile is not None else None
        sheets.append(Sheet.of(entry.id, entry.name or entry.id, profile, entry.tags, checks, where,
                               entry.owner))
    return tuple(sheets)
