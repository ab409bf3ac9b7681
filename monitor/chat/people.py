"""Who may act from the chat: only in the chats the monitor tells, and, when ``[telegram] operators``
names some, only those people.

A bot added to a group hears from anyone in it, and a bot's username can be found by anyone, who
may then write to it privately: an update from a chat the config does not name is somebody else's
conversation, ignored (and logged). Inside the team's chats, ``operators`` (user ids or usernames)
narrows who may change what the monitor does; the others are answered politely, and nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from monitor.chat.updates import Person

NOT_AN_OPERATOR = (
    "Only the monitor's operators may do this here. Ask an admin to add you to "
    "[telegram] operators (your Telegram id is {id})."
)


@dataclass(frozen=True)
class Gate:
    chats: frozenset[str]  # the chat ids the monitor tells (its default chat and every route's)
    operators: frozenset[str] = frozenset()  # "@ivan", "123456"; empty: anyone in those chats

    @classmethod
    def of(cls, chats: Iterable[str], operators: Iterable[str] = ()) -> Gate:
        return cls(frozenset(str(chat) for chat in chats), frozenset(operators))

    def in_team_chat(self, chat_id: str) -> bool:
        return chat_id in self.chats

    def refusal(self, person: Person) -> str | None:
        """Why ``person`` may not act (to tell them), or None when they may."""
        if not self.operators:
            return None
        named = {str(person.id)} | ({"@" + person.username.lower()} if person.username else set())
        return None if named & self.operators else NOT_AN_OPERATOR.format(id=person.id)
