"""Delivery to Telegram over httpx, and a printer for when Telegram is not configured.

``TelegramSender.send(html)`` posts one ``sendMessage`` (``parse_mode=HTML``) and either returns a
:class:`Sent` or raises a :class:`DeliveryError`. Telegram's answers are classified here, once,
into that small family with a ``permanent`` flag (after healthchecks' transports):

- 429: waits ``parameters.retry_after`` through the injected clock and tries again (at most
  ``max_rate_limit_retries`` times), unless the wait is longer than ``max_wait``: then a retryable
  error (:class:`RateLimited`), so the outbox keeps the message;
- 400 with ``migrate_to_chat_id``: the group became a supergroup; the sender switches to the new id,
  resends, and reports the new id in :attr:`Sent.chat_id` (the caller stores it);
- 401, 403 (blocked, kicked), 404, "chat not found", and a 4xx that is not a Bot API answer (a
  proxy's page): permanent for the chat (``scope="chat"``); other 400s: permanent for that message
  only (``scope="message"``), which the outbox holds until another message tells whether the
  message or the channel is at fault;
- 5xx, timeouts, refused connections: retryable.

Pacing: at most one message a second to a chat and 20 a minute to a group, counted on the clock's
monotonic reading, so tests move a ManualClock instead of waiting.

The bot token is in every request URL. It never reaches logs, errors or reprs: httpx's own INFO
line (which prints the URL) is silenced, our errors are built from Telegram's answer only, with the
token scrubbed, and httpx's exceptions are not chained (their ``request.url`` holds the token).
"""

from __future__ import annotations

import html
import logging
import re
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Protocol

from monitor.notify import lean_httpx  # noqa: F401  before httpx: see its doc

# isort: split

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, stop_any

from monitor.core.clock import SystemClock
from monitor.notify.documents import Keyboard

DEFAULT_API_BASE = "https://api.telegram.org"
DEFAULT_TIMEOUT_SECONDS = 10.0
PER_CHAT_INTERVAL = 1.0  # Telegram: about one message per second in one chat
GROUP_WINDOW = (20, 60.0)  # Telegram: at most 20 messages per minute in one group

# The one table of Telegram descriptions that make a failure permanent for the whole chat.
# Matched lower-case as substrings; the HTTP codes 401/403/404 are permanent by themselves.
CHAT_PERMANENT_DESCRIPTIONS = (
    "chat not found",
    "bot was blocked",
    "bot was kicked",
    "not a member",
    "user is deactivated",
    "bot can't initiate conversation",
    "have no rights to send",
    "need administrator rights",
    "message thread not found",
)
CHAT_PERMANENT_STATUSES = frozenset({401, 403, 404})

# httpx and httpcore log every request URL at INFO/DEBUG, and the URL holds the token.
_CHATTY_LOGGERS = ("httpx", "httpcore")


