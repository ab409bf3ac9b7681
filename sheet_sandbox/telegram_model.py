"""The fake Bot API's records: bots (by token), chats with their sandbox behaviour, the people who
use them, the messages the bots sent and the people wrote, and the edits made to them. Plain data;
``FakeTelegram`` holds them under its lock."""

from __future__ import annotations

from dataclasses import dataclass, field

_SUPERGROUP_IDS_BELOW = -1_000_000_000_000  # -100xxxxxxxxxx: supergroups and channels


@dataclass
class Bot:
    token: str = field(repr=False)
    id: int
    username: str
    first_name: str
    # BotFather's default: in groups the bot sees only commands and replies meant for it
    # (core.telegram.org/bots/features#privacy-mode); getMe says so in can_read_all_group_messages.
    privacy: bool = True

    def user(self) -> dict:
        return {
            "id": self.id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
        }

    def me(self) -> dict:
        return {
            **self.user(),
            "can_join_groups": True,
            "can_read_all_group_messages": not self.privacy,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }


@dataclass(frozen=True)
class Person:
    """Someone who writes in a chat or presses a button: a Bot API User with is_bot false."""

    id: int
    first_name: str
    username: str | None = None
    last_name: str | None = None
    language_code: str | None = None

    def user(self) -> dict:
        data: dict = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        if self.language_code:
            data["language_code"] = self.language_code
        return data


@dataclass
class Chat:
    id: int
    type: str  # private | group | supergroup | channel
    title: str
    username: str | None = None
    topics: frozenset[int] | None = None  # forum topic ids; None accepts any message_thread_id
    blocked: bool = False  # 403 bot was blocked by the user
    migrate_to: int | None = None  # 400 group chat was upgraded, with parameters.migrate_to_chat_id
    per_second: int | None = None  # flood-control overrides for this chat
    per_minute: int | None = None
    next_message_id: int = 1

    @property
    def is_group(self) -> bool:
        return self.type in ("group", "supergroup")

    def public(self) -> dict:
        """The ``chat`` object of a Message."""
        data: dict = {"id": self.id}
        if self.type == "private":
            data["first_name"] = self.title
        else:
            data["title"] = self.title
        if self.username:
            data["username"] = self.username
        data["type"] = self.type
        if self.topics is not None:
            data["is_forum"] = True
        return data

    def full_info(self) -> dict:
        """``getChat``'s ChatFullInfo: the chat's public fields and the two every chat has."""
        return {**self.public(), "accent_color_id": 0, "max_reaction_count": 11}

    def describe(self) -> dict:
        """The chat and its sandbox behaviour, for ``/_sandbox/chats``."""
        return {
            **self.public(),
            "blocked": self.blocked,
            "migrate_to": self.migrate_to,
            "per_second": self.per_second,
            "per_minute": self.per_minute,
            "topics": sorted(self.topics) if self.topics is not None else None,
        }

    def person(self) -> Person:
        """The person a private chat is with (its id is theirs)."""
        return Person(self.id, self.title, self.username)

    def take_message_id(self) -> int:
        message_id = self.next_message_id
        self.next_message_id += 1
        return message_id


@dataclass(frozen=True)
class SentMessage:
    """One accepted sendMessage, as the sandbox remembers it (an edit replaces it with its new
    state, ``edit_date`` set)."""

    message_id: int
    chat_id: int
    message_thread_id: int | None
    text: str  # exactly as sent (HTML source under parse_mode=HTML)
    parse_mode: str | None
    date: int  # epoch seconds
    plain_text: str  # what the recipient sees
    entities: tuple[dict, ...]
    bot_id: int
    reply_markup: dict | None = None  # the InlineKeyboardMarkup as Telegram returns it
    preview_disabled: bool = False
    edit_date: int | None = None

    def as_json(self) -> dict:
        return {
            "message_id": self.message_id,
            "chat_id": self.chat_id,
            "message_thread_id": self.message_thread_id,
            "text": self.text,
            "parse_mode": self.parse_mode,
            "date": self.date,
            "plain_text": self.plain_text,
            "entities": list(self.entities),
            "bot_id": self.bot_id,
            "reply_markup": self.reply_markup,
            "edit_date": self.edit_date,
        }


@dataclass(frozen=True)
class PersonMessage:
    """A message a person wrote in a chat (through the control API), kept so replies and presses
    can find it; what the bot received of it is in the update log."""

    message_id: int
    chat_id: int
    message_thread_id: int | None
    is_topic_message: bool
    person: Person
    text: str
    entities: tuple[dict, ...]
    date: int
    reply_to_message_id: int | None = None

    def as_json(self) -> dict:
        return {
            "message_id": self.message_id,
            "chat_id": self.chat_id,
            "message_thread_id": self.message_thread_id,
            "from": self.person.user(),
            "text": self.text,
            "entities": list(self.entities),
            "date": self.date,
            "reply_to_message_id": self.reply_to_message_id,
        }


@dataclass(frozen=True)
class Edit:
    """One accepted editMessageText / editMessageReplyMarkup: the message before and after."""

    method: str
    chat_id: int
    message_id: int
    bot_id: int
    date: int
    before: SentMessage
    after: SentMessage

    def as_json(self) -> dict:
        def state(message: SentMessage) -> dict:
            return {
                "text": message.text,
                "plain_text": message.plain_text,
                "entities": list(message.entities),
                "reply_markup": message.reply_markup,
            }

        return {
            "method": self.method,
            "chat_id": self.chat_id,
            "message_id": self.message_id,
            "bot_id": self.bot_id,
            "date": self.date,
            "before": state(self.before),
            "after": state(self.after),
        }


def default_chat_type(chat_id: int) -> str:
    if chat_id > 0:
        return "private"
    return "supergroup" if chat_id < _SUPERGROUP_IDS_BELOW else "group"
