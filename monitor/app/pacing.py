"""The quota pacer a run uses: its own log on the file backend, every runner's on Redis.

On the file backend one machine runs the monitor, and the pacer's log in memory (carried between runs
in the state's ``quota`` document) is the whole truth. On Redis several runners may read through the
same credentials and projects, so the pacer asks the log they share (``storage.redis_quota``, under
``[state] quota_prefix``) for every send. Credentials are named there by their service account, as
Google counts them, so that runners whose configs name one key file by different paths share it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from monitor.config import Config
from monitor.engine.pacer import QuotaPacer
from monitor.engine.shared_pacer import SharedQuotaPacer
from monitor.state import State
from monitor.storage import StateError
from monitor.storage.location import StateLocation


class NoQuotaLeft(Exception):
    """Every credential used its quota in the last minute: try again in ``wait`` seconds."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"every credential used its quota in the last minute; try again in {wait:.0f} s")
        self.wait = wait


def quota_pacer(config: Config, location: StateLocation) -> QuotaPacer:
    """The pacer for a run on ``location``: shared through it when it is a Redis."""
    from monitor.storage.configured import is_redis

    if not is_redis(location):
        return QuotaPacer.from_config(config)
    from monitor.storage.redis_quota import RedisQuotaLog

    local = QuotaPacer.from_config(config)  # only for its window and limits, as the log must count
    shared_log = RedisQuotaLog(location, prefix=config.state.quota_keys, window=local.window_with_margin,
                               credential_limit=local.per_credential - local.reserve,
                               project_limit=local.per_project - local.reserve)
    return SharedQuotaPacer.from_config(config, shared_log, service_accounts(config.google.credentials))


def service_accounts(credentials: tuple[Path, ...]) -> Mapping[str, str]:
    """Each key file's service account (its ``client_email``), by the path the config names; a file
    that cannot be read here keeps its path (the run refuses it as it reads, and says why)."""
    accounts = {}
    for path in credentials:
        try:
            email = json.loads(path.read_text(encoding="utf-8")).get("client_email")
        except (OSError, ValueError, AttributeError):
            email = None
        accounts[str(path)] = email if isinstance(email, str) and email else str(path)
    return accounts


def command_pacer(config: Config, location: StateLocation, saved: State | None) -> QuotaPacer:
    """The pacer an operator's command reads through (`check`, `suggest`): the runs', holding what
    they sent in the last minute (``saved``'s quota log; on Redis the log the runners share, which so
    counts the command's reads for them), so that a command typed between runs never pushes a run
    into a 429. The config's quotas alone when the state cannot be reached: the log is only a hint,
    and an unreachable state is `status`'s business."""
    try:
        pacer = quota_pacer(config, location)
    except StateError:
        return QuotaPacer.from_config(config)
    if saved is not None:
        pacer.restore(saved.quota)
    return pacer
