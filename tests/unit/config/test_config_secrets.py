"""The config loader and secrets: credential files and the bot token, never echoed anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from config_fixtures import FULL, MINIMAL, TOKEN, error_of, load, secrets_folder
from config_fixtures import pem_key as config_pem_key

from monitor.config import ConfigError, load_config


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


@pytest.fixture
def pem_key() -> str:
    return config_pem_key()


# ---------------------------------------------------------------------------------------- secrets


def test_missing_credentials_file_and_wrong_json_never_echo_key_material(
        folder: Path, pem_key: str) -> None:
    (folder / "secrets/sa-2.json").write_text(json.dumps(
        {"type": "authorized_user", "private_key": pem_key, "refresh_token": "r-secret"}))
    (folder / "secrets/broken.json").write_text('{"private_key": "' + pem_key[:60])
    text = MINIMAL.replace('["secrets/sa-1.json"]',
                           '[\n  "secrets/nope.json",\n  "secrets/sa-2.json",\n'
                           '  "secrets/broken.json",\n]')
    message = error_of(folder, text)
    assert "monitor.toml:3: google.credentials[0]: credentials file" in message
    assert "nope.json not found" in message and "relative paths are resolved" in message
    assert "monitor.toml:4: google.credentials[1]:" in message
    assert "a 'authorized_user' credential, not a service-account key" in message
    assert "monitor.toml:5: google.credentials[2]:" in message and "is not valid JSON" in message
    assert "Service accounts > Keys > Add key > JSON" in message
    assert "PRIVATE KEY" not in message and "r-secret" not in message


def test_the_same_service_account_twice_is_an_error(folder: Path) -> None:
    text = MINIMAL.replace('["secrets/sa-1.json"]', '["secrets/sa-1.json", "secrets/sa-1.json"]')
    assert "is the same service account as credentials[0]" in error_of(folder, text)


def test_read_only_commands_may_load_without_secrets(folder: Path) -> None:
    text = FULL.replace("secrets/sa-2.json", "secrets/missing.json")
    config = load(folder, text, env={}, require_secrets=False)
    assert not config.telegram.enabled and config.telegram.chat_id == "-1001234567890"
    config = load(folder, text, env={"TELEGRAM_BOT_TOKEN_FILE": str(folder / "absent")},
                  require_secrets=False)
    assert config.telegram.bot_token is None


def test_chat_id_without_token_is_an_error_naming_the_variable(folder: Path) -> None:
    message = error_of(folder, FULL, env={})
    assert "monitor.toml:19: telegram.chat_id: chat_id is set but neither TELEGRAM_BOT_TOKEN" in message
    assert "cron does not read your shell profile" in message


def test_token_without_chat_id_is_an_error_that_never_shows_the_token(folder: Path) -> None:
    message = error_of(folder, FULL.replace('chat_id = "-1001234567890"', ""))
    assert "telegram.chat_id: TELEGRAM_BOT_TOKEN is set but there is no chat" in message


def test_token_is_read_from_a_file_and_never_appears_in_repr(folder: Path) -> None:
    token_file = folder / "token"
    token_file.write_text(TOKEN + "\n")
    config = load(folder, FULL, env={"TELEGRAM_BOT_TOKEN_FILE": str(token_file)})
    assert config.telegram.bot_token.get_secret_value() == TOKEN
    for text in (repr(config), str(config), repr(config.telegram), config.model_dump_json()):
        assert TOKEN not in text


def test_token_problems_in_the_environment_are_reported(folder: Path) -> None:
    message = error_of(folder, FULL, env={"TELEGRAM_BOT_TOKEN": TOKEN,
                                          "TELEGRAM_BOT_TOKEN_FILE": "/x"})
    assert "environment: TELEGRAM_BOT_TOKEN_FILE: both TELEGRAM_BOT_TOKEN and" in message
    message = error_of(folder, FULL, env={"TELEGRAM_BOT_TOKEN_FILE": str(folder / "none")})
    assert "cannot read the token file" in message


def test_a_token_written_in_the_file_is_refused_without_echo(folder: Path) -> None:
    message = error_of(folder, FULL.replace("message_thread_id = 42",
                                            f'message_thread_id = 42\nbot_token = "{TOKEN}"'))
    assert "monitor.toml:21: telegram.bot_token: secrets never live in the config file" in message


def test_a_token_pasted_into_chat_id_or_api_base_is_not_repeated(folder: Path) -> None:
    pasted = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    message = error_of(folder, FULL.replace('"-1001234567890"', f'"{pasted}"')
                       .replace('"http://127.0.0.1:8932"', f'"https://api.telegram.org/bot{pasted}"'))
    assert "telegram.chat_id: chat_id holds what looks like the bot token" in message
    assert "telegram.api_base: api_base contains what looks like the bot token" in message
    assert pasted not in message

def test_a_config_without_a_google_table_says_credentials_are_missing(tmp_path):
    path = tmp_path / "monitor.toml"
    path.write_text('[run]\nbudget = "4m"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path, {})
    assert "no service-account credentials configured" in str(caught.value)
    assert "must be a list" not in str(caught.value)
