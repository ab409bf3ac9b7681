"""A fake Telegram Bot API that enforces Telegram's rules: sending and editing messages with inline
keyboards, receiving updates by long polling (or being refused it while a webhook is set), and
answering the callback queries people's presses make.

An app for ``HTTPServerThread``: ``FakeTelegram(clock)``. This module routes a request (token ->
method); the fake's state and its Python API are ``telegram_state``'s. Each method lives in its own
module (``telegram_send``, ``telegram_edit``, ``telegram_polling``, ``telegram_webhook``,
``telegram_callbacks``, ``telegram_get_chat``), parameters are read by ``telegram_params``, and the
records (bots, chats, people, messages, edits) are ``telegram_model``'s. What people do in the chats
(write, press, and what a tampered client can do) is ``telegram_people``'s. The control endpoints
(``/_sandbox/``) live in ``telegram_control``; their Python twins are ``telegram_state``'s methods.

Every answer is Telegram-shaped, ``{"ok": false, "error_code": N, "description": "..."}`` with
``parameters`` where Telegram sends them; a bug in here answers a Telegram-shaped 500, never a
traceback. The bot token is never logged, recorded or echoed: messages and stats name the bot by id.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote

from . import telegram_control
from .http import Request, Response
from .telegram_callbacks import answer_callback_query
from .telegram_edit import edit_message_reply_markup, edit_message_text
from .telegram_errors import TelegramError, not_found, ok
from .telegram_get_chat import get_chat
from .telegram_params import request_parameters
from .telegram_polling import get_updates
from .telegram_send import send_message
from .telegram_state import TelegramState
from .telegram_webhook import set_webhook, webhook_info

_PATH = re.compile(r"^/bot([^/]+)/([A-Za-z_]+)/?$")

# Method (lower case, as the Bot API matches it) -> (name in stats, handler(fake, bot, params)).
_METHODS: dict[str, tuple[str, Callable[..., Response]]] = {
    "getme": ("getMe", lambda fake, bot, params: ok(bot.me())),
    "getchat": ("getChat", lambda fake, bot, params: get_chat(fake, params)),
    "sendmessage": ("sendMessage", send_message),
    "editmessagetext": ("editMessageText", edit_message_text),
    "editmessagereplymarkup": ("editMessageReplyMarkup", edit_message_reply_markup),
    "getupdates": ("getUpdates", get_updates),
    "answercallbackquery": ("answerCallbackQuery", answer_callback_query),
    "setwebhook": ("setWebhook", lambda fake, bot, params: set_webhook(fake, bot, params, False)),
    "deletewebhook": ("deleteWebhook",
                      lambda fake, bot, params: set_webhook(fake, bot, params, True)),
    "getwebhookinfo": ("getWebhookInfo", lambda fake, bot, params: webhook_info(fake, bot)),
}


class FakeTelegram(TelegramState):
    """The fake Bot API's HTTP app over its state (``telegram_state``: the constructor's options,
    and the Python API tests call). One lock around each request."""

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
        if method not in _METHODS:
            raise not_found()
        name, handler = _METHODS[method]
        try:
            return name, handler(self, bot, request_parameters(request))
        except TelegramError as error:
            return name, error.response()
