"""A state folder whose writes fail at the os level, as on a read-only filesystem or a full disk."""

from __future__ import annotations

import os
from pathlib import Path

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT


def fail_writes_under(monkeypatch, folder: Path, code: int) -> None:
    """Every os-level write under ``folder`` fails with ``code``: opening a file to write or create
    it, appending, syncing (what a read-only filesystem or a full disk refuses)."""
    real_open, real_write = os.open, os.write
    strerror = os.strerror(code)

    def refusing_open(path, flags, *args, **kwargs):
        if flags & _WRITE_FLAGS and str(path).startswith(str(folder)):
            raise OSError(code, strerror, str(path))
        return real_open(path, flags, *args, **kwargs)

    def refusing(*args, **kwargs):
        raise OSError(code, strerror)

    monkeypatch.setattr(os, "open", refusing_open)
    monkeypatch.setattr(os, "write",
                        lambda fd, data: refusing() if _under(fd, folder) else real_write(fd, data))
    for call in ("fsync", "fdatasync"):
        real = getattr(os, call)
        monkeypatch.setattr(os, call, lambda fd, real=real: refusing() if _under(fd, folder) else real(fd))


def _under(fd: int, folder: Path) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder))
    except OSError:
        return True  # no /proc: treat every descriptor as the state's
