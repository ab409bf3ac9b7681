"""Shared by the metrics tests: a small HTTP receiver standing in for a Pushgateway, and the written
metrics read back with prometheus_client's own parser."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client.parser import text_string_to_metric_families


@dataclass
class Received:
    method: str
    path: str
    content_type: str
    body: str


@dataclass
class Receiver:
    url: str
    requests: list[Received] = field(default_factory=list)


@contextmanager
def pushgateway(status: int = 200, hang: threading.Event | None = None) -> Iterator[Receiver]:
    """A Pushgateway's door on 127.0.0.1 in a thread: records each request and answers ``status``;
    with ``hang``, holds every answer until that event is set (set when the block ends)."""
    received: list[Received] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length", 0))
            received.append(Received("PUT", self.path, self.headers.get("Content-Type", ""),
                                     self.rfile.read(length).decode()))
            if hang is not None:
                hang.wait(10)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_PUT  # noqa: N815

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Receiver(f"http://127.0.0.1:{server.server_address[1]}", received)
    finally:
        if hang is not None:
            hang.set()
        server.shutdown()
        server.server_close()


def families(text: str) -> dict:
    """name -> family, as Prometheus' client parses the text (a counter's name without ``_total``)."""
    return {family.name: family for family in text_string_to_metric_families(text)}


def values(family) -> dict[tuple, float]:
    """(sample name, its labels' values in label order) -> value."""
    return {(sample.name, *sample.labels.values()): sample.value for sample in family.samples}


def labelled(family, label: str) -> dict[str, float]:
    return {sample.labels[label]: sample.value for sample in family.samples}
