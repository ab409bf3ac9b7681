"""A Redis of the test's own (``private_redis``), to stop, hang or restart empty without touching the
machine's shared Redis.

``redis-server`` is started on a free port of 127.0.0.1, keeping nothing on disk (``--save ''
--appendonly no``), so a restart comes back empty, as a Redis without persistence does. Without the
binary the tests skip with a reason; when ``CI`` is set they fail instead (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis

_START_SECONDS = 5.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivateRedis:
    """One redis-server process on ``port``; ``url`` reaches it."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.2, socket_timeout=0.2)
        deadline = time.monotonic() + _START_SECONDS
        while True:
            try:
                client.ping()
                return
            except redis.RedisError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.02)

    def kill(self) -> None:
        """What a crash does: the process gone at once, its memory with it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart_empty(self) -> None:
        """A restart without persistence: the same port, no data."""
        self.kill()
        self.start()

    def pause(self) -> None:
        """A Redis that stops answering (stalled, or its network gone): connections stay open."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True, socket_timeout=2)


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    binary = shutil.which("redis-server")
    if binary is None:
        reason = "redis-server is not on the PATH; install it (Debian: apt-get install redis-server)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {reason}")
        pytest.skip(reason)
    server = PrivateRedis(binary)
    server.start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.resume()
            server.kill()
