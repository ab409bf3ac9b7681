"""Fixtures for the tests of the fake Telegram's buttons, updates and people (test_fake_telegram_*),
registered in conftest: ``telegram_board`` (one server a module, serving each test's own fake),
``telegram_http`` (a client for it), ``bot_token``, ``served_fake`` (the test's fake on the shared
``clock``, served, its waiting polls ended after the test), and ``bot`` / ``control`` (that bot's
Bot API and the control API)."""

from __future__ import annotations

import pytest
from fake_telegram_helpers import BotClient, Control, http_client, make_fake, make_token, serve_switchboard


@pytest.fixture(scope="module")
def telegram_board():
    yield from serve_switchboard()


@pytest.fixture(scope="module")
def telegram_http(telegram_board):
    with http_client(telegram_board.base_url) as client:
        yield client


@pytest.fixture
def bot_token() -> str:
    return make_token()


@pytest.fixture
def served_fake(clock, bot_token, telegram_board):
    # A long-poll cap far above what a test takes: under load a poll must end by the clock.
    fake = make_fake(clock, bot_token, long_poll_cap=30)
    telegram_board.app = fake
    yield fake
    fake.release()


@pytest.fixture
def bot(served_fake, telegram_http, bot_token) -> BotClient:
    return BotClient(telegram_http, bot_token)


@pytest.fixture
def control(served_fake, telegram_http) -> Control:
    return Control(telegram_http)
