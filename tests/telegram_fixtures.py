"""The fake Telegram over real HTTP, shared by the notifier's tests (test_telegram) and the watchdog's
(test_watchdog).

tests/conftest.py registers the fixtures. A test module defines its own ``clock`` and ``fake`` (a
:func:`fake_telegram` with the chats it needs); ``server`` serves that fake on 127.0.0.1 and ``http``
is a real httpx client for the sender under test.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping

import httpx
import pytest

from monitor.core.clock import ManualClock
from monitor.sandbox.http import HTTPServerThread
from monitor.sandbox.telegram import FakeTelegram

TOKEN = "123456:SECRET-token-Abc_def-0123456789"  # shaped like a real one, so redaction is tested


def fake_telegram(clock: ManualClock, chats: Mapping[int, str]) -> FakeTelegram:
    """A fake Bot API that knows :data:`TOKEN` and ``chats`` (id -> title), on ``clock``'s time."""
    fake = FakeTelegram(clock=clock)
    fake.add_token(TOKEN)
    for chat_id, title in chats.items():
        fake.add_chat(chat_id, title=title)
    return fake


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def server(fake: FakeTelegram) -> Iterator[HTTPServerThread]:
    """The test module's ``fake`` served over HTTP; its ``base_url`` is the sender's ``api_base``."""
    with HTTPServerThread(fake) as served:
        yield served


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5) as client:
        yield client
