"""Proposals as the config's TOML: each profile's checks with a comment saying what each saw, then a
``[[folders]]`` table per folder and a ``[[sheets]]`` table per spreadsheet no folder's table
covers, each naming its profile, ready to append to a config."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .folders import FolderProposal
from .propose import Proposal

_FIRST_KEYS = ("kind", "name", "range", "header_row", "column")


def render_toml(proposals: Sequence[Proposal], heading: str, folders: Sequence[FolderProposal] = ()) -> str:
    """The profiles, their folders and spreadsheets, under ``heading`` (a comment line or several)."""
    lines = [f"# {line}" if line else "#" for line in heading.splitlines()]
    for proposal in proposals:
        lines += ["", *_profile(proposal)]
    covered = set()
    for folder in folders:
        lines += ["", f"# {len(folder.sheets)} of its spreadsheets today; Drive is asked at each run",
                  "[[folders]]", f"id = {_string(folder.id)}", f"name = {_string(folder.name)}",
                  f"profile = {_string(folder.profile)}", *(["recursive = true"] if folder.recursive else [])]
        covered |= folder.sheets
    for proposal in proposals:
        for sheet_id, title in proposal.sheets:
            if sheet_id in covered:
                continue
            lines += ["", "[[sheets]]", f"id = {_string(sheet_id)}", f"name = {_string(title)}",
                      f"profile = {_string(proposal.profile)}"]
    return "\n".join(lines) + "\n"


def _profile(proposal: Proposal) -> list[str]:
    count = len(proposal.sheets)
    lines = [f"# {count} spreadsheet{'s' if count != 1 else ''} of one template: "
             + ", ".join(title for _, title in proposal.sheets[:3]) + (", ..." if count > 3 else "")]
    lines += [f"# {note}" for note in proposal.notes]
    lines += [f"[profiles.{proposal.profile}]", "checks = ["]
    for suggested in proposal.checks:
        lines.append(f"  # {suggested.saw}")
        table = _inline(suggested.check)
        lines.append(f"  {table}," if suggested.enabled else f"  # {table},")
    lines.append("]")
    return lines


def _inline(check: dict[str, Any]) -> str:
    keys = [key for key in _FIRST_KEYS if key in check] + [k for k in check if k not in _FIRST_KEYS]
    return "{ " + ", ".join(f"{key} = {_value(check[key])}" for key in keys) + " }"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    return _string(str(value))


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's (``\\"``, ``\\\\``, ``\\n``, ``\\uXXXX``)."""
    return json.dumps(text, ensure_ascii=False)
