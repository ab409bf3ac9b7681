"""Helpers for the tests of the fake Telegram's buttons, updates and people (test_fake_telegram_*):
a bot's httpx client, the control API's, and one server per module that serves each test's own
fake. Assertion-free: the tests assert."""

from __future__ import annotations

import secrets
import threading
import time

import httpx

from monitor.core.clock import ManualClock
from sheet_sandbox.http import HTTPServerThread
from sheet_sandbox.telegram import FakeTelegram

BOT_USERNAME = "stock_monitor_bot"
PRIVATE = 4242  # Olga's private chat with the bot (her user id)
GROUP = -4001  # a basic group
SUPERGROUP = -1001111111111  # a supergroup without topics
FORUM = -1001234567890  # a supergroup with topics 7 and 9
IVAN = {"id": 5001, "first_name": "Ivan", "username": "ivan"}


def make_token() -> str:
    """A token shaped like a real one, made at test time."""
    return f"{secrets.randbelow(9 * 10**9) + 10**9}:{secrets.token_urlsafe(26)}"


def make_fake(clock: ManualClock, token: str, **options) -> FakeTelegram:
    fake = FakeTelegram(clock=clock, seed=0, **options)
    fake.add_token(token, username=BOT_USERNAME, first_name="Stock monitor")
    fake.add_chat(PRIVATE, title="Olga", username="olga")
    fake.add_chat(GROUP, title="Stock alerts")
    fake.add_chat(SUPERGROUP, title="Warehouse")
    fake.add_chat(FORUM, title="Ops", topics=[7, 9])
    return fake


class Switchboard:
    """Serves whichever fake the current test built (one server per module: starting one per test
    costs more than the tests); stopping releases that fake's long polls."""

    def __init__(self) -> None:
        self.app: FakeTelegram | None = None
        self.base_url = ""

    def __call__(self, request):
        return self.app(request)

    def release(self) -> None:
        if self.app is not None:
            self.app.release()


def serve_switchboard():
    board = Switchboard()
    with HTTPServerThread(board) as server:
        board.base_url = server.base_url
        yield board


def http_client(base_url: str) -> httpx.Client:
    """One client a module shares (httpx clients are thread-safe, and each costs an SSL context)."""
    return httpx.Client(base_url=base_url, timeout=60)


class BotClient:
    """The Bot API as one bot's client sees it; ``bodies`` keeps every answer (to look for the token)."""

    def __init__(self, http: httpx.Client, token: str) -> None:
        self.http = http
        self.token = token
        self.bodies: list[str] = []

    def call(self, method: str, **params) -> httpx.Response:
        response = self.http.post(f"/bot{self.token}/{method}", json=params)
        self.bodies.append(response.text)
        return response

    def result(self, method: str, **params):
        """The ``result`` of a call, or the whole answer when it failed (so a test sees why)."""
        body = self.call(method, **params).json()
        return body["result"] if body.get("ok") else body

    def send(self, chat_id: int, text: str, **params) -> httpx.Response:
        return self.call("sendMessage", chat_id=chat_id, text=text, **params)


class Control:
    """The fake's /_sandbox/ API."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.bodies: list[str] = []

    def post(self, path: str, **body) -> dict:
        response = self.http.post(f"/_sandbox/{path}", json=body)
        self.bodies.append(response.text)
        return response.json()

    def get(self, path: str, **params) -> dict:
        response = self.http.get(f"/_sandbox/{path}", params=params)
        self.bodies.append(response.text)
        return response.json()


def keyboard(*rows: list[tuple[str, str]]) -> dict:
    """An InlineKeyboardMarkup of callback buttons: ``keyboard([("Ack", "ack:1")])``."""
    return {"inline_keyboard": [[{"text": text, "callback_data": data} for text, data in row]
                                for row in rows]}


def failure(response: httpx.Response) -> tuple[int, str]:
    """(status, description) of a failed Bot API answer; (status, None) when it did not fail in
    Telegram's shape."""
    body = response.json()
    shaped = body.get("ok") is False and body.get("error_code") == response.status_code
    return response.status_code, body.get("description") if shaped else None


def wait_until(condition, seconds: float = 3.0) -> bool:
    """Whether ``condition()`` came true within ``seconds`` of real time (for another thread's
    request to reach the fake; a test's logic never waits on time)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.002)
    return condition()


class Poll:
    """A getUpdates request made on a thread of its own, with its own client; ``answer`` is the
    JSON it got and ``seconds`` how long (real time) it took."""

    def __init__(self, http: httpx.Client, token: str, **params) -> None:
        self.answer: dict | None = None
        self.seconds: float | None = None
        self._client = BotClient(http, token)
        self._thread = threading.Thread(target=self._run, args=(params,), daemon=True)
        self._thread.start()

    def _run(self, params: dict) -> None:
        start = time.monotonic()
        try:
            self.answer = self._client.call("getUpdates", **params).json()
        finally:
            self.seconds = time.monotonic() - start

    def done(self) -> bool:
        return not self._thread.is_alive()

    def join(self, seconds: float = 3.0) -> dict | None:
        self._thread.join(seconds)
        return self.answer
