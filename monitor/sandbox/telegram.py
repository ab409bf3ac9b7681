"""A fake Telegram Bot API (``/bot<token>/sendMessage``, ``getMe``, ``getChat``) that enforces
Telegram's rules.

An app for ``HTTPServerThread``: ``FakeTelegram(clock)``. This module routes a request (token ->
method) and holds the fake's state; the checks of a send, in the order the real Bot API applies
them, live in ``telegram_send``, its parameters are read by ``telegram_params``, and its records
(bots, chats, messages) are ``telegram_model``'s. The control endpoints (``/_sandbox/``) live in
``telegram_control``; their Python twins are methods here.

Every answer is Telegram-shaped, ``{"ok": false, "error_code": N, "description": "..."}`` with
``parameters`` where Telegram sends them; a bug in here answers a Telegram-shaped 500, never a
traceback. The bot token is never logged, recorded or echoed: messages and stats name the bot by id.
"""

from __future__ import annotations

import re
import threading
from collections import Counter, defaultdict
from urllib.parse import unquote

from monitor.core.clock import SystemClock

from . import telegram_control
from .http import Request, Response
from .telegram_errors import TelegramError, not_found, ok
from .telegram_get_chat import get_chat
from .telegram_limits import FloodControl, Window
from .telegram_model import Bot, Chat, SentMessage, default_chat_type
from .telegram_params import request_parameters
from .telegram_send import MAX_MESSAGE_LENGTH, send_message

_PATH = re.compile(r"^/bot([^/]+)/([A-Za-z_]+)/?$")


class FakeTelegram:
    """The fake Bot API's state and HTTP app. Thread-safe: one lock around each request.

    ``clock`` (monitor.core.clock) dates messages and drives flood control, so tests move a ManualClock
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
        if method == "getchat":
            try:
                return "getChat", get_chat(self, request_parameters(request))
            except TelegramError as error:
                return "getChat", error.response()
        if method == "sendmessage":
            try:
                return "sendMessage", send_message(self, bot, request_parameters(request))
            except TelegramError as error:
                return "sendMessage", error.response()
        raise not_found()

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
