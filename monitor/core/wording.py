"""Counting things in words: "1 task", "2 tasks", "1 entry", "3 entries".

English only, and only the nouns the monitor counts: a regular plural adds "s", an irregular one is
given by the caller. (humanize, used for durations, has no noun plurals; a grammar library would be
far more than this needs.)
"""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun plural unless ``count`` is exactly 1: "1 task", "0 tasks"."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
