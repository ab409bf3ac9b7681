"""The operators' library's one exception, and the message for an id that is not configured."""

from __future__ import annotations


class AdminError(Exception):
    """A request that cannot be done. ``usage`` is True when the argument itself is wrong (exit 2,
    e.g. an id that is not configured); otherwise the state does not allow it (exit 1)."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


def unknown_id_message(spreadsheet_id: str) -> str:
    return (f"{spreadsheet_id} is not a configured spreadsheet; `sheet-monitor sheets` lists the "
            "configured ids")


def not_in_dlq_message(spreadsheet_id: str) -> str:
    return (f"{spreadsheet_id} is not in the dead-letter queue (it was never dead-lettered, or it has "
            "recovered or been purged); `sheet-monitor dlq list` shows what is")


def no_longer_configured_message(spreadsheet_id: str, name: str | None = None) -> str:
    named = f"{name} ({spreadsheet_id})" if name and name != spreadsheet_id else spreadsheet_id
    return (f"{named} is no longer in the config: it is not checked any more, and the next run forgets "
            "what the state kept of it (its dead-letter entry, breaker and mute). To monitor it again, "
            "add it back to [[sheets]]")
