"""Headless Chromium driven over the DevTools protocol on a pipe: open a page, read its console
errors, ask the DOM, take a screenshot. Used by the demo (its screenshot) and the page's tests.

Why not a library: Chromium speaks the protocol on file descriptors 3 and 4 (``--remote-debugging-pipe``,
messages as JSON ended by a NUL byte), so the standard library is all it takes: no websocket client,
no port to find or to leave open, and no browser download (playwright's way); the machine's
``chromium`` package is the browser. Five methods of the protocol are used, each one line here.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"


class BrowserError(RuntimeError):
    """Chromium is missing, did not start, or answered an error."""


def chromium_path() -> str | None:
    """The Chromium to drive: Debian's package, else one on the PATH; None when there is none."""
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one tab; use as a context manager (the process is ended on exit)."""

    def __init__(self, width: int = 1280, height: int = 900, timeout: float = 30.0) -> None:
        executable = chromium_path()
        if executable is None:
            raise BrowserError("no Chromium found (install Debian's package: apt-get install chromium)")
        self.timeout = timeout
        self.console_errors: list[str] = []
        self._profile = tempfile.TemporaryDirectory(prefix="sheet-monitor-chromium-")
        to_browser, self._send_fd = os.pipe()
        self._recv_fd, from_browser = os.pipe()
        self._buffer = b""
        self._next_id = 0

        def on_fds_3_and_4() -> None:  # in the child: the protocol's descriptors, inheritable
            first, second = os.dup(to_browser), os.dup(from_browser)
            os.dup2(first, 3)
            os.dup2(second, 4)

        self._process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", f"--user-data-dir={self._profile.name}",
             f"--window-size={width},{height}", "about:blank"],
            preexec_fn=on_fds_3_and_4, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 700})
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def open(self, url: str) -> None:
        """Navigate and wait for the page's load event."""
        self.call("Page.navigate", {"url": url})
        self._wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able)."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in answer:
            raise BrowserError(f"{expression!r} threw: {answer['exceptionDetails'].get('text')}")
        return answer["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = True) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", params)["data"]))

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if getattr(self, "_session", None) and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self._session
        os.write(self._send_fd, json.dumps(message).encode() + b"\0")
        answer = self._wait_for(None, self._next_id)
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error'].get('message')}")
        return answer.get("result", {})

    def close(self) -> None:
        try:
            if self._process.poll() is None:
                os.write(self._send_fd, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
                self._process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
        finally:
            os.close(self._send_fd)
            os.close(self._recv_fd)
            self._profile.cleanup()

    def _wait_for(self, event: str | None, answer_id: int | None = None) -> dict[str, Any]:
        """Read messages until ``event`` arrives (or the answer to ``answer_id``), noting console errors."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            message = self._receive(deadline)
            self._note(message)
            if (answer_id is not None and message.get("id") == answer_id) or message.get("method") == event:
                return message
        raise BrowserError(f"Chromium did not answer within {self.timeout:g} s (waiting for "
                           f"{event or f'answer {answer_id}'})")

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            # A hung browser must not hang its caller: wait for bytes no longer than the deadline.
            ready, _, _ = select.select([self._recv_fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                raise BrowserError(f"Chromium did not answer within {self.timeout:g} s")
            chunk = os.read(self._recv_fd, 1 << 16)
            if not chunk:
                raise BrowserError("Chromium closed the DevTools pipe (it exited)")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def _note(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.console_errors.append(" ".join(str(arg.get("value", arg.get("description", "")))
                                                for arg in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            self.console_errors.append(params["exceptionDetails"].get("text", "an exception"))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.console_errors.append(params["entry"].get("text", ""))