class DeliveryError(Exception):
    """A message was not delivered. ``permanent``: retrying the same thing cannot help.
    ``scope``: "chat" when no message can reach this chat, "message" when only this one is bad."""

    permanent = False
    scope = "message"

    def __init__(
        self, description: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(description)
        self.description = description
        self.status = status
        self.retry_after = retry_after


class RetryableDeliveryError(DeliveryError):
    """Telegram unreachable, 5xx, or a rate limit longer than we may wait: try again later."""


class RateLimited(RetryableDeliveryError):
    """Telegram's 429: ``retry_after`` seconds must pass before the next message to this chat."""


class PermanentMessageError(DeliveryError):
    """Telegram refuses this message (e.g. bad HTML): drop it, keep sending the others."""

    permanent = True


class PermanentChatError(DeliveryError):
    """Telegram refuses every message to this chat (bad token, chat not found, bot blocked)."""

    permanent = True
    scope = "chat"


@dataclass
class ChatPacing:
    """When messages last went to one chat, on the clock's monotonic reading: shared by the senders
    of one chat's topics, since Telegram's limits count the chat."""

    last_sent: float | None = None
    group_sends: deque[float] = field(default_factory=deque)


@dataclass(frozen=True)
class Sent:
    message_id: int | None
    chat_id: str  # the chat it went to: differs from the configured one after a migration


class Sender(Protocol):
    def send(self, text: str, keyboard: Keyboard = ()) -> Sent: ...


class TelegramSender:
    """Sends HTML messages to one chat (and optional forum topic) through the Bot API."""

    def __init__(
        self,
        token: str,
        chat_id: str | int,
        api_base: str = DEFAULT_API_BASE,
        thread_id: int | None = None,
        client: httpx.Client | None = None,
        *,
        clock: object | None = None,
        max_wait: float = 60.0,
        max_rate_limit_retries: int = 3,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        pacing: ChatPacing | None = None,
    ) -> None:
        if not token:
            raise ValueError("a bot token is required")
        for name in _CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        self._token = token
        self.chat_id = str(chat_id)
        self.api_base = api_base.rstrip("/")
        self.thread_id = thread_id
        self._client = client or lean_httpx.client(timeout=timeout)
        self._owns_client = client is None
        self._clock = clock or SystemClock()
        self.max_wait = max_wait
        self.max_rate_limit_retries = max_rate_limit_retries
        self._pacing = pacing or ChatPacing()

    def __repr__(self) -> str:
        return (
            f"TelegramSender(chat_id={self.chat_id!r}, api_base={self.api_base!r}, "
            f"thread_id={self.thread_id!r})"
        )

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    # -- sending -------------------------------------------------------------------------------

    def send(self, text: str, keyboard: Keyboard = ()) -> Sent:
        """Deliver ``text`` (Telegram HTML, at most 4096 characters) with ``keyboard``'s buttons under
        it, or raise a DeliveryError."""
        # The product's one in-process retry: Telegram says how long to wait, the wait goes through
        # the injected clock (tests move it; the run's deadline can refuse it), and a wait longer
        # than ``max_wait`` is not waited at all: the RateLimited goes up, retryable, and the
        # message stays in the outbox for the next pass.
        retrying = Retrying(
            retry=retry_if_exception_type(RateLimited),
            wait=_retry_after,
            stop=stop_any(stop_after_attempt(self.max_rate_limit_retries + 1), self._wait_too_long),
            sleep=self._clock.sleep,
            reraise=True,
        )
        return retrying(self._send_once, text, keyboard)

    def _wait_too_long(self, retry_state: RetryCallState) -> bool:
        return _retry_after(retry_state) > self.max_wait

    def _send_once(self, text: str, keyboard: Keyboard = ()) -> Sent:
        answer, status = self._paced_post(text, keyboard)
        migrate_to = (answer.get("parameters") or {}).get("migrate_to_chat_id")
        if not answer.get("ok") and migrate_to is not None:
            # The group became a supergroup: follow it, once per message (the caller stores the new
            # id from Sent.chat_id); a second migration answer is an error like any other.
            self.chat_id = str(migrate_to)
            answer, status = self._paced_post(text, keyboard)
        if answer.get("ok"):
            self._record_send()
            return Sent((answer.get("result") or {}).get("message_id"), self.chat_id)
        description = self._scrub(str(answer.get("description") or f"HTTP {status}"))
        if status == 429:
            retry_after = float((answer.get("parameters") or {}).get("retry_after") or 1)
            raise RateLimited(description, status=429, retry_after=retry_after)
        if "ok" not in answer and 400 <= status < 500:
            # Not the Bot API's envelope: whatever answers at api_base (a proxy, another server)
            # refuses the request, not Telegram the message; no message can pass it.
            raise PermanentChatError(
                f"{self.api_base} answered HTTP {status} without a Bot API answer: a wrong api_base or "
                f"a proxy in between", status=status)
        raise classify_refusal(status, description)

    def _paced_post(self, text: str, keyboard: Keyboard = ()) -> tuple[dict, int]:
        self._pace()
        return self._post(text, keyboard)

    def _post(self, text: str, keyboard: Keyboard = ()) -> tuple[dict, int]:
        payload: dict = {
            "chat_id": self.chat_id,
            "text": text,
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": True},
        }
        if self.thread_id is not None:
            payload["message_thread_id"] = self.thread_id
        if keyboard:
            payload["reply_markup"] = {"inline_keyboard": [
                [{"text": button.text, "callback_data": button.data} for button in row] for row in keyboard]}
        answer, status = call_bot_api(self._client, self.api_base, self._token, "sendMessage", payload)
        if not isinstance(answer, dict):
            answer = {}
        if not answer and status >= 500:
            raise RetryableDeliveryError(f"Telegram answered HTTP {status}", status=status)
        return answer, status

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "[token]")

    # -- pacing --------------------------------------------------------------------------------

    def _is_group(self) -> bool:
        return self.chat_id.startswith("-")  # group, supergroup and channel ids are negative

    def _pace(self) -> None:
        """Wait (on the injected clock) until one more message fits Telegram's per-chat limits;
        a wait longer than ``max_wait`` is a retryable error instead, so a run never hangs on it."""
        now = self._clock.monotonic()
        wait = 0.0
        pacing = self._pacing
        if pacing.last_sent is not None:
            wait = max(wait, pacing.last_sent + PER_CHAT_INTERVAL - now)
        if self._is_group():
            limit, window = GROUP_WINDOW
            while pacing.group_sends and pacing.group_sends[0] <= now - window:
                pacing.group_sends.popleft()
            if len(pacing.group_sends) >= limit:
                wait = max(wait, pacing.group_sends[-limit] + window - now)
        if wait > self.max_wait:
            raise RetryableDeliveryError(
                f"paced: the next message may go in {wait:.0f}s", retry_after=wait
            )
        if wait > 0:
            self._clock.sleep(wait)

    def _record_send(self) -> None:
        now = self._clock.monotonic()
        self._pacing.last_sent = now
        if self._is_group():
            self._pacing.group_sends.append(now)


