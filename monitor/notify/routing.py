"""Routes: which chat (and forum topic) hears about which spreadsheet, as a thin layer around
composition. The events and reminders of a run are split by destination, each part is composed as
if it were the only one (one grouped alert per chat and run, ``monitor.notify.alerts``), and each
message is tagged with its destination for the outbox.

A spreadsheet goes where the first ``[[telegram.routes]]`` that takes it says (by tag or profile),
else to the default chat; an event about no spreadsheet (Google degraded, the state repaired) goes to
the default chat. The round summary and the daily digest go to every chat, each about its own
spreadsheets (Google's read count in the default chat only). An escalation goes to the chat
``[alerts] escalate_to_chat`` names, else to its spreadsheet's own. :func:`configured_chats` is the
one list of every chat the config names: where the monitor may write, and whose people may answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, TypeVar

from monitor.engine.events import Event, sheet_of
from monitor.engine.fleet import Fleet
from monitor.notify.destinations import DEFAULT, Destination
from monitor.notify.messages import Message

T = TypeVar("T")


@dataclass(frozen=True)
class Routing:
    """Spreadsheet id -> its destination (absent: the default chat) and its owner (absent: none)."""

    destinations: Mapping[str, Destination] = field(default_factory=dict)
    owners: Mapping[str, str] = field(default_factory=dict)
    escalation: Destination | None = None  # where escalations go; None: each spreadsheet's own chat

    @classmethod
    def from_config(cls, config: object) -> Routing:
        """From ``Config``: each sheet's route (``TelegramConfig.route_for``) and owner, and where
        escalations go (``[alerts] escalate_to_chat`` / ``escalate_to_thread``)."""
        telegram = config.telegram
        destinations: dict[str, Destination] = {}
        for sheet in config.sheets:
            route = telegram.route_for(sheet.tags, sheet.profile)
            if route is not None:
                destinations[sheet.id] = Destination(str(route.chat_id), route.message_thread_id)
        owners = {sheet.id: sheet.owner for sheet in config.sheets if sheet.owner}
        return cls(destinations, owners, escalation_destination(config))

    def chats(self) -> list[Destination]:
        """Every destination some spreadsheet goes to, the default chat first (always there: the
        monitor's own messages go to it)."""
        return list(dict.fromkeys((DEFAULT, *self.destinations.values())))

    def of(self, spreadsheet_id: str | None) -> Destination:
        return self.destinations.get(spreadsheet_id, DEFAULT) if spreadsheet_id else DEFAULT

    def escalation_of(self, spreadsheet_id: str) -> Destination:
        """Where a spreadsheet's escalation goes: the escalation chat, else its own chat."""
        return self.escalation or self.of(spreadsheet_id)

    def part(self, fleet: Fleet, destination: Destination) -> Fleet:
        """The share of ``fleet`` that ``destination``'s chat hears about."""
        return fleet.part({sid for sid in fleet.standings if self.of(sid) == destination})

    def split(self, items: Iterable[T],
              spreadsheet_of: Callable[[T], str | None]) -> dict[Destination, list[T]]:
        """``items`` by destination, each part in the order given; the default chat's part first."""
        parts: dict[Destination, list[T]] = {DEFAULT: []}
        for item in items:
            parts.setdefault(self.of(spreadsheet_of(item)), []).append(item)
        return {destination: part for destination, part in parts.items() if part}

    def split_events(self, events: Sequence[Event]) -> dict[Destination, list[Event]]:
        return self.split(events, sheet_of)

    def escalations(self, spreadsheet_ids: Iterable[str]) -> dict[Destination, list[str]]:
        """``spreadsheet_ids`` by where their escalation goes, each part in the order given."""
        parts: dict[Destination, list[str]] = {}
        for sid in spreadsheet_ids:
            parts.setdefault(self.escalation_of(sid), []).append(sid)
        return parts


class ConfiguredChat(NamedTuple):
    """A chat (and forum topic) the config names: where the monitor may write, and the only chats
    whose people may answer it."""

    destination: Destination  # as messages carry it (DEFAULT for [telegram] chat_id)
    chat_id: str  # the configured id ("-1001234567890" or "@channel")
    thread_id: int | None


def configured_chats(config: object) -> list[ConfiguredChat]:
    """Every chat and topic the config names, each once, in this order: the default chat
    (``[telegram]``), each route's, the escalation chat's (``[alerts] escalate_to_chat`` /
    ``escalate_to_thread``); [] without a default chat (messages are printed)."""
    telegram = config.telegram
    if not telegram.chat_id:
        return []
    found = [ConfiguredChat(DEFAULT, str(telegram.chat_id), telegram.message_thread_id)]
    named = [Destination(str(route.chat_id), route.message_thread_id) for route in telegram.routes]
    escalation = escalation_destination(config)
    for destination in (*named, *([escalation] if escalation else [])):
        if all(destination not in (known.destination, (known.chat_id, known.thread_id)) for known in found):
            found.append(ConfiguredChat(destination, str(destination.chat_id), destination.thread_id))
    return found


def escalation_destination(config: object) -> Destination | None:
    """``[alerts] escalate_to_chat`` and its topic; a topic alone is one of the default chat's; None:
    escalations go to each spreadsheet's own chat."""
    alerts, telegram = config.alerts, config.telegram
    if alerts.escalate_to_chat is None and alerts.escalate_to_thread is None:
        return None
    return Destination(str(alerts.escalate_to_chat or telegram.chat_id), alerts.escalate_to_thread)


def routed(destination: Destination, messages: Iterable[Message]) -> list[Message]:
    """``messages`` with keys of their own for a routed destination: the same composition for two
    chats (a reminder's key is its time) must not be taken for one message already sent."""
    if destination == DEFAULT:
        return list(messages)
    where = f"{destination.chat_id}/{destination.thread_id or ''}"
    return [replace(message, key=f"{where}|{message.key}") for message in messages]
