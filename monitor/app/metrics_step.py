"""Publishing the metrics: the textfile node_exporter reads, the Pushgateway, after a run or on demand.

What to publish is ``monitor.admin.metrics``; here is where it goes. Metrics are a view of the run,
never a reason for it to fail: a folder that cannot be written or a Pushgateway that is down costs
one logged warning, and the push is held to what is left of the run's deadline (at most
PUSH_TIMEOUT_SECONDS), in a thread of its own so that even a server dripping its answer cannot hold
the run past it.
"""

from __future__ import annotations

import logging
import socket
import threading
from datetime import datetime
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest, push_to_gateway, write_to_textfile

from monitor.admin.metrics import metrics_registry
from monitor.config import Config, MetricsConfig
from monitor.core.logs import log_event
from monitor.state import State

# A Pushgateway answers a push in milliseconds; this keeps a run within budget + 5 s when it does not.
PUSH_TIMEOUT_SECONDS = 3.0
MIN_PUSH_SECONDS = 0.2  # less than this left of the deadline: the push is not tried (and so logged)


def publish_metrics(config: Config, state: State, now: datetime, seconds_left: float) -> None:
    """The run's one call: write the file and push, as ``[metrics]`` says; never raises."""
    metrics = config.metrics
    if metrics.textfile is None and metrics.pushgateway is None:
        return
    try:
        registry = metrics_registry(state, config, now)  # collected when written, below
        if metrics.textfile is not None:
            write_textfile(metrics.textfile, registry)
        if metrics.pushgateway is not None:
            push(metrics, registry, min(PUSH_TIMEOUT_SECONDS, seconds_left))
    except Exception as exc:  # noqa: BLE001 - the metrics must never fail the run they describe
        log_event("metrics_failed", logging.WARNING, exc_info=exc, error=repr(exc)[:300])


def exposition(registry: CollectorRegistry) -> str:
    """The registry in Prometheus' text format, as node_exporter and the Pushgateway read it."""
    return generate_latest(registry).decode()


def write_textfile(path: Path, registry: CollectorRegistry) -> bool:
    """Write atomically (a temporary file in the same folder, then a rename: node_exporter never
    reads half a file, and reads only ``*.prom``, so a leftover temporary file is ignored). False,
    with one warning logged, when it cannot be written."""
    try:
        write_to_textfile(str(path), registry)
    except OSError as exc:
        log_event("metrics_file_not_written", logging.WARNING, path=str(path),
                  error=f"{type(exc).__name__}: {exc.strerror or exc}",
                  fix="make the folder exist and writable by the monitor's user, or change "
                      "[metrics] textfile")
        return False
    return True


def push(metrics: MetricsConfig, registry: CollectorRegistry, timeout: float) -> bool:
    """PUT the registry to the Pushgateway as the group job=<job>, instance=<this host>, replacing
    the group's previous push. False, with one warning logged, when it failed or took too long."""
    url, instance = metrics.pushgateway, metrics.instance or socket.gethostname()
    if timeout < MIN_PUSH_SECONDS:
        log_event("metrics_push_skipped", logging.WARNING, pushgateway=url,
                  reason="no time left before the run's deadline")
        return False
    failure: list[str] = []

    def send() -> None:
        try:
            push_to_gateway(url, job=metrics.job, registry=registry,
                            grouping_key={"instance": instance}, timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - urllib's errors, a bad answer: all one warning
            failure.append(f"{type(exc).__name__}: {exc}")

    # The socket timeout bounds each read and write, not the whole exchange: the join bounds that.
    # A push still out is left to its daemon thread, which dies with the process.
    thread = threading.Thread(target=send, name="metrics-push", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        failure.append(f"no answer within {timeout:.1f} s")
    if failure:
        log_event("metrics_push_failed", logging.WARNING, pushgateway=url, job=metrics.job,
                  instance=instance, error=failure[0][:300],
                  fix="check that the Pushgateway runs and [metrics] pushgateway is its URL")
        return False
    return True
