"""The run's allocator setting (monitor.app.allocator): glibc held to two arenas, unless told otherwise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from monitor.app.allocator import limit_arenas


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_run_asks_glibc_for_two_arenas():
    assert limit_arenas() is True


def test_an_operators_own_settings_stand(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    assert limit_arenas() is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's arenas")
def test_threads_allocating_at_once_share_the_two_arenas():
    # Each thread that meets another in the heap would get an arena of its own (glibc's "arena" lines
    # in malloc_info); with the limit set first, eight such threads find at most two.
    script = """
import ctypes, threading
from monitor.app.allocator import limit_arenas
limit_arenas()
def churn():
    for _ in range(2000):
        [bytearray(4096) for _ in range(20)]
threads = [threading.Thread(target=churn) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
out = libc.fopen(b"/dev/stdout", b"w")
libc.malloc_info(0, ctypes.c_void_p(out))
libc.fflush(ctypes.c_void_p(out))
"""
    info = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin"}).stdout
    assert 1 <= info.count("<heap nr=") <= 2, info[:400]
