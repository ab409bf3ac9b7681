"""The Bot API calls of the conversation: reading updates, answering a press, changing a message's
buttons. (Sending messages is the outbox's, ``monitor.notify.outbox``: replies wait there like any
message until Telegram takes them.)

Telegram's refusals are sorted once, here: a 409 (a webhook is set on the bot, or another program
polls it) or a 401 (the token) means no update can be read until someone fixes it
(:class:`Refused`, with the fix); anything else is passing (:class:`Unreachable`), tried again at
the next poll. The token is in every URL and never in an error (``notify.telegram.call_bot_api``).
"""

from __future__ import annotations

import logging

from monitor.notify import lean_httpx  # noqa: F401  before httpx: see its doc

# isort: split

import httpx

from monitor.core.logs import log_event
from monitor.notify.documents import Keyboard
from monitor.notify.telegram import DeliveryError, call_bot_api

# What a poll asks for: presses and messages (commands); every other kind stays with Telegram.
ALLOWED_UPDATES = ("message", "callback_query")
_WEBHOOK = "webhook is active"


class Refused(Exception):
    """Telegram will not hand updates over until a person changes something: ``str()`` says what."""


class Conflict(Refused):
    """Another getUpdates ended this one (409): another program polling the bot, or the last poll of
    a process that has just ended. Lasting only when it comes again."""


class Unreachable(Exception):
    """No answer, or not one that says anything lasting: the next poll tries again."""


class BotApi:
    def __init__(self, token: str, api_base: str, client: httpx.Client) -> None:
        self._token, self._api_base, self._client = token, api_base.rstrip("/"), client

    def updates(self, offset: int | None, timeout: float) -> list:
        """The updates from ``offset`` on, waiting up to ``timeout`` seconds for one (long polling)."""
        payload: dict = {"timeout": max(0, int(timeout)), "allowed_updates": list(ALLOWED_UPDATES)}
        if offset is not None:
            payload["offset"] = offset
        answer = self._call("getUpdates", payload, timeout + 10)
        result = answer.get("result")
        if not isinstance(result, list):
            raise Unreachable("getUpdates answered without a list of updates")
        return result

    def answer_press(self, query_id: str, text: str, alert: bool = False) -> bool:
        """Stop the pressing client's spinner with ``text``; False when Telegram would not (too late:
        it allows some seconds only). Best effort: what the press did is already saved."""
        payload = {"callback_query_id": query_id, "text": text[:200], "show_alert": alert}
        return self._best_effort("answerCallbackQuery", payload)

    def set_buttons(self, chat_id: str, message_id: int, keyboard: Keyboard) -> bool:
        """Change the buttons under a message the bot sent (none: remove them)."""
        rows = [[{"text": button.text, "callback_data": button.data} for button in row] for row in keyboard]
        payload = {"chat_id": chat_id, "message_id": message_id, "reply_markup": {"inline_keyboard": rows}}
        return self._best_effort("editMessageReplyMarkup", payload)

    def _best_effort(self, method: str, payload: dict) -> bool:
        try:
            self._call(method, payload, 10.0)
            return True
        except (Refused, Unreachable) as exc:
            if "message is not modified" in str(exc):
                return True  # the buttons were already as asked
            log_event("chat_call_failed", logging.WARNING, method=method, error=str(exc))
            return False

    def _call(self, method: str, payload: dict, timeout: float) -> dict:
        try:  # the request's own timeout: the client is shared with the replies' sender, on another thread
            answer, status = call_bot_api(self._client, self._api_base, self._token, method, payload, timeout)
        except DeliveryError as exc:  # no answer, or a URL that cannot be
            raise Unreachable(str(exc)) from None
        if isinstance(answer, dict) and answer.get("ok"):
            return answer
        description = str(answer.get("description") if isinstance(answer, dict) else f"HTTP {status}")
        description = description.replace(self._token, "[token]")
        if status == 409 and _WEBHOOK in description:
            raise Refused(
                f"{description} (409). The bot is set to send its updates to a webhook, so it "
                "cannot read them: if nothing else uses that webhook, remove it with `curl "
                f"{self._api_base}/bot<token>/deleteWebhook`; the buttons and commands then work"
            )
        if status == 409:
            raise Conflict(
                f"{description} (409). Another program reads this bot's updates: the "
                "buttons and commands need the bot to themselves. Stop the other program, or "
                "give the monitor a bot of its own ([telegram] and TELEGRAM_BOT_TOKEN)"
            )
        if status == 401:
            raise Refused("Telegram does not know the bot token (401 Unauthorized): fix TELEGRAM_BOT_TOKEN")
        raise Unreachable(f"{status}: {description}")
