"""How much memory glibc's allocator keeps for a run's threads: two arenas, not eight per core.

glibc gives a thread that meets another in the heap an arena of its own, up to 8 x the cores, and each
arena keeps what its threads freed for their own reuse. A run's read workers each parse Google's
answers (tens of kilobytes of JSON a read) in whichever arena they were given, so a run with a dozen
workers held a dozen heaps' worth of freed memory: at 5,000 spreadsheets about 20 MB of its peak.
Its threads mostly wait on the network, so two arenas cost no measurable time. Set before any worker
starts (arenas are made as threads first allocate); an operator's own ``MALLOC_ARENA_MAX`` stands.
"""

from __future__ import annotations

import ctypes
import os
import sys

ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Ask glibc for at most ``arenas`` arenas; False where that cannot be asked (not glibc) or the
    environment already says (``MALLOC_ARENA_MAX``, read by glibc itself at start)."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # another C library (musl has no mallopt)
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))
