"""Bot API parameters from a request: the query string, then a JSON, form or multipart body.

Errors are the Bot API's (``TelegramError``), with Telegram's wording.
"""

from __future__ import annotations

import json
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import parse_qsl

from .http import Request
from .telegram_errors import bad_request


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


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def to_integer(text: str) -> int:
    """TDLib's ``to_integer``: an optional ``-`` and the leading digits; anything else reads 0
    (``"12abc"`` is 12, ``"abc"`` is 0), so a bad number is never an error of its own."""
    sign = -1 if text.startswith("-") else 1
    digits = text[1:] if sign < 0 else text
    end = 0
    while end < len(digits) and digits[end] in "0123456789":
        end += 1
    return sign * int(digits[:end]) if end else 0


def integer_arg(params: dict[str, str], name: str, default: int,
                low: int = INT32_MIN, high: int = INT32_MAX) -> int:
    """The Bot API's ``get_integer_arg``: the default when absent or empty, else the number read
    as TDLib reads it, clamped into [low, high] (``limit=500`` is 100, not an error)."""
    raw = params.get(name, "")
    value = default if raw == "" else to_integer(raw)
    return max(low, min(high, value))


def to_bool(text: str | None) -> bool:
    """The Bot API's ``to_bool``: true, yes or 1 in any case, spaces around ignored."""
    return (text or "").strip().lower() in ("true", "yes", "1")
