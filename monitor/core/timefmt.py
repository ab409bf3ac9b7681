"""Stored times: aware UTC, written as ISO-8601 with a ``Z``, read back as aware datetimes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AwareDatetime, PlainSerializer


def format_utc(moment: datetime) -> str:
    """An aware datetime as "2026-01-05T03:47:00.000Z" (milliseconds, so stored times sort as text).

    Raises ValueError for a naive datetime: its zone would be a guess.
    """
    if moment.tzinfo is None:
        raise ValueError("naive datetime: stored times must be aware UTC")
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_utc(text: str) -> datetime:
    """ISO-8601 text -> aware UTC datetime. Text without an offset is taken as UTC, as every stored
    time is, never as the machine's local time (which would shift it by the host's offset)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# A stored time inside a typed document: read back by pydantic's own (compiled) parser, which must find
# an offset (every stored time is written with its "Z": a time without one is damage, not a guess),
# and written as format_utc writes it, so documents keep the millisecond "Z" form of the state file.
UtcTime = Annotated[AwareDatetime, PlainSerializer(format_utc, return_type=str)]
