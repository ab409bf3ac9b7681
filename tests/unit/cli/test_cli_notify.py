"""`check-config` asking Telegram about the token and every chat (getMe, getChat; nothing sent) unless
--offline, and `notify test` sending one message to each chat: through the real CLI, httpx against the
fake Bot API on 127.0.0.1 (and the keys' tokens from the sandbox's Google)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from cli_fixtures import invoke, json_of, write_config
from telegram_fixtures import TOKEN

from monitor.core.clock import ManualClock
from sheet_sandbox.http import HTTPServerThread
from sheet_sandbox.server import running_sandbox
from sheet_sandbox.telegram import FakeTelegram

HOME, EMEA = -1001000000001, -1001000000002
TOPIC = 7


@pytest.fixture
def fake() -> FakeTelegram:
    fake = FakeTelegram(ManualClock())
    fake.add_token(TOKEN, username="stock_monitor_bot")
    fake.add_chat(HOME, title="Ops")
    fake.add_chat(EMEA, title="EMEA", topics=[TOPIC])
    return fake


@pytest.fixture
def telegram_url(fake) -> Iterator[str]:
    with HTTPServerThread(fake) as server:
        yield server.base_url


@pytest.fixture(scope="module")
def google():
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off") as served:
        yield served


@pytest.fixture
def keys(google, tmp_path):
    return google.write_credentials(tmp_path / "secrets", 1)


def config_for(tmp_path, telegram_url: str, route_chat: int = EMEA, keys=None):
    return write_config(tmp_path / "site", credentials=keys, extra=(
        f'\n[telegram]\nchat_id = "{HOME}"\napi_base = "{telegram_url}"\n'
        f'\n[[telegram.routes]]\nprofiles = ["stock"]\nchat_id = "{route_chat}"\n'
        f'message_thread_id = {TOPIC}\n'))


def lines_of(result, word: str) -> list[str]:
    return [line.strip() for line in result.stdout.splitlines() if line.strip().startswith(word)]


def test_check_config_asks_telegram_about_the_token_and_every_chat(
        tmp_path, telegram_url, fake, keys, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    result = invoke(config_for(tmp_path, telegram_url, keys=keys), "check-config")
    assert result.exit_code == 0, result.output
    ok = lines_of(result, "ok")
    assert "ok       telegram bot token: bot @stock_monitor_bot (id 123456)" in ok
    assert f'ok       telegram chat {EMEA}: "EMEA" (supergroup, forum)' in ok
    assert fake.stats()["requests"] == {"getMe": {"200": 1}, "getChat": {"200": 2}}
    assert fake.messages() == []  # nothing sent


def test_check_config_names_a_wrong_token_and_exits_2_unless_offline(
        tmp_path, telegram_url, fake, keys, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "999:not-the-bot")
    config = config_for(tmp_path, telegram_url, keys=keys)
    result = invoke(config, "check-config")
    assert result.exit_code == 2
    assert lines_of(result, "problem") == ["problem  telegram bot token: 401 Unauthorized"]
    assert "fix: Telegram does not know this bot token" in result.output
    assert "not-the-bot" not in result.output
    assert invoke(config, "check-config", "--offline").exit_code == 0
    asked = sum(sum(by_status.values()) for by_status in fake.stats()["requests"].values())
    assert asked == 1  # the first check-config's getMe; --offline asked nothing


def test_check_config_names_a_chat_telegram_does_not_know(tmp_path, telegram_url, keys, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    result = invoke(config_for(tmp_path, telegram_url, route_chat=-1009999, keys=keys), "check-config",
                    "--json")
    assert result.exit_code == 2
    bot, home, route = [check for check in json_of(result)["checks"] if check["name"].startswith("telegram")]
    assert bot["ok"] and home["ok"] and route["name"] == "telegram chat -1009999" and route["usage"]
    assert route["detail"] == "400 Bad Request: chat not found" and "bot was added" in route["fix"]


def test_notify_test_sends_to_every_chat_and_topic_and_says_what_telegram_answered(
        tmp_path, telegram_url, fake, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    config = config_for(tmp_path, telegram_url)
    result = invoke(config, "notify", "test")
    assert result.exit_code == 0, result.output
    assert f"chat {HOME}: sent, message 1" in result.output
    assert f"chat {EMEA} topic {TOPIC}: sent, message 1" in result.output
    [home], [emea] = fake.messages(HOME), fake.messages(EMEA)
    assert "test message" in home.text and emea.message_thread_id == TOPIC
    fake.block_chat(EMEA)
    fake.clock.advance(60)  # past Telegram's one message a second per chat
    result = invoke(config, "notify", "test")
    assert result.exit_code == 1
    assert f"chat {HOME}: sent, message 2" in result.output
    assert f"chat {EMEA} topic {TOPIC}: refused: 403 Forbidden: bot was kicked from the supergroup chat" in (
        result.output)
    assert "fix: add the bot to the chat again" in result.output
