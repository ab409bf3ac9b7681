"""The garbage collector during a run's start-up: paused while the state loads, then kept off it.

Opening the state of 20,000 spreadsheets makes about a million objects (the snapshot's strings, every
document and its fields) that all live until the run ends, and the plans add more. The collector,
counting allocations, ran its full passes over them again and again while they were made, and found
nothing to free: a third of a second of the start-up, before the first read. So it is paused from
the run command's import (``sheet-monitor run``, monitor.cli.main), the config's load or the
state's opening (``run_once``) until the run is wired, and what start-up made is then frozen
(``gc.freeze``: moved out of every later pass; documents are values, freed by their reference
counts when replaced) until the run ends, when it is handed back to the collector for whatever else
the process does (the demo, tests).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class StartUp:
    """Ends the pause: :meth:`done` once the run is wired."""

    def __init__(self, collecting: bool) -> None:
        self.collecting = collecting  # the collector was on before the pause
        self.frozen = False

    def done(self) -> None:
        if not self.frozen:
            gc.freeze()
            self.frozen = True
            if self.collecting:
                gc.enable()


# The pause in force: the collector is the process's, so a pause within another (the run's within
# the command's, which pauses it for the config's load too) is that one.
_pausing: list[StartUp] = []


@contextmanager
def collector_paused() -> Iterator[StartUp]:
    """The collector paused until ``done()`` (or the block's end), the start-up's objects out of its
    passes until the block ends. A collector the caller had turned off stays off."""
    if _pausing:
        yield _pausing[-1]
        return
    start_up = StartUp(gc.isenabled())
    gc.disable()
    _pausing.append(start_up)
    try:
        yield start_up
    finally:
        _pausing.pop()
        if start_up.frozen:
            gc.unfreeze()
        if start_up.collecting:
            gc.enable()
