"""The fake Telegram's control API under ``/_sandbox/``: register bots and chats, set a chat's
behaviour, make people write and press buttons, read what was sent, edited, received and
answered, stats, reset. Each endpoint is a thin JSON shell over a Python method of
``telegram_state.TelegramState``; answers use the Bot API's own envelope (``{"ok": true, "result": ...}`` or
``{"ok": false, "error_code", "description"}``). Bot tokens go in and never come out.

    POST /_sandbox/tokens     {"token", "username"?, "first_name"?, "privacy"?: bool}
    GET  /_sandbox/chats
    POST /_sandbox/chats      {"id", "type"?, "title"?, "username"?, "topics"?: [int],
                               "blocked"?: bool, "migrate_to"?: int | true | null,
                               "per_second"?: int | null, "per_minute"?: int | null,
                               "force_429"?: {"count", "retry_after"}}
    POST /_sandbox/force_429  {"count": 1, "retry_after": 5, "chat_id"?: int}  (none: any chat)
    GET  /_sandbox/messages[?chat_id=N]
    POST /_sandbox/write      {"chat_id", "text", "user"?, "bot"?, "message_thread_id"?,
                               "reply_to_message_id"?}
    POST /_sandbox/press      {"chat_id", "message_id", "callback_data" | "text" | "position",
                               "user"?, "inaccessible"?}
    POST /_sandbox/forge_callback   {"chat_id", "message_id", "data", "user"?}
    POST /_sandbox/replay_callback  {"callback_query_id", "chat_id"?, "message_id"?, "user"?}
    POST /_sandbox/webhook    {"url", "bot"?, "drop_pending_updates"?, "max_connections"?, ...}
    GET  /_sandbox/updates[?bot=ID|USERNAME]
    GET  /_sandbox/callback_queries
    GET  /_sandbox/callback_answers
    GET  /_sandbox/edits[?chat_id=N]
    GET  /_sandbox/stats
    POST /_sandbox/reset      {"full"?: bool}

A "user" is ``{"id", "first_name"?, "username"?, "last_name"?, "language_code"?}``; "bot" is a
bot's id or username (needed only when several are registered).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .http import BadJSON, Request, Response
from .telegram_errors import TelegramError, bad_request, not_found, ok
from .telegram_webhook import set_webhook

if TYPE_CHECKING:
    from .telegram_state import TelegramState

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


def handle(fake: TelegramState, request: Request) -> Response:
    route = (request.method, request.raw_path.rstrip("/"))
    handlers = {
        ("POST", "/_sandbox/tokens"): _add_token,
        ("GET", "/_sandbox/chats"): _list_chats,
        ("POST", "/_sandbox/chats"): _set_chat,
        ("POST", "/_sandbox/force_429"): _force_429,
        ("GET", "/_sandbox/messages"): _messages,
        ("POST", "/_sandbox/write"): _write,
        ("POST", "/_sandbox/press"): _press,
        ("POST", "/_sandbox/forge_callback"): _forge,
        ("POST", "/_sandbox/replay_callback"): _replay,
        ("POST", "/_sandbox/webhook"): _webhook,
        ("GET", "/_sandbox/updates"): _updates,
        ("GET", "/_sandbox/callback_queries"):
            lambda fake, request: ok([query.as_json() for query in fake.callback_queries()]),
        ("GET", "/_sandbox/callback_answers"): lambda fake, request: ok(fake.callback_answers()),
        ("GET", "/_sandbox/edits"): _edits,
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
    except (ValueError, KeyError) as error:  # a control call that cannot be done: say why
        return bad_request(str(error.args[0]) if error.args else str(error)).response()


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


def _add_token(fake: TelegramState, request: Request) -> Response:
    body = _body(request)
    token = body.get("token")
    if not isinstance(token, str) or ":" not in token:
        raise bad_request('token must be a string like "123456:secret"')
    privacy = body.get("privacy", True)
    if not isinstance(privacy, bool):
        raise bad_request("privacy must be true or false")
    bot = fake.add_token(token, body.get("username"), body.get("first_name"), privacy)
    return ok(bot.me())


def _list_chats(fake: TelegramState, request: Request) -> Response:
    return ok([chat.describe() for chat in fake.chats.values()])


def _set_chat(fake: TelegramState, request: Request) -> Response:
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


def _migrate(fake: TelegramState, chat_id: int, target: object) -> None:
    if target is None or target is False:
        fake.chat(chat_id).migrate_to = None
    elif target is True:
        fake.migrate_chat(chat_id)
    elif isinstance(target, int):
        fake.migrate_chat(chat_id, target)
    else:
        raise bad_request("migrate_to must be a chat id, true (default id) or null")


def _apply_force(fake: TelegramState, spec: object, chat_id: int | None) -> None:
    if not isinstance(spec, dict):
        raise bad_request('force_429 must be {"count": K, "retry_after": N}')
    count = _int(spec, "count", minimum=1) or 1
    retry_after = _int(spec, "retry_after", minimum=1) or 5
    fake.force_rate_limit(count, retry_after, chat_id)


def _force_429(fake: TelegramState, request: Request) -> Response:
    body = _body(request)
    chat_id = _int(body, "chat_id")
    if chat_id is not None and chat_id not in fake.chats:
        raise bad_request("chat not found")
    _apply_force(fake, body, chat_id)
    return ok(True)


def _messages(fake: TelegramState, request: Request) -> Response:
    return ok([message.as_json() for message in fake.messages(_chat_arg(request))])


def _edits(fake: TelegramState, request: Request) -> Response:
    return ok([edit.as_json() for edit in fake.edits(_chat_arg(request))])


def _updates(fake: TelegramState, request: Request) -> Response:
    raw = request.arg("bot")
    bot = None if raw in (None, "") else (int(raw) if raw.lstrip("-").isdigit() else raw)
    return ok([update.as_json() for update in fake.updates(bot)])


def _chat_arg(request: Request) -> int | None:
    raw = request.arg("chat_id")
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except ValueError:
        raise bad_request("chat_id must be an integer") from None


def _allowed(body: dict, *names: str) -> None:
    unknown = set(body) - set(names)
    if unknown:
        raise bad_request(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(names)}")


def _text(body: dict, name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise bad_request(f"{name} is required, a string")
    return value


def _write(fake: TelegramState, request: Request) -> Response:
    body = _body(request)
    _allowed(body, "chat_id", "text", "user", "bot", "message_thread_id", "reply_to_message_id")
    return ok(fake.write(
        _int(body, "chat_id", required=True), _text(body, "text"), user=body.get("user"),
        bot=body.get("bot"), message_thread_id=_int(body, "message_thread_id", minimum=1),
        reply_to_message_id=_int(body, "reply_to_message_id", minimum=1),
    ))


def _press(fake: TelegramState, request: Request) -> Response:
    body = _body(request)
    _allowed(body, "chat_id", "message_id", "callback_data", "text", "position", "user",
             "inaccessible")
    position = body.get("position")
    if position is not None and not (isinstance(position, list) and len(position) == 2
                                     and all(isinstance(i, int) for i in position)):
        raise bad_request("position must be [row, column], counted from 0")
    return ok(fake.press(
        _int(body, "chat_id", required=True), _int(body, "message_id", required=True, minimum=1),
        callback_data=body.get("callback_data"), text=body.get("text"),
        position=tuple(position) if position is not None else None, user=body.get("user"),
        inaccessible=bool(body.get("inaccessible")),
    ))


def _forge(fake: TelegramState, request: Request) -> Response:
    body = _body(request)
    _allowed(body, "chat_id", "message_id", "data", "user")
    return ok(fake.forge_callback(
        _int(body, "chat_id", required=True), _int(body, "message_id", required=True, minimum=1),
        _text(body, "data"), user=body.get("user"),
    ))


def _replay(fake: TelegramState, request: Request) -> Response:
    body = _body(request)
    _allowed(body, "callback_query_id", "chat_id", "message_id", "user")
    return ok(fake.replay_callback(
        _text(body, "callback_query_id"), chat_id=_int(body, "chat_id"),
        message_id=_int(body, "message_id", minimum=1), user=body.get("user"),
    ))


def _webhook(fake: TelegramState, request: Request) -> Response:
    """setWebhook from the control side ("url" empty or null: deleteWebhook); its description."""
    body = _body(request)
    url = body.pop("url", None) or ""
    bot = body.pop("bot", None)
    if not isinstance(url, str):
        raise bad_request("url must be a string (empty or null deletes the webhook)")
    params = {name: value if isinstance(value, str) else json.dumps(value)
              for name, value in body.items()}
    answer = set_webhook(fake, fake.find_bot(bot), {"url": url, **params}, delete=not url)
    return ok(json.loads(answer.body)["description"])  # its errors are Telegram's, as they are


def _reset(fake: TelegramState, request: Request) -> Response:
    fake.reset(full=bool(_body(request).get("full")))
    return ok(True)
