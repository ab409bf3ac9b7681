"""Stopping the sandbox's HTTP server (sheet_sandbox.http.HTTPServerThread): held requests released,
and every answer on its way delivered before the connections close."""

from __future__ import annotations

import threading
import time

import httpx

from sheet_sandbox.http import HTTPServerThread, Request, Response

# Longer than the server's shutdown poll (20 ms): stop() has gone on to close connections by then.
SLOW_TO_WAKE_SECONDS = 0.3


class HeldUntilReleased:
    """An app that holds each request until ``release()`` (as the fake Telegram's long polls are),
    then answers after SLOW_TO_WAKE_SECONDS, as a handler thread on a busy machine runs late."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.released = threading.Event()

    def __call__(self, request: Request) -> Response:
        self.arrived.set()
        self.released.wait(10)
        time.sleep(SLOW_TO_WAKE_SECONDS)  # released, and not yet run again
        return Response.json(200, {"ok": True})

    def release(self) -> None:
        self.released.set()


def test_stopping_shuts_no_connection_whose_answer_is_on_its_way():
    app = HeldUntilReleased()
    server = HTTPServerThread(app).start()
    answers: list = []
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        asking = threading.Thread(target=lambda: answers.append(http.get("/held").json()), daemon=True)
        asking.start()
        assert app.arrived.wait(5)
        server.stop()
        asking.join(10)
    assert answers == [{"ok": True}]
