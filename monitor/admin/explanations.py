"""What each configured check does, in a sentence: `check-config` prints it per profile.

A profile's checks are told once for all its spreadsheets; a spreadsheet with checks of its own
(beyond its profile's) has them told under its name.
"""

from __future__ import annotations

from typing import Any

from monitor.checks import Check
from monitor.config import Config


def explanations(config: Config) -> list[dict[str, Any]]:
    """[{"profile" | "sheet": ..., "spreadsheets": n, "checks": [{name, kind, explanation, severity,
    owner}]}]: each profile, then each spreadsheet whose own checks add to its profile's."""
    profiles = {profile.name: profile for profile in config.profiles}
    counts: dict[str, int] = {}
    groups: list[dict[str, Any]] = []
    for sheet in config.sheets:
        inherited = profiles[sheet.profile].checks if sheet.profile in profiles else ()
        if sheet.profile is not None:
            counts[sheet.profile] = counts.get(sheet.profile, 0) + 1
        own = sheet.checks[len(inherited):]
        if own:
            groups.append({"sheet": sheet.id, "name": sheet.name, "spreadsheets": 1,
                           "checks": [_told(check) for check in own]})
    told = [{"profile": name, "spreadsheets": counts.get(name, 0),
             "checks": [_told(check) for check in profile.checks]} for name, profile in profiles.items()]
    return told + groups


def _told(check: Check) -> dict[str, Any]:
    return {"name": check.name, "kind": check.kind, "explanation": check.explain(),
            "severity": check.severity, "owner": check.owner}
