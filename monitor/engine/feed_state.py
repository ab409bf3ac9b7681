"""The change feed's state document (``monitor.engine.change_detection`` keeps it): apart from the
detection, so that the state, which holds it, does not import the detection that reads the state."""

from __future__ import annotations

from dataclasses import field

from monitor.core.timefmt import UtcTime
from monitor.core.tracking import document


@document
class FeedState:
    """The change feed as the last round left it: where to ask from next, and whether it is failing."""

    position: str | None = None
    source: str | None = None  # the feed ``position`` belongs to
    asked_at: UtcTime | None = None  # when the feed was last asked (at a round's start, or watching)
    failing_since: UtcTime | None = None  # Drive could not answer from then on (every sheet is read)
    last_error: str | None = None
    # Configured spreadsheets Drive reported in its trash, since when: told once when they go in,
    # once when they come out. A trashed file is still read; Drive deletes it 30 days later.
    trashed: dict[str, UtcTime] = field(default_factory=dict)