def call_bot_api(client: httpx.Client, api_base: str, token: str, method: str, payload: dict,
                 timeout: float | None = None) -> tuple[object, int]:
    """POST one Bot API ``method``: Telegram's decoded JSON (None when the body is not JSON) and the
    HTTP status. No answer raises ``RetryableDeliveryError``, a token or ``api_base`` that cannot be
    in a URL ``PermanentChatError`` (the config's); their texts have the token scrubbed. ``timeout``:
    this request's own (None: the client's), for a client that threads share."""
    url = f"{api_base}/bot{token}/{method}"
    try:
        if timeout is None:
            response = client.post(url, json=payload)
        else:
            response = client.post(url, json=payload, timeout=httpx.Timeout(timeout))
    except httpx.InvalidURL as exc:
        raise PermanentChatError(f"bad Telegram URL: {str(exc).replace(token, '[token]')}") from None
    except httpx.HTTPError as exc:
        # Not chained: the httpx exception carries the request, whose URL holds the token.
        raise RetryableDeliveryError(
            f"Telegram unreachable: {type(exc).__name__}: {str(exc).replace(token, '[token]')}"
        ) from None
    try:
        return response.json(), response.status_code
    except ValueError:
        return None, response.status_code


def _retry_after(retry_state: RetryCallState) -> float:
    """tenacity's wait: what the 429 asked for (``RateLimited`` is the only error retried)."""
    return retry_state.outcome.exception().retry_after


def classify_refusal(status: int, description: str) -> DeliveryError:
    """Telegram's failed answer (other than 429 and migration) -> our exception."""
    lowered = description.lower()
    if status in CHAT_PERMANENT_STATUSES or any(
        text in lowered for text in CHAT_PERMANENT_DESCRIPTIONS
    ):
        return PermanentChatError(description, status=status)
    if status >= 500 or status == 0:
        return RetryableDeliveryError(description, status=status)
    if 400 <= status < 500:
        return PermanentMessageError(description, status=status)
    return RetryableDeliveryError(description, status=status)


# ---- without Telegram ---------------------------------------------------------------------------

_LINK = re.compile(r'<a\s+href="([^"]*)"\s*>(.*?)</a>', re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")


def html_to_text(text: str) -> str:
    """Telegram HTML -> readable plain text: links as "name (url)", other tags dropped, entities
    unescaped (last, so an escaped "&lt;b&gt;" in a name stays visible as "<b>")."""
    text = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})", text)
    return html.unescape(_TAGS.sub("", text))


class PrintingSender:
    """Writes each message as plain text to ``stream``, separated by a blank line. Never fails."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.chat_id = "stdout"

    def send(self, text: str, keyboard: Keyboard = ()) -> Sent:
        # Printed, buttons are no use: nobody can press them, and they would only clutter the text.
        self.stream.write(html_to_text(text).rstrip("\n") + "\n\n")
        self.stream.flush()
        return Sent(None, self.chat_id)
