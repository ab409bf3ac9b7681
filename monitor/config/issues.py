"""What is wrong with a configuration: ``ConfigIssue`` (one problem) and ``ConfigError`` (all of them).

Every issue names where (``file:line``, ``file`` or ``environment``), the key path, the problem and
the fix. ``ConfigError`` reports them in reading order, at most ``MAX_REPORTED_ISSUES`` at a time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MAX_REPORTED_ISSUES = 30  # enough to fix a batch at once, few enough to read in a terminal

_PLACE = re.compile(r"(.+?):(\d+)(?::\d+)?")  # "file:line" or "file:line:column"

Loc = tuple[str | int, ...]  # a key's path in the parsed TOML: ("profiles", "stock", "checks", 2)


@dataclass(frozen=True)
class ConfigIssue:
    """One problem: ``where`` is "file:line" (or "file", "environment"), ``key`` the key path."""

    where: str
    key: str
    problem: str
    fix: str

    def __str__(self) -> str:
        head = f"{self.where}: {self.key}: {self.problem}" if self.key else f"{self.where}: {self.problem}"
        return f"{head}\n  fix: {self.fix}"

    def to_dict(self) -> dict[str, str | int | None]:
        """The issue for ``--json``: ``where`` also split into its ``file`` and ``line`` (None for the
        environment, or a file as a whole)."""
        place = _PLACE.fullmatch(self.where)
        file, line = (place.group(1), int(place.group(2))) if place else (self.where, None)
        return {"where": self.where, "file": None if self.where == "environment" else file, "line": line,
                "key": self.key or None, "problem": self.problem, "fix": self.fix}


class ConfigError(Exception):
    """The configuration cannot be used; ``issues`` holds every problem found, str() reports them."""

    def __init__(self, issues: Sequence[ConfigIssue]) -> None:
        self.issues = tuple(issues)
        super().__init__(_render(self.issues))


def _render(issues: Sequence[ConfigIssue]) -> str:
    shown = issues[:MAX_REPORTED_ISSUES]
    count = len(issues)
    lines = [f"configuration error{'s' if count != 1 else ''} ({count}):"]
    lines += [str(issue) for issue in shown]
    if count > len(shown):
        lines.append(f"... and {count - len(shown)} more (fix these and run check-config again)")
    return "\n".join(lines)


def reading_order(issue: ConfigIssue) -> tuple[bool, str, int]:
    """The config file's issues first, by line; then the CSV's; the environment's last."""
    file, _, line = issue.where.partition(":")
    number = line.split(":")[0]
    return issue.where == "environment", file, int(number) if number.isdigit() else 0
