"""A fake Telegram Bot API (``/bot<token>/sendMessage``, ``getMe``) that enforces Telegram's rules.

An app for ``HTTPServerThread``: ``FakeTelegram(clock)``. A send meets the checks in the order the
real Bot API applies them (its HTTP front, then TDLib locally, then Telegram's servers):

    token -> method -> parameters -> empty text -> parse_mode -> HTML entities -> chat_id -> chat
    (not found / migrated) -> topic -> empty after parsing -> length -> blocked -> forced 429
    -> flood control -> accepted and recorded

Every answer is Telegram-shaped, ``{"ok": false, "error_code": N, "description": "..."}`` with
``parameters`` where Telegram sends them; a bug in here answers a Telegram-shaped 500, never a
traceback. The bot token is never logged, recorded or echoed: messages and stats name the bot by id.
The control endpoints (``/_sandbox/``) live in ``telegram_control``; their Python twins are
methods here.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import parse_qsl, unquote

from monitor.core.clock import SystemClock

from . import telegram_control
from .http import Request, Response
from .telegram_errors import TelegramError, bad_request, not_found, ok, too_many_requests
from .telegram_html import HTMLParseError, parse_html
from .telegram_limits import FloodControl, Window

MAX_MESSAGE_LENGTH = 4096  # Unicode code points after entity parsing (TDLib: utf8_length > max)
_SUPERGROUP_IDS_BELOW = -1_000_000_000_000  # -100xxxxxxxxxx: supergroups and channels
_TRIMMED = " \t\r\n\x0b\x0c"
_PATH = re.compile(r"^/bot([^/]+)/([A-Za-z_]+)/?$")


@dataclass
class Bot:
    token: str = field(repr=False)
    id: int
    username: str
    first_name: str

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
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }


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


@dataclass(frozen=True)
class SentMessage:
    """One accepted sendMessage, as the sandbox remembers it."""

    message_id: int
    chat_id: int
    message_thread_id: int | None
    text: str  # exactly as sent (HTML source under parse_mode=HTML)
    parse_mode: str | None
    date: int  # epoch seconds
    plain_text: str  # what the recipient sees
    entities: tuple[dict, ...]
    bot_id: int

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
        }


def default_chat_type(chat_id: int) -> str:
    if chat_id > 0:
        return "private"
    return "supergroup" if chat_id < _SUPERGROUP_IDS_BELOW else "group"


class FakeTelegram:
    """The fake Bot API's state and HTTP app. Thread-safe: one lock around each request.

    ``clock`` (monitor.clock) dates messages and drives flood control, so tests move a ManualClock
    instead of sleeping. ``strict_ampersand`` rejects a bare ``&`` that Telegram itself would accept
    (see telegram_html). Rate limits default to Telegram's published ones.
    """

    def __init__(
        self,
        clock: object | None = None,
        *,
        per_chat_per_second: int = 1,
        group_per_minute: int = 20,
        global_per_second: int = 30,
        max_length: int = MAX_MESSAGE_LENGTH,
        strict_ampersand: bool = False,
    ) -> None:
        self.clock = clock or SystemClock()
        self.max_length = max_length
        self.strict_ampersand = strict_ampersand
        self.flood = FloodControl(
            per_chat=Window(per_chat_per_second, 1.0),
            per_group=Window(group_per_minute, 60.0),
            overall=Window(global_per_second, 1.0),
        )
        self.lock = threading.RLock()
        self.bots: dict[str, Bot] = {}
        self.chats: dict[int, Chat] = {}
        self.forced: dict[int | None, list[int]] = {}  # chat id (None: any) -> [count, retry_after]
        self.sent: list[SentMessage] = []
        self.requests: dict[str, Counter] = defaultdict(Counter)  # method -> status -> count

    # ---- the HTTP app -------------------------------------------------------------------------

    def __call__(self, request: Request) -> Response:
        with self.lock:
            control = request.raw_path.startswith("/_sandbox/")
            method = "unknown"
            try:
                if control:
                    return telegram_control.handle(self, request)
                method, response = self._bot_api(request)
            except TelegramError as error:
                response = error.response()
            except Exception as exc:  # noqa: BLE001 - a sandbox bug must still look like Telegram
                # Its text may hold request data (the token is in the path): never echo it.
                description = f"Internal Server Error: sandbox bug ({type(exc).__name__})"
                response = TelegramError(500, description).response()
            if not control:  # stats count Bot API traffic only
                self.requests[method][str(response.status)] += 1
            return response

    def _bot_api(self, request: Request) -> tuple[str, Response]:
        match = _PATH.match(request.raw_path)
        if match is None:
            raise not_found()
        token, method = unquote(match.group(1)), match.group(2).lower()
        if request.method not in ("GET", "POST"):
            raise not_found()
        bot = self.bots.get(token)
        if bot is None:
            raise TelegramError(401, "Unauthorized")
        if method == "getme":
            return "getMe", ok(bot.me())
        if method == "sendmessage":
            try:
                return "sendMessage", self._send_message(bot, request_parameters(request))
            except TelegramError as error:
                return "sendMessage", error.response()
        raise not_found()

    # ---- sendMessage --------------------------------------------------------------------------

    def _send_message(self, bot: Bot, params: dict[str, str]) -> Response:
        raw_text = params.get("text", "")
        if not raw_text:
            raise bad_request("message text is empty")
        parse_mode = params.get("parse_mode") or None
        plain, entities = self._parse(raw_text, parse_mode)
        chat = self._resolve_chat(params.get("chat_id", ""))
        thread_id = self._thread(chat, params.get("message_thread_id"))
        plain, entities = _trim(plain, entities)
        if not plain:
            raise bad_request("message text is empty")
        if len(plain) > self.max_length:
            raise bad_request("message is too long")
        preview_disabled = _preview_disabled(params)
        if chat.blocked:
            raise TelegramError(403, _blocked_description(chat))
        now = self.clock.time()
        self._flood_check(chat, now)

        self.flood.record(chat.id, chat.is_group, now)
        message = SentMessage(
            message_id=chat.next_message_id,
            chat_id=chat.id,
            message_thread_id=thread_id,
            text=raw_text,
            parse_mode=parse_mode,
            date=int(now),
            plain_text=plain,
            entities=tuple(entities),
            bot_id=bot.id,
        )
        chat.next_message_id += 1
        self.sent.append(message)
        return ok(_message_result(bot, chat, message, preview_disabled))

    def _parse(self, text: str, parse_mode: str | None) -> tuple[str, list[dict]]:
        mode = (parse_mode or "").lower()
        if mode in ("", "none"):
            return text, []
        if mode in ("markdown", "markdownv2"):
            return text, []  # accepted but not interpreted: the monitor sends HTML only
        if mode != "html":
            raise bad_request("unsupported parse_mode")
        try:
            parsed = parse_html(text, strict_ampersand=self.strict_ampersand)
        except HTMLParseError as error:
            raise bad_request(f"can't parse entities: {error}") from None
        return parsed.text, parsed.entities

    def _resolve_chat(self, chat_id: str) -> Chat:
        chat_id = chat_id.strip()
        if not chat_id:
            raise bad_request("chat_id is empty")
        chat = None
        if chat_id.startswith("@"):
            wanted = chat_id[1:].lower()
            chat = next(
                (c for c in self.chats.values() if (c.username or "").lower() == wanted), None
            )
        elif re.fullmatch(r"-?\d{1,20}", chat_id):
            chat = self.chats.get(int(chat_id))
        if chat is None:
            raise bad_request("chat not found")
        if chat.migrate_to is not None:
            raise TelegramError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrate_to},
            )
        return chat

    @staticmethod
    def _thread(chat: Chat, raw: str | None) -> int | None:
        if raw is None or raw == "" or raw == "0":
            return None
        try:
            thread_id = int(raw)
        except ValueError:
            raise bad_request("invalid message thread identifier specified") from None
        if chat.topics is not None and thread_id not in chat.topics:
            raise bad_request("message thread not found")
        return thread_id

    def _flood_check(self, chat: Chat, now: float) -> None:
        for key in (chat.id, None):
            forced = self.forced.get(key)
            if forced:
                forced[0] -= 1
                if forced[0] <= 0:
                    del self.forced[key]
                raise too_many_requests(forced[1])
        retry_after = self.flood.admit(
            chat.id,
            chat.is_group,
            now,
            per_chat=Window(chat.per_second, 1.0) if chat.per_second is not None else None,
            per_group=Window(chat.per_minute, 60.0) if chat.per_minute is not None else None,
        )
        if retry_after is not None:
            raise too_many_requests(retry_after)

    # ---- Python API for tests and the sandbox's server -----------------------------------------

    def add_token(
        self, token: str, username: str | None = None, first_name: str | None = None
    ) -> Bot:
        """Register a bot token (``<digits>:<secret>``; the digits become the bot's id)."""
        head = token.split(":", 1)[0]
        bot_id = int(head) if head.isdigit() else abs(hash(token)) % 10**10
        with self.lock:
            bot = Bot(
                token, bot_id, username or f"sandbox_{bot_id}_bot", first_name or "Sandbox Bot"
            )
            self.bots[token] = bot
            return bot

    def add_chat(
        self,
        chat_id: int,
        type: str | None = None,
        title: str | None = None,  # noqa: A002
        username: str | None = None,
        topics: list[int] | None = None,
    ) -> Chat:
        """Register (or replace) a chat the bot can write to; its type follows the id by default."""
        chat_type = type or default_chat_type(chat_id)
        if chat_type not in ("private", "group", "supergroup", "channel"):
            raise ValueError(f"unknown chat type {chat_type!r}")
        with self.lock:
            chat = Chat(
                chat_id,
                chat_type,
                title or f"Sandbox chat {chat_id}",
                username,
                frozenset(topics) if topics is not None else None,
            )
            self.chats[chat_id] = chat
            return chat

    def chat(self, chat_id: int) -> Chat:
        with self.lock:
            if chat_id not in self.chats:
                raise KeyError(f"no chat {chat_id} in the sandbox")
            return self.chats[chat_id]

    def block_chat(self, chat_id: int, blocked: bool = True) -> None:
        """Make sends to the chat answer 403 (the user blocked the bot, or it was kicked)."""
        with self.lock:
            self.chat(chat_id).blocked = blocked

    def migrate_chat(self, chat_id: int, to_chat_id: int | None = None) -> int:
        """Upgrade a group to a supergroup: the old id answers 400 with ``migrate_to_chat_id``;
        the new supergroup chat exists. Returns the new id (default ``-100<old digits>``)."""
        with self.lock:
            old = self.chat(chat_id)
            new_id = to_chat_id if to_chat_id is not None else int(f"-100{abs(chat_id)}")
            if new_id not in self.chats:
                self.add_chat(new_id, "supergroup", old.title, old.username)
            old.migrate_to = new_id
            return new_id

    def set_rate_limit(
        self, chat_id: int, per_second: int | None = None, per_minute: int | None = None
    ) -> None:
        """Override flood control for one chat (None: the defaults)."""
        with self.lock:
            chat = self.chat(chat_id)
            chat.per_second, chat.per_minute = per_second, per_minute

    def force_rate_limit(
        self, count: int = 1, retry_after: int = 5, chat_id: int | None = None
    ) -> None:
        """Answer the next ``count`` otherwise-acceptable sends (to ``chat_id``, or to any chat)
        with 429 ``retry_after``."""
        if count < 1 or retry_after < 1:
            raise ValueError("count and retry_after must be at least 1")
        with self.lock:
            self.forced[chat_id] = [count, retry_after]

    def messages(self, chat_id: int | None = None) -> list[SentMessage]:
        with self.lock:
            return [m for m in self.sent if chat_id is None or m.chat_id == chat_id]

    def stats(self) -> dict:
        """Requests by method and HTTP status, e.g. ``{"sendMessage": {"200": 3, "429": 1}}``."""
        with self.lock:
            return {
                "requests": {method: dict(counts) for method, counts in self.requests.items()},
                "sends": dict(self.requests.get("sendMessage", {})),
                "messages": len(self.sent),
            }

    def reset(self, full: bool = False) -> None:
        """Forget messages, stats, flood windows and forced 429s; ``full`` also forgets bots and
        chats. Chats keep their behaviour (blocked, migrated, limits) otherwise."""
        with self.lock:
            self.sent.clear()
            self.requests.clear()
            self.forced.clear()
            self.flood.reset()
            for chat in self.chats.values():
                chat.next_message_id = 1
            if full:
                self.bots.clear()
                self.chats.clear()


# ---- request and response shapes -----------------------------------------------------------------


def request_parameters(request: Request) -> dict[str, str]:
    """Bot API parameters from the query string and a JSON, form or multipart body (the body wins).
    JSON values that are not strings are passed on as their JSON text, as the Bot API does."""
    params = {name: values[-1] for name, values in request.query.items()}
    content_type = request.headers.get("content-type", "")
    kind = content_type.split(";", 1)[0].strip().lower()
    body = request.body
    if not body.strip():
        return params
    if kind == "application/json":
        params.update(_json_parameters(body))
    elif kind == "application/x-www-form-urlencoded":
        params.update(parse_qsl(_utf8(body), keep_blank_values=True))
    elif kind == "multipart/form-data":
        params.update(_multipart_parameters(content_type, body))
    return params


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad_request("strings must be encoded in UTF-8") from None


def _json_parameters(body: bytes) -> dict[str, str]:
    try:
        value = json.loads(_utf8(body))
    except json.JSONDecodeError:
        if not body.lstrip().startswith(b"{"):
            raise bad_request("JSON object expected") from None
        raise bad_request("expected next field or object end") from None
    if not isinstance(value, dict):
        raise bad_request("JSON object expected")
    return {
        str(key): item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
        for key, item in value.items()
    }


def _multipart_parameters(content_type: str, body: bytes) -> dict[str, str]:
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    params = {}
    for part in message.iter_parts() if message.is_multipart() else []:
        name = part.get_param("name", header="content-disposition")
        if name:
            params[name] = _utf8(part.get_payload(decode=True) or b"")
    return params


def _trim(text: str, entities: list[dict]) -> tuple[str, list[dict]]:
    """Telegram strips leading and trailing whitespace; entity offsets move with the text."""
    stripped = text.strip(_TRIMMED)
    if stripped == text:
        return text, entities
    shift = len(text) - len(text.lstrip(_TRIMMED))  # ASCII whitespace: one UTF-16 unit each
    limit = len(stripped.encode("utf-16-le")) // 2
    moved = []
    for entity in entities:
        start = max(entity["offset"] - shift, 0)
        end = min(entity["offset"] + entity["length"] - shift, limit)
        if end > start:
            moved.append({**entity, "offset": start, "length": end - start})
    return stripped, moved


def _preview_disabled(params: dict[str, str]) -> bool:
    if params.get("disable_web_page_preview", "").lower() in ("true", "1"):
        return True
    raw = params.get("link_preview_options")
    if not raw:
        return False
    try:
        options = json.loads(raw)
    except json.JSONDecodeError:
        options = None
    if not isinstance(options, dict):
        raise bad_request("can't parse link preview options JSON object")
    return options.get("is_disabled") is True


def _blocked_description(chat: Chat) -> str:
    if chat.type == "private":
        return "Forbidden: bot was blocked by the user"
    if chat.type == "channel":
        return "Forbidden: bot is not a member of the channel chat"
    return f"Forbidden: bot was kicked from the {chat.type} chat"


def _message_result(bot: Bot, chat: Chat, message: SentMessage, preview_disabled: bool) -> dict:
    result: dict = {"message_id": message.message_id}
    if chat.type == "channel":
        result["sender_chat"] = chat.public()
    else:
        result["from"] = bot.user()
    result["chat"] = chat.public()
    result["date"] = message.date
    if message.message_thread_id is not None:
        result["message_thread_id"] = message.message_thread_id
        result["is_topic_message"] = True
    result["text"] = message.plain_text
    if message.entities:
        result["entities"] = list(message.entities)
    if preview_disabled:
        result["link_preview_options"] = {"is_disabled": True}
    return result
