"""The Bot API's error envelope and the few answers built in more than one place.

Errors are ``{"ok": false, "error_code": N, "description": "..."[, "parameters": {...}]}`` with
the HTTP status equal to ``error_code``; successes are ``{"ok": true, "result": ...}``.
"""

from __future__ import annotations

from .http import Response


class TelegramError(Exception):
    """An answer other than ok; carries the Bot API's code, description and parameters."""

    def __init__(self, code: int, description: str, parameters: dict | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters

    def response(self) -> Response:
        body: dict = {"ok": False, "error_code": self.code, "description": self.description}
        if self.parameters:
            body["parameters"] = self.parameters
        return Response.json(self.code, body)


def bad_request(detail: str) -> TelegramError:
    return TelegramError(400, f"Bad Request: {detail}")


def not_found() -> TelegramError:
    return TelegramError(404, "Not Found")


def too_many_requests(retry_after: int) -> TelegramError:
    return TelegramError(
        429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after}
    )


def ok(result: object) -> Response:
    return Response.json(200, {"ok": True, "result": result})
