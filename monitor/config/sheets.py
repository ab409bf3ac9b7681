"""Spreadsheets as written ([[sheets]] tables and CSV rows) -> resolved ``Sheet``s.

A sheet's checks are its profile's, then its own. Resolving reports a repeated id (naming both
places), an unknown profile (once, however many sheets name it), a sheet without checks and two
checks sharing a name. What follows from
a tuple of checks is computed once per profile (``CheckSet``), not once per spreadsheet.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, field_validator

from monitor.checks import Check
from monitor.core.invalid_value import InvalidValue
from monitor.core.wording import counted

from .fields import Duration, Owner, SpreadsheetId
from .issues import ConfigIssue
from .model import CheckSet, Profile, Sheet
from .reworded import choices_fix


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
                   issues: list[ConfigIssue], misplaced_profiles: Collection[str] = ()
                   ) -> tuple[tuple[Sheet, ...], set[str]]:
    """The sheets of ``entries`` that resolve, and the ids and names of those that do not (their
    problems go to ``issues``): a cross-sheet check naming one of them is not told again.

    ``profiles`` maps each defined profile to itself, or to None when the profile has errors of its
    own (already reported: its sheets are skipped silently), as are the sheets of a profile written
    under a misspelt table (``misplaced_profiles``, reported there). An unknown profile is one issue
    however many spreadsheets name it, at the first of them: it has one fix.
    """
    shared = {name: CheckSet.of(profile.checks) for name, profile in profiles.items()
              if profile is not None}
    sheets: list[Sheet] = []
    dropped: set[str] = set()
    unknown: dict[str, list[Entry]] = {}
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
            if profiles.get(entry.profile) is None:  # unknown, or with errors of its own
                dropped.update((entry.id, entry.name or entry.id))
                if entry.profile not in profiles and entry.profile not in misplaced_profiles:
                    unknown.setdefault(entry.profile, []).append(entry)
                continue
            checks = shared[entry.profile]
        if entry.checks:  # inline checks: this spreadsheet's own tuple
            checks = CheckSet.of((checks.checks if checks else ()) + entry.checks)
        if checks is None or not checks.checks:
            issues.append(ConfigIssue(
                where, key, f"spreadsheet {entry.id!r} has no checks",
                'add profile = "NAME" or checks = [{ kind = ..., range = ... }]'))
            dropped.update((entry.id, entry.name or entry.id))
            continue
        if checks.duplicate_name:
            issues.append(ConfigIssue(
                where, key,
                f"two checks of spreadsheet {entry.id!r} are both named {checks.duplicate_name!r}",
                "give each check a distinct name = \"...\" (results are kept per name)"))
            dropped.update((entry.id, entry.name or entry.id))
            continue
        profile = profiles[entry.profile] if entry.profile is not None else None
        sheets.append(Sheet.of(entry.id, entry.name or entry.id, profile, entry.tags, checks, where,
                               entry.owner))
    for name, naming in unknown.items():
        also = f", named by {counted(len(naming), 'spreadsheet')} (the first here)" if len(naming) > 1 else ""
        issues.append(ConfigIssue(*naming[0].locate("profile"), f"unknown profile {name!r}{also}",
                                  choices_fix(name, tuple(profiles), what="profile") +
                                  f" (or define [profiles.{name}])"))
    return tuple(sheets), dropped
