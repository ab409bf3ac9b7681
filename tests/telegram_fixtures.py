"""The fake Telegram over real HTTP, shared by the notifier's tests (test_telegram) and the watchdog's
(test_watchdog).

tests/conftest.py registers the fixtures. ``clock`` and ``fake`` (a :func:`fake_telegram` with a
private chat and a group) are the defaults; a test module that needs other chats or another time
defines its own. ``server`` serves that fake on 127.0.0.1 and ``http`` is a real httpx client for the
sender under test.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime

import httpx
import pytest

from monitor.core.clock import ManualClock
from sheet_sandbox.http import HTTPServerThread
from sheet_sandbox.telegram import FakeTelegram

TOKEN = "123456:SECRET-token-Abc_def-0123456789"  # shaped like a real one, so redaction is tested
PRIVATE = 4242  # a person's chat: one message a second
GROUP = -4001  # a group (negative id): also at most 20 messages a minute


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
def clock() -> ManualClock:
    """The time the sender and the fake share: the sender's waits move it, nothing sleeps."""
    return ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))


@pytest.fixture
def fake(clock: ManualClock) -> FakeTelegram:
    return fake_telegram(clock, {PRIVATE: "Olga", GROUP: "Stock alerts"})


@pytest.fixture
def server(fake: FakeTelegram) -> Iterator[HTTPServerThread]:
    """The test module's ``fake`` served over HTTP; its ``base_url`` is the sender's ``api_base``."""
    with HTTPServerThread(fake) as served:
        yield served


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5) as client:
        yield client
