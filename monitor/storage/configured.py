"""The location a config names: the state folder (``[state] backend = "file"``) or a Redis.

The Redis client is imported only when the config chooses Redis, so a file-backed process never
loads it. The password is read from the environment the caller passes (a composition root's), under
the name ``[state] password_env`` gives.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from monitor.config import Config, StateConfig
from monitor.storage.location import FileLocation, StateLocation


def state_location(config: Config, environ: Mapping[str, str] = os.environ) -> StateLocation:
    """Where ``config``'s runner keeps its state: the one way from a config to its state, so that
    every command reads the state the runs write (a folder path passed on its own would be read even
    when the runs write to Redis)."""
    return configured_location(config.state, config.run.state_dir, environ)


def configured_location(state: StateConfig, state_dir: Path, environ: Mapping[str, str]) -> StateLocation:
    """Where the runner's state lives, as ``[state]`` (and ``[run] state_dir``) say: for a process that
    has those sections without a whole config (the watchdog); the rest use ``state_location``."""
    if state.backend == "file" or state.url is None:
        return FileLocation(state_dir)
    from monitor.storage.redis_store import RedisLocation

    # The host's state folder remembers the generation it saw on Redis: a Redis that comes back
    # without it lost the monitor's memory (monitor.storage.generations).
    return RedisLocation(state.url, prefix=state.prefix, password=environ.get(state.password_env) or None,
                         memory_dir=state_dir)


def describe_location(location: StateLocation) -> str:
    """Where a state lives, for messages: a folder's path, or the Redis and prefix (no password)."""
    if isinstance(location, FileLocation):
        return str(location.state_dir)
    describe = getattr(location, "describe", None)
    return describe() if describe is not None else repr(location)


def is_redis(location: StateLocation) -> bool:
    """Whether ``location`` is a Redis (without loading the Redis client for a folder)."""
    return not isinstance(location, FileLocation) and hasattr(location, "client")
