"""When the run saves: a lease before each read goes out, and results merged when closer than a window.

A save writes what changed since the previous one (``monitor.state``), so its cost does not grow with
the number of spreadsheets; what remains is the disk's fsync. Results saved closer together than
``every`` seconds are merged: at production pace (a few reads a second at most) each is saved on its
own; a faster run loses at most ``every`` seconds of finished checks to a kill, which the next run
redoes (their results were never published, so nothing is told twice). A merged save is owed, not
dropped: the run saves it as soon as the window has passed, even while it waits on the network.

A task is marked ``processing`` (its lease) and saved before its request goes out (``force``): the
next run must know exactly which reads a killed run had in flight, for the poison guard.
"""

from __future__ import annotations

import math
from collections.abc import Callable


class Checkpoints:
    def __init__(self, save: Callable[[], None], monotonic: Callable[[], float], every: float) -> None:
        self._save = save
        self._monotonic = monotonic
        self._every = every
        self._last = float("-inf")
        self._owed = False  # a save was merged into the next one

    def save(self, force: bool = False) -> None:
        """Save unless the last save is within the merge window (``force``: save regardless)."""
        now = self._monotonic()
        if force or now - self._last >= self._every:
            self._save()
            self._last = now
            self._owed = False
        else:
            self._owed = True

    def save_owed(self) -> None:
        """Make the merged save once its window has passed."""
        if self._owed:
            self.save()

    def owed_in(self) -> float:
        """Seconds until a merged save is due (0 when due now; infinity when none is owed)."""
        if not self._owed:
            return math.inf
        return max(0.0, self._last + self._every - self._monotonic())
