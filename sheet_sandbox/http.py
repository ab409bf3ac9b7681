"""A small threaded HTTP server for the sandbox's fake APIs.

The fake Google and Telegram APIs are plain callables ``app(request) -> Response``; this module owns
everything about sockets: keep-alive, decoding requests, writing responses, and the misbehaviours a
real front end shows (added latency, a request held until the client gives up, a reset connection).
Every request gets an answer from the app or a deliberate misbehaviour; an exception inside an app
becomes a JSON 500 in Google's shape, never a traceback or the standard library's HTML page.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

# How often a held ("hanging") request checks whether its client went away or the server stops.
_HANG_POLL_SECONDS = 0.05
# How often the accept loop checks for shutdown: stopping a test server should take no longer.
_SHUTDOWN_POLL_SECONDS = 0.02


class BadJSON(ValueError):
    """The request body is not valid JSON."""


@dataclass
class Request:
    method: str
    raw_path: str  # percent-encoded, as sent; split it before decoding (a range may hold '/')
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def path(self) -> str:
        return unquote(self.raw_path)

    def segments(self) -> list[str]:
        """Path segments, each percent-decoded after splitting."""
        return [unquote(part) for part in self.raw_path.strip("/").split("/")]

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def json(self) -> Any:
        """The body parsed as JSON (an empty body is None); raises BadJSON."""
        if not self.body.strip():
            return None
        try:
            return json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadJSON(str(exc)) from exc


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json; charset=UTF-8"
    headers: dict[str, str] = field(default_factory=dict)
    # Misbehaviours, applied by the server instead of (or before) writing the answer.
    delay_seconds: float = 0.0
    hang: bool = False  # hold the request, never answer, until the client closes or the server stops
    reset: bool = False  # abort the TCP connection (RST) without answering

    @classmethod
    def json(cls, status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
        # Compact, although Google indents its answers: clients parse JSON, never its layout, and
        # json.dumps only takes its C encoder without ``indent`` (a 5-range read of a 400-row tab
        # encodes in ~0.5 ms instead of ~4 ms, and its body is a third of the size).
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        return cls(status=status, body=body, headers=dict(headers or {}))

    @classmethod
    def html(cls, status: int, text: str) -> Response:
        return cls(status=status, body=text.encode(), content_type="text/html; charset=UTF-8")


App = Callable[[Request], Response]


def internal_error_body(message: str) -> dict:
    return {"error": {"code": 500, "message": message, "status": "INTERNAL"}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: gspread's requests session reuses connections
    # Without TCP_NODELAY, headers and body leave in two segments and Nagle holds the second until
    # the client's delayed ACK: ~40 ms per kept-alive request instead of ~0.5 ms.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the sandbox keeps its own stats; per-request lines would drown test output

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.connection)

    def _dispatch(self) -> None:
        # Busy while it answers: stopping shuts only the connections waiting for their next request
        # (``close_idle_connections``), never one whose answer is on its way (a released long poll's).
        self.server.untrack(self.connection)
        try:
            self._answer()
        finally:
            self.server.track(self.connection)

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        request = Request(
            method=self.command,
            raw_path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        try:
            response = self.server.app(request)
        except Exception as exc:  # an app bug must still look like Google, not like http.server
            response = Response.json(500, internal_error_body(f"Sandbox error: {exc!r}"))
        self._deliver(response)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _dispatch

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # Malformed request lines and the like: answer in Google's error shape.
        status = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(code, "UNKNOWN")
        self.close_connection = True
        body = {"error": {"code": code, "message": message or "", "status": status}}
        with contextlib.suppress(OSError):
            self._write(Response.json(code, body))

    def _deliver(self, response: Response) -> None:
        stopping = self.server.stopping
        if response.delay_seconds and stopping.wait(response.delay_seconds):
            self.close_connection = True
            return
        if response.hang:
            self._hold_until_client_leaves()
            return
        if response.reset:
            self._reset_connection()
            return
        self._write(response)

    def _write(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def _hold_until_client_leaves(self) -> None:
        self.close_connection = True
        sock = self.connection
        while not self.server.stopping.is_set():
            readable, _, _ = select.select([sock], [], [], _HANG_POLL_SECONDS)
            if readable:
                try:
                    if not sock.recv(1, socket.MSG_PEEK):
                        return  # client closed its end: it gave up
                except OSError:
                    return

    def _reset_connection(self) -> None:
        self.close_connection = True
        # SO_LINGER with a zero timeout turns close() into an RST: the client sees "connection reset".
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True  # server_close() joins the handler threads: stopping leaks none
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: App) -> None:
        super().__init__(address, _Handler)
        self.app = app
        self.stopping = threading.Event()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout, reset) while we answered is normal traffic here, not a
        # server error: socketserver would print a traceback for each one.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def track(self, connection: socket.socket) -> None:
        with self._open_lock:
            self._open.add(connection)

    def untrack(self, connection: socket.socket) -> None:
        with self._open_lock:
            self._open.discard(connection)

    def close_idle_connections(self) -> None:
        """Wake handler threads blocked reading the next keep-alive request, so they can end (a
        connection is tracked while it waits for a request, not while one is answered)."""
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class HTTPServerThread:
    """Serves ``app`` on 127.0.0.1 in a background thread; ``stop()`` releases held requests too.

    An app that holds requests itself (the fake Telegram's long polls) may define ``release()``:
    stopping calls it first, so no handler thread is left waiting when the server joins them.
    """

    def __init__(self, app: App, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = _Server((host, port), app)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": _SHUTDOWN_POLL_SECONDS},
            name="sandbox-http", daemon=True,
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> HTTPServerThread:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.stopping.set()
        self._release_app()
        self._server.shutdown()
        self._server.close_idle_connections()
        self._server.server_close()
        self._thread.join(timeout=5)

    def serve_until_interrupted(self) -> None:
        """Foreground serving for the CLI; Ctrl-C stops cleanly."""
        try:
            self._server.serve_forever()
        finally:
            self._server.stopping.set()
            self._release_app()
            self._server.close_idle_connections()
            self._server.server_close()

    def _release_app(self) -> None:
        release = getattr(self._server.app, "release", None)
        if callable(release):
            release()

    def __enter__(self) -> HTTPServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
