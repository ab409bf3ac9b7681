"""The fake Bot API's ``getChat``: the chat as Telegram describes it (a ChatFullInfo), or the error
Telegram gives first: no chat_id, chat not found, a group upgraded to a supergroup (with
``migrate_to_chat_id``), the bot removed or blocked. Called by ``FakeTelegram`` under its lock, after
the token was checked (a wrong one is 401 Unauthorized before any of this)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .http import Response
from .telegram_errors import TelegramError, ok
from .telegram_send import blocked_description, resolve_chat

if TYPE_CHECKING:
    from .telegram_fake import Fake


def get_chat(fake: Fake, params: dict[str, str]) -> Response:
    chat = resolve_chat(fake.chats, params.get("chat_id", ""))
    # Telegram lets a bot read a private chat whose user blocked it; the fake refuses it as a send
    # would, never kinder: a check that passes here then also means a send can pass.
    if chat.blocked:
        raise TelegramError(403, blocked_description(chat))
    return ok(chat.full_info())
