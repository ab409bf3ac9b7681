"""Stored times: aware UTC, written as ISO-8601 with a ``Z``, read back as aware datetimes."""

from __future__ import annotations

from datetime import UTC, datetime


def format_utc(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("naive datetime: stored times must be aware UTC")
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
