"""``[[folders]]``: a Drive folder whose Google Sheets are all monitored with one profile and tags.

A folder is written with its id or URL, a profile, and optionally ``recursive`` (its subfolders'
spreadsheets too), ``tags``, ``owner`` and a ``name`` for messages (else Drive's name of it). Which
spreadsheets it holds is Drive's to say, and changes: the run keeps the folder's listing in the state
(``monitor.engine.folder_sync``) and makes each of them a ``Sheet`` (``model.Folder.sheet``). A
spreadsheet also listed under ``[[sheets]]`` is monitored as listed there.

What the config cannot know until Drive lists the folder is refused at load: a profile with
cross-sheet checks (their other spreadsheet is resolved at load, and a folder's spreadsheets are
not known then).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, field_validator

from monitor.checks import CrossSheetCheck

from .fields import FolderId, Owner
from .model import CheckSet, Folder, Profile
from .reworded import choices_fix
from .sheets import written_tags

Report = Callable[[tuple, str, str], None]  # (key path below the table, problem, fix)


class FolderTable(BaseModel):
    """A [[folders]] table as written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: FolderId
    profile: str
    name: str | None = None
    recursive: StrictBool = False
    tags: tuple[str, ...] = ()
    owner: Owner | None = None

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: object) -> tuple[str, ...]:
        return written_tags(value)


def resolve_folder(written: FolderTable, profiles: Mapping[str, Profile | None], origin: str,
                   report: Report) -> Folder | None:
    """The folder of a valid table, or None with its problem reported (a profile with errors of its
    own is told there, not again here)."""
    if written.profile not in profiles:
        report(("profile",), f"unknown profile {written.profile!r}",
               choices_fix(written.profile, tuple(profiles), what="profile")
               + f" (or define [profiles.{written.profile}])")
        return None
    profile = profiles[written.profile]
    if profile is None:
        return None
    crossing = [check.name for check in profile.checks if isinstance(check, CrossSheetCheck)]
    if crossing:
        report(("profile",), f"profile {written.profile!r} has cross-sheet checks ({', '.join(crossing)}), "
                             "which a folder's spreadsheets cannot have: the other spreadsheet is resolved "
                             "when the config loads, a folder's spreadsheets only when Drive lists them",
               "give the folder a profile without cross_sheet checks, and list the spreadsheets that need "
               "them under [[sheets]] (a spreadsheet listed there is monitored as listed)")
        return None
    return Folder(written.id, written.name, written.recursive, profile, written.tags, written.owner, origin,
                  CheckSet.of(profile.checks))


def folder_tables(raw: Any, report: Callable[[tuple, str, str], None]) -> list[tuple[int, dict]]:
    """The [[folders]] tables (index, table); what is not a table is reported."""
    if not isinstance(raw, list):
        report(("folders",), "folders must be an array of tables",
               "write each folder as a [[folders]] section")
        return []
    tables = []
    for index, table in enumerate(raw):
        if isinstance(table, dict):
            tables.append((index, table))
        else:
            report(("folders", index), "a folder must be a table", "write it as a [[folders]] section")
    return tables
