"""The fake Telegram's control API under ``/_sandbox/``: register bots and chats, set a chat's
behaviour, read what was sent, stats, reset. Each endpoint is a thin JSON shell over a Python
method of ``FakeTelegram``; answers use the Bot API's own envelope (``{"ok": true, "result": ...}``
or ``{"ok": false, "error_code", "description"}``). Bot tokens go in and never come out.

    POST /_sandbox/tokens     {"token", "username"?, "first_name"?}
    GET  /_sandbox/chats
    POST /_sandbox/chats      {"id", "type"?, "title"?, "username"?, "topics"?: [int],
                               "blocked"?: bool, "migrate_to"?: int | true | null,
                               "per_second"?: int | null, "per_minute"?: int | null,
                               "force_429"?: {"count", "retry_after"}}
    POST /_sandbox/force_429  {"count": 1, "retry_after": 5, "chat_id"?: int}  (none: any chat)
    GET  /_sandbox/messages[?chat_id=N]
    GET  /_sandbox/stats
    POST /_sandbox/reset      {"full"?: bool}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .http import BadJSON, Request, Response
from .telegram_errors import TelegramError, bad_request, not_found, ok

if TYPE_CHECKING:
    from .telegram import FakeTelegram

_CHAT_FIELDS = {
    "id",
    "type",
    "title",
    "username",
    "topics",
    "blocked",
    "migrate_to",
    "per_second",
    "per_minute",
    "force_429",
}


def handle(fake: FakeTelegram, request: Request) -> Response:
    route = (request.method, request.raw_path.rstrip("/"))
    handlers = {
        ("POST", "/_sandbox/tokens"): _add_token,
        ("GET", "/_sandbox/chats"): _list_chats,
        ("POST", "/_sandbox/chats"): _set_chat,
        ("POST", "/_sandbox/force_429"): _force_429,
        ("GET", "/_sandbox/messages"): _messages,
        ("GET", "/_sandbox/stats"): lambda fake, request: ok(fake.stats()),
        ("POST", "/_sandbox/reset"): _reset,
    }
    handler = handlers.get(route)
    try:
        if handler is None:
            raise not_found()
        return handler(fake, request)
    except TelegramError as error:
        return error.response()


def _body(request: Request) -> dict:
    try:
        body = request.json()
    except BadJSON:
        raise bad_request("JSON object expected") from None
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise bad_request("JSON object expected")
    return body


def _int(body: dict, name: str, required: bool = False, minimum: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        if required:
            raise bad_request(f"{name} is required")
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or (minimum is not None and value < minimum)
    ):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise bad_request(f"{name} must be an integer{bound}")
    return value


def _add_token(fake: FakeTelegram, request: Request) -> Response:
    body = _body(request)
    token = body.get("token")
    if not isinstance(token, str) or ":" not in token:
        raise bad_request('token must be a string like "123456:secret"')
    bot = fake.add_token(token, body.get("username"), body.get("first_name"))
    return ok(bot.me())


def _list_chats(fake: FakeTelegram, request: Request) -> Response:
    return ok([chat.describe() for chat in fake.chats.values()])


def _set_chat(fake: FakeTelegram, request: Request) -> Response:
    """Create the chat if new (type/title/username/topics apply only then), then apply behaviour."""
    body = _body(request)
    unknown = set(body) - _CHAT_FIELDS
    if unknown:
        raise bad_request(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_CHAT_FIELDS)}")
    chat_id = _int(body, "id", required=True)
    topics = body.get("topics")
    if topics is not None and not (
        isinstance(topics, list) and all(isinstance(t, int) for t in topics)
    ):
        raise bad_request("topics must be a list of integers")
    if chat_id not in fake.chats:
        try:
            fake.add_chat(
                chat_id, body.get("type"), body.get("title"), body.get("username"), topics
            )
        except ValueError as error:
            raise bad_request(str(error)) from None
    chat = fake.chat(chat_id)
    if "blocked" in body:
        fake.block_chat(chat_id, bool(body["blocked"]))
    if "migrate_to" in body:
        _migrate(fake, chat_id, body["migrate_to"])
    if "per_second" in body or "per_minute" in body:
        fake.set_rate_limit(
            chat_id,
            _int(body, "per_second", minimum=0) if "per_second" in body else chat.per_second,
            _int(body, "per_minute", minimum=0) if "per_minute" in body else chat.per_minute,
        )
    if body.get("force_429") is not None:
        _apply_force(fake, body["force_429"], chat_id)
    return ok(chat.describe())


def _migrate(fake: FakeTelegram, chat_id: int, target: object) -> None:
    if target is None or target is False:
        fake.chat(chat_id).migrate_to = None
    elif target is True:
        fake.migrate_chat(chat_id)
    elif isinstance(target, int):
        fake.migrate_chat(chat_id, target)
    else:
        raise bad_request("migrate_to must be a chat id, true (default id) or null")


def _apply_force(fake: FakeTelegram, spec: object, chat_id: int | None) -> None:
    if not isinstance(spec, dict):
        raise bad_request('force_429 must be {"count": K, "retry_after": N}')
    count = _int(spec, "count", minimum=1) or 1
    retry_after = _int(spec, "retry_after", minimum=1) or 5
    fake.force_rate_limit(count, retry_after, chat_id)


def _force_429(fake: FakeTelegram, request: Request) -> Response:
    body = _body(request)
    chat_id = _int(body, "chat_id")
    if chat_id is not None and chat_id not in fake.chats:
        raise bad_request("chat not found")
    _apply_force(fake, body, chat_id)
    return ok(True)


def _messages(fake: FakeTelegram, request: Request) -> Response:
    raw = request.arg("chat_id")
    chat_id = None
    if raw not in (None, ""):
        try:
            chat_id = int(raw)
        except ValueError:
            raise bad_request("chat_id must be an integer") from None
    return ok([message.as_json() for message in fake.messages(chat_id)])


def _reset(fake: FakeTelegram, request: Request) -> Response:
    fake.reset(full=bool(_body(request).get("full")))
    return ok(True)
