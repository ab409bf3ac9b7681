"""The optional external heartbeat: one GET to ``[watchdog] heartbeat_url`` after a good run and
after each healthy watchdog pass, so a service outside this machine (healthchecks.io, Uptime Kuma,
Better Stack, Cronitor) notices when the whole machine is down; and one GET to its failure endpoint
(:func:`failure_url`) after each unhealthy watchdog pass, so that service alerts at once, through its
own channels, also when Telegram is what broke.

Never fatal and never long: errors are logged and swallowed, and the request runs in a daemon
thread that the caller waits for at most ``timeout`` seconds in total, because httpx's timeouts do
not cover a hanging DNS lookup and a run must end within its budget. The URL is a secret of sorts
(anyone holding it can ping), so logs name only its host.
"""

from __future__ import annotations

import logging
import threading
from urllib.parse import urlsplit, urlunsplit

from monitor.notify import lean_httpx  # noqa: F401  before httpx: see its doc

# isort: split

import httpx

from monitor.core.logs import log_event

DEFAULT_TIMEOUT_SECONDS = 5.0  # a ping service answers in milliseconds; a slow one is not our problem


def failure_url(url: str) -> str:
    """The heartbeat URL's failure endpoint, after healthchecks.io's convention (``/fail`` appended to
    the ping URL's path, the query kept)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/fail"))


def ping_heartbeat(url: str, client: httpx.Client | None = None, *, timeout: float = DEFAULT_TIMEOUT_SECONDS
                   ) -> bool:
    """GET ``url``; True when it answered 2xx within ``timeout`` seconds, False otherwise (logged).

    ``client``: an httpx client to use (tests, or a caller that has one); the default is a fresh
    client with ``timeout``, closed afterwards.
    """
    host = urlsplit(url).hostname or "?"
    outcome: dict[str, object] = {}

    def attempt() -> None:
        try:
            if client is not None:
                response = client.get(url, timeout=timeout)
            else:
                with lean_httpx.client(timeout=timeout) as own:
                    response = own.get(url)
            outcome["status"] = response.status_code
        except httpx.HTTPError as exc:
            # Not the exception's text: it may repeat the URL.
            outcome["error"] = type(exc).__name__
        except Exception as exc:  # noqa: BLE001 - a ping must never take the caller down
            outcome["error"] = type(exc).__name__

    worker = threading.Thread(target=attempt, name="heartbeat-ping", daemon=True)
    worker.start()
    worker.join(timeout)
    status = outcome.get("status")
    if isinstance(status, int) and 200 <= status < 300:
        log_event("heartbeat_pinged", host=host, status=status)
        return True
    error = outcome.get("error") or ("timeout" if worker.is_alive() else None)
    log_event("heartbeat_ping_failed", logging.WARNING, host=host, status=status, error=error)
    return False
