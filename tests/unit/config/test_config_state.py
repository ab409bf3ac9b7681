"""``[state]``: which backend keeps the state, and a Redis URL that never holds the password."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_fixtures import MINIMAL, error_of, load, secrets_folder

from monitor.config.lenient import load_for_watchdog
from monitor.storage import FileLocation
from monitor.storage.configured import configured_location
from monitor.storage.redis_store import RedisLocation


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


def test_without_a_state_section_the_state_is_the_folder(folder: Path) -> None:
    config = load(folder, MINIMAL, env={})
    assert config.state.backend == "file"
    location = configured_location(config.state, config.run.state_dir, {})
    assert isinstance(location, FileLocation) and location.state_dir == config.run.state_dir


def test_redis_with_its_url_and_the_password_from_the_environment(folder: Path) -> None:
    text = MINIMAL + '\n[state]\nbackend = "redis"\nurl = "redis://10.0.0.5:6380/2"\nprefix = "team-a"\n'
    config = load(folder, text, env={})
    location = configured_location(config.state, config.run.state_dir,
                                   {"SHEET_MONITOR_REDIS_PASSWORD": "pw-9f3"})
    assert isinstance(location, RedisLocation)
    assert location.describe() == "Redis 10.0.0.5:6380 db 2 (prefix 'team-a')"
    assert location.client.connection_pool.connection_kwargs["password"] == "pw-9f3"
    assert "pw-9f3" not in repr(location)


def test_a_url_holding_a_password_is_refused_at_its_line_without_showing_it(folder: Path) -> None:
    text = MINIMAL + '\n[state]\nbackend = "redis"\nurl = "redis://:pw-in-file@10.0.0.5:6379/0"\n'
    message = error_of(folder, text)
    assert "monitor.toml:10: state.url: the URL holds a password" in message
    assert "SHEET_MONITOR_REDIS_PASSWORD" in message and "pw-in-file" not in message


@pytest.mark.parametrize(("table", "expected"), [
    ('backend = "redis"', 'backend = "redis" needs the Redis to use'),
    ('backend = "postgres"', "state.backend"),
    ('backend = "redis"\nurl = "http://10.0.0.5"', "expected a Redis URL"),
    ('backend = "redis"\nurl = "redis://h:6379/0"\nprefix = "a b"', "prefix must be letters"),
])
def test_a_state_section_that_cannot_work_is_an_error(folder: Path, table: str, expected: str) -> None:
    assert expected in error_of(folder, MINIMAL + f"\n[state]\n{table}\n")


def test_the_watchdog_reads_the_state_section_of_a_config_broken_elsewhere(folder: Path) -> None:
    text = MINIMAL.replace("not_empty", "no_such_kind") + (
        '\n[state]\nbackend = "redis"\nurl = "redis://10.0.0.5:6379/0"\n')
    path = folder / "monitor.toml"
    path.write_text(text)
    parts = load_for_watchdog(path, {})
    assert parts.broken is not None
    assert parts.state.backend == "redis" and parts.state.url == "redis://10.0.0.5:6379/0"
