"""How much memory glibc's allocator keeps for a run: two arenas, and large blocks given back at once.

- **Arenas.** glibc gives a thread that meets another in the heap an arena of its own, up to 8 x the
  cores, and each arena keeps what its threads freed for their own reuse. A run's read workers each
  parse Google's answers (tens to hundreds of kilobytes of JSON a read) in whichever arena they were
  given, so a run with a dozen workers held a dozen heaps' worth of freed memory. Its threads mostly
  wait on the network, so two arenas cost no measurable time.
- **Large blocks.** A block of 128 KiB or more (an answer's text, its decoded copy) is mapped on its
  own and unmapped when freed; but glibc raises that threshold each time such a block is freed, up to
  32 MiB, after which every answer's buffers come from the heap and leave it fragmented. The
  threshold is fixed at its default, which stops it moving.

At 5,000 spreadsheets, a run's peak fell from ~130 MB to ~121 MB with the arenas and to ~113 MB with
the threshold too (bench/run_memory.py). Set before any worker starts (arenas are made as threads
first allocate); an operator's own ``MALLOC_ARENA_MAX`` or ``MALLOC_MMAP_THRESHOLD_`` stands.
"""

from __future__ import annotations

import ctypes
import os
import sys

ARENAS = 2
MMAP_THRESHOLD = 128 * 1024  # glibc's default, fixed: see the module doc
_M_ARENA_MAX, _M_MMAP_THRESHOLD = -8, -3  # glibc's malloc.h


def limit_arenas(arenas: int = ARENAS, mmap_threshold: int = MMAP_THRESHOLD) -> bool:
    """Ask glibc for at most ``arenas`` arenas and a fixed ``mmap_threshold``; False where that cannot
    be asked (not glibc), and each setting the environment already gives is left to it (glibc reads
    ``MALLOC_ARENA_MAX`` and ``MALLOC_MMAP_THRESHOLD_`` itself at start)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # another C library (musl has no mallopt)
        return False
    asked = False
    if "MALLOC_ARENA_MAX" not in os.environ:
        asked = bool(mallopt(_M_ARENA_MAX, arenas))
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        asked = bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) or asked
    return asked
