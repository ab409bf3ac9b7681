"""When the run saves: after each task, merged when closer than a window, and a lease before any long request.

A save writes what changed since the previous one (``monitor.state``), so its cost does not grow with
the number of spreadsheets; what remains is the disk's fsync. Saves closer together than
``every`` seconds are merged: at production pace (one read per 0.2 s at most) each task is saved on
its own; a faster run loses at most ``every`` seconds of finished checks to a kill, which the next run
redoes (their results were never published, so nothing is told twice).

A task is marked ``processing`` (its lease) before its request. That lease must be on disk if the
process is killed during the request, or the poison guard could not count the interruption. When the
last save is too recent to save again, :meth:`Checkpoints.lease_saved` arms a timer that saves once the
merge window has passed, if the request is still in flight. The main thread is then blocked on the
network and touches no state; it joins the timer before changing anything again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Checkpoints:
    def __init__(self, save: Callable[[], None], monotonic: Callable[[], float], every: float) -> None:
        self._save = save
        self._monotonic = monotonic
        self._every = every
        self._last = float("-inf")
        self._deferred_failure: list[BaseException] = []  # from the lease timer's thread

    def save(self, force: bool = False) -> None:
        """Save unless the last save is within the merge window (``force``: save regardless)."""
        if self._deferred_failure:  # a deferred lease save failed: fail as an immediate one would have
            failure, self._deferred_failure = self._deferred_failure[0], []
            raise failure
        now = self._monotonic()
        if force or now - self._last >= self._every:
            self._save()
            self._last = now

    @contextmanager
    def lease_saved(self) -> Iterator[None]:
        """Around a task's requests: its ``processing`` lease is on disk before any request that lasts.

        A request that ends within the merge window (nearly all of them) costs no save; one that
        hangs, or is killed after the window, has its lease saved.
        """

        def save_lease() -> None:
            try:
                self.save(force=True)
            except BaseException as exc:  # noqa: BLE001 - raised by the run's next save, not as the
                self._deferred_failure.append(exc)  # task's failure (nor lost in the timer thread)

        wait = self._every - (self._monotonic() - self._last)
        if wait <= 0:
            save_lease()
            yield
            return
        timer = threading.Timer(wait, save_lease)
        timer.daemon = True  # a run killed mid-request must not be kept alive by its timer
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            timer.join()  # a save under way must finish before this thread changes the state again
