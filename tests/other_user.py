"""Running code as another user than the test's, for what chmod cannot show to root: a state folder of
another owner, mode 0700, as a command typed by someone else (or a watchdog) meets it.

``as_nobody(call)`` forks; the child drops to ``nobody`` (uid and gid 65534, no groups) and returns
``call()``'s (picklable) value, or the traceback of what it raised. The interpreter's own files may be
out of that user's reach (a Python under /root): the child runs only what the parent imported, so run
the same code once as the test's user first (a command then loads everything it imports lazily).

Plain helpers, not fixtures.
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

NOBODY = 65534
AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="only root can run a process as another user")


def as_nobody(call: Callable[[], Any]) -> Any:
    """``call()`` run by ``nobody`` in a child process; an exception there fails the test with its
    traceback."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            answer = ("returned", call())
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            answer = ("raised", "".join(traceback.format_exception(exc)))
        with os.fdopen(write_end, "wb") as out:
            out.write(pickle.dumps(answer))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answers:
        data = answers.read()
    os.waitpid(pid, 0)
    kind, value = pickle.loads(data)
    assert kind == "returned", value
    return value


@contextmanager
def open_folder() -> Iterator[Path]:
    """A folder every user may enter (pytest's tmp_path is its owner's alone), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="sheet-monitor-other-user-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
