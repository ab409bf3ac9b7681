"""A Drive folder's part of a proposal: which profile its ``[[folders]]`` table names, and that
profile kept to what a folder's profile may hold.

A folder has one profile, so it gets the template most of its spreadsheets share (its proposal is
made first, under the name asked for); its spreadsheets of other templates keep their own profile and
``[[sheets]]`` table (a spreadsheet listed there is monitored as listed). A folder's profile may not
compare with another spreadsheet (the config refuses ``cross_sheet`` there: the other side is
resolved at load, a folder's spreadsheets only when Drive lists them), so such a check is left out,
saying so.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from .propose import Proposal
from .survey import SheetSurvey


@dataclass(frozen=True)
class FolderProposal:
    """A ``[[folders]]`` table: the folder, its profile, and the spreadsheets that profile covers."""

    id: str
    name: str
    profile: str
    recursive: bool
    sheets: frozenset[str]  # ids the folder's table monitors: no [[sheets]] table of their own


def folders_first(groups: Sequence[Sequence[SheetSurvey]], in_folders: Collection[str]
                  ) -> list[Sequence[SheetSurvey]]:
    """The templates, those with most of the folders' spreadsheets first (stable otherwise): the
    first is proposed under the name asked for, and becomes the first folder's profile."""
    return sorted(groups, key=lambda group: -sum(one.id in in_folders for one in group))


def for_folder(proposals: Sequence[Proposal], folder_id: str, name: str, recursive: bool,
               sheet_ids: Collection[str]) -> tuple[list[Proposal], FolderProposal]:
    """The proposals with the folder's own (the one of most of ``sheet_ids``) rid of cross-sheet
    checks, and the folder's table."""
    counts = [sum(sheet_id in sheet_ids for sheet_id, _ in proposal.sheets) for proposal in proposals]
    position = max(range(len(proposals)), key=lambda index: counts[index])
    chosen = proposals[position]
    crossing = [one for one in chosen.checks if one.check.get("kind") == "cross_sheet"]
    if crossing:
        note = (f"left out, as a folder's profile cannot compare with another spreadsheet: "
                f"{'; '.join(one.saw for one in crossing)} (a cross_sheet check of its own [[sheets]] "
                "table can)")
        chosen = replace(chosen, checks=tuple(one for one in chosen.checks if one not in crossing),
                         notes=(*chosen.notes, note))
    covered = frozenset(sheet_id for sheet_id, _ in chosen.sheets if sheet_id in sheet_ids)
    kept = [chosen if index == position else proposal for index, proposal in enumerate(proposals)]
    return kept, FolderProposal(folder_id, name, chosen.profile, recursive, covered)
