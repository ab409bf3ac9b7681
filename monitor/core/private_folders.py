"""Folders that hold private files (the state, service-account keys): the owner's alone, 0700.

A folder created here is 0700 whatever the umask. One that already exists and that others may enter
is made 0700 too when it holds nothing but files its caller recognises as its own: the shipped
``state/`` as git or an archive left it (0755, with its README), a keys folder made by ``mkdir``.
Nobody else has a use for such a folder, each file in it being 0600 anyway, and git keeps no
folder's mode, so only the code that uses the folder can make the docs' 0700 true. A folder that holds
other files (a home folder, a site's root, /tmp) was chosen to be shared: it keeps its mode, and
:func:`shared_folder_problem` says so, with the fix.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
_OTHERS = 0o077  # the group's and everyone else's bits
_NAMED = 3  # a problem names a few of the files that are not the caller's; the rest are counted


def ensure_private_dir(path: Path, own: Callable[[str], bool]) -> int | None:
    """Create ``path`` (with parents) 0700 if it is missing, or make it 0700 when others may enter it
    and every name in it is ``own``. Returns the mode it had when it was made private (None: created,
    private already, or left as it was). A folder whose mode this user cannot change is left to the
    caller's own writes, which fail saying why when they cannot write either."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        os.chmod(path, PRIVATE_DIR_MODE)  # mkdir's mode is filtered through the umask; say what we mean
        return None
    mode = others_may_enter(path)
    if mode is None or not_own(path, own):
        return None
    try:
        os.chmod(path, PRIVATE_DIR_MODE)
    except OSError:  # another owner's folder, a read-only filesystem: the caller's writes say what is wrong
        return None
    return mode


def others_may_enter(path: Path) -> int | None:
    """The folder's mode when its group or everyone has any right to it; None when it is private."""
    mode = stat.S_IMODE(path.stat().st_mode)
    return mode if mode & _OTHERS else None


def not_own(path: Path, own: Callable[[str], bool]) -> list[str]:
    """The names in ``path`` that are not ``own``, sorted ([] when it cannot be listed)."""
    try:
        return sorted(name for name in os.listdir(path) if not own(name))
    except OSError:
        return []


def shared_folder_problem(path: Path, own: Callable[[str], bool], what: str) -> str | None:
    """Why ``path`` (``what``: "the state folder") is not private, with the fix; None when it is."""
    try:
        mode = others_may_enter(path)
    except OSError:
        return None  # missing or unreadable: whoever writes there says why
    if mode is None:
        return None
    others = not_own(path, own)
    holding = ""
    if others:
        more = f" and {len(others) - _NAMED} more" if len(others) > _NAMED else ""
        holding = (f" and holds files that are not the monitor's ({', '.join(others[:_NAMED])}{more}), "
                   "so its mode was left as it is")
    return (f"{what} {path} can be entered by others (mode {mode:04o}){holding}: the monitor's files in it "
            f"are 0600, but anyone who may enter it sees their names. Give the monitor a folder of its "
            f"own, or run chmod 700 {path}")
