"""Asking Telegram whether delivery can work, without sending anything: ``getMe`` (is the token a
bot's?) and ``getChat`` (does the bot see the chat?), for ``check-config``; and what to do about
each refusal, for it and ``notify test``.

Its requests go the way the sender's do (``monitor.notify.telegram.call_bot_api``): every answer
is built from Telegram's words with the token scrubbed, and httpx's exceptions are not chained
(their request's URL holds the token).
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from monitor.notify.telegram import DeliveryError, PermanentChatError, RetryableDeliveryError, call_bot_api

# Telegram's description (lower case, a substring) -> what a person does about it.
_FIXES = (
    ("unauthorized", "Telegram does not know this bot token: copy it again from @BotFather into "
                     "TELEGRAM_BOT_TOKEN (in cron's environment too)"),
    ("chat not found", "check chat_id (a group's id starts with -100) and that the bot was added to "
                       "that chat"),
    ("kicked", "add the bot to the chat again"),
    ("not a member", "add the bot to the chat (a channel: as an administrator)"),
    ("blocked by the user", "the user must unblock the bot, or use a group's chat_id"),
    ("thread not found", "check message_thread_id: the topic does not exist in that chat"),
    ("not enough rights", "give the bot the right to post in that chat"),
    ("have no rights", "give the bot the right to post in that chat"),
    ("without a bot api answer", "check api_base: it must lead to the Bot API (or a proxy that passes "
                                 "it on)"),
    ("not found", "check api_base and the token: the Bot API answers 404 to a malformed one"),
    ("unreachable", "check the network and api_base; try again later"),
)


def fix_for(description: str, migrate_to: object | None = None) -> str:
    """What to do about a refusal Telegram described so."""
    if migrate_to is not None:
        return f'the group became a supergroup: set chat_id = "{migrate_to}"'
    lowered = description.lower()
    return next((fix for words, fix in _FIXES if words in lowered), "see Telegram's answer above")


def fix_for_error(error: DeliveryError) -> str:
    return fix_for(error.description)


@dataclass(frozen=True)
class Answer:
    """What Telegram said to one question: ``ok``, its words (or the result, described), the fix."""

    ok: bool
    text: str
    fix: str | None = None
    unreachable: bool = False  # no answer from Telegram itself: nothing is known about the config
    status: int | None = None


class BotLookup:
    """Read-only Bot API calls with one token."""

    def __init__(self, token: str, api_base: str, client: httpx.Client) -> None:
        self._token, self.api_base, self._client = token, api_base.rstrip("/"), client

    def bot(self) -> Answer:
        """``getMe``: the bot the token belongs to."""
        return self._call("getMe", {})

    def chat(self, chat_id: str | int) -> Answer:
        """``getChat``: the chat as the bot sees it."""
        return self._call("getChat", {"chat_id": str(chat_id)})

    def _call(self, method: str, params: dict) -> Answer:
        try:
            body, status = call_bot_api(self._client, self.api_base, self._token, method, params)
        except PermanentChatError as exc:  # a URL that cannot be: the config's
            return Answer(False, exc.description, fix_for("without a bot api answer"))
        except RetryableDeliveryError as exc:
            return Answer(False, exc.description, fix_for("unreachable"), unreachable=True)
        if not isinstance(body, dict) or "ok" not in body:
            text = f"{self.api_base} answered HTTP {status} without a Bot API answer"
            return Answer(False, text, fix_for(text), unreachable=status >= 500, status=status)
        if body.get("ok"):
            return Answer(True, _described(method, body.get("result") or {}), status=status)
        description = self._scrub(str(body.get("description") or f"HTTP {status}"))
        migrate_to = (body.get("parameters") or {}).get("migrate_to_chat_id")
        return Answer(False, f"{status} {description}", fix_for(description, migrate_to),
                      unreachable=status >= 500 or status == 429, status=status)

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "[token]")


def _described(method: str, result: dict) -> str:
    if method == "getMe":
        return f"bot @{result.get('username', '?')} (id {result.get('id', '?')})"
    title = result.get("title") or result.get("first_name") or result.get("username") or "?"
    forum = ", forum" if result.get("is_forum") else ""
    return f"\"{title}\" ({result.get('type', '?')}{forum})"
