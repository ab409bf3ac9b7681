"""The machine's Redis for the Redis backend's tests: ``redis_location``, a fresh key prefix per test.

Redis is at ``SHEET_MONITOR_TEST_REDIS`` (default redis://127.0.0.1:6379/0). Without one, the tests
that need it skip with a one-line reason, on a laptop; when ``CI`` is set they fail instead, so CI
can never pass by skipping them (``.ci/run`` makes sure a Redis answers first). Each test works under
its own prefix and deletes its keys at the end: tests running at once never meet.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import redis

from monitor.storage.redis_store import RedisLocation

REDIS_URL = os.environ.get("SHEET_MONITOR_TEST_REDIS", "redis://127.0.0.1:6379/0")


def redis_or_skip() -> None:
    """Skip (fail under CI) unless a Redis answers at ``REDIS_URL``."""
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5).ping()
    except redis.RedisError as exc:
        reason = f"no Redis at {REDIS_URL} ({type(exc).__name__}); start redis-server to run this test"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {reason}")
        pytest.skip(reason)


def new_prefix() -> str:
    return f"sheet-monitor-test:{uuid.uuid4().hex}"


def delete_prefix(prefix: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
    if keys:
        client.delete(*keys)


@pytest.fixture
def redis_location() -> Iterator[RedisLocation]:
    redis_or_skip()
    prefix = new_prefix()
    yield RedisLocation(REDIS_URL, prefix=prefix)
    delete_prefix(prefix)
