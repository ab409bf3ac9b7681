"""When the run saves (monitor.engine.checkpoints): merged saves, forced saves, and the lease timer.

The merge window is measured on an injected monotonic reading that the tests move by hand. The lease
timer waits in real time (a ``threading.Timer``), so those tests use windows of a few hundredths of a
second and never wait more than a fraction of one.
"""

from __future__ import annotations

import threading
import time

import pytest

from monitor.engine.checkpoints import Checkpoints

WINDOW = 0.05  # real seconds, for the lease timer


class Saves:
    """The save callback: counts saves, notes the thread each ran in, and can fail or take time."""

    def __init__(self, *, fail: BaseException | None = None, lasts: float = 0.0) -> None:
        self.count = 0
        self.threads: list[str] = []
        self.fail = fail
        self.lasts = lasts
        self.started = threading.Event()
        self.finished = threading.Event()

    def __call__(self) -> None:
        self.started.set()
        time.sleep(self.lasts)
        if self.fail is not None:
            failure, self.fail = self.fail, None
            raise failure
        self.count += 1
        self.threads.append(threading.current_thread().name)
        self.finished.set()

    def forget_events(self) -> None:
        self.started.clear()
        self.finished.clear()


class Monotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def checkpoints(saves: Saves, every: float = 0.2) -> tuple[Checkpoints, Monotonic]:
    clock = Monotonic()
    return Checkpoints(saves, clock, every), clock


def saved_once(every: float = 0.2) -> tuple[Checkpoints, Monotonic, Saves]:
    """Checkpoints that have just saved (at monotonic 100.0), their clock and their saves."""
    saves = Saves()
    points, clock = checkpoints(saves, every)
    points.save()
    saves.forget_events()
    return points, clock, saves


def test_saves_closer_than_the_window_are_merged():
    saves = Saves()
    points, clock = checkpoints(saves)
    points.save()
    assert saves.count == 1  # the first save always happens
    for at, count in [(100.1, 1), (100.199, 1), (100.2, 2), (100.3, 2), (100.4, 3)]:
        clock.now = at
        points.save()
        assert saves.count == count, at


def test_a_forced_save_saves_regardless_and_starts_a_new_window():
    points, clock, saves = saved_once()
    clock.now = 100.1
    points.save(force=True)
    assert saves.count == 2
    clock.now = 100.25  # 0.25 s after the first save, but only 0.15 s after the forced one
    points.save()
    assert saves.count == 2
    clock.now = 100.3
    points.save()
    assert saves.count == 3


def test_a_lease_is_saved_at_once_when_the_last_save_is_older_than_the_window():
    points, clock, saves = saved_once()
    clock.now = 100.2
    with points.lease_saved():
        assert saves.count == 2  # before the request goes out
        assert saves.threads[-1] == threading.current_thread().name
    assert saves.count == 2


def test_a_request_ending_within_the_window_costs_no_save():
    points, _, saves = saved_once(every=WINDOW)
    with points.lease_saved():
        pass  # the request answered at once
    time.sleep(2 * WINDOW)  # long enough for a timer that was not cancelled to fire
    assert saves.count == 1


def test_a_request_outlasting_the_window_has_its_lease_saved_while_it_waits():
    points, _, saves = saved_once(every=WINDOW)
    with points.lease_saved():
        assert saves.finished.wait(timeout=1.0), "the lease was never saved"
        assert saves.count == 2  # saved while the request was still in flight...
        assert saves.threads[-1] != threading.current_thread().name  # ...by the timer
    assert saves.count == 2


def test_the_request_that_ends_during_a_lease_save_waits_for_it_to_finish():
    points, _, saves = saved_once(every=WINDOW)
    saves.lasts = 0.1
    with points.lease_saved():
        assert saves.started.wait(timeout=1.0)
    # The run changes the state next: the timer's save must be complete by then.
    assert saves.finished.is_set() and saves.count == 2


def test_a_failed_lease_save_is_raised_by_the_next_save_even_within_the_window():
    points, clock, saves = saved_once(every=WINDOW)
    saves.fail = OSError(28, "No space left on device")
    with points.lease_saved():
        time.sleep(3 * WINDOW)  # the timer fires and its save fails
    # Not the task's failure: the body ended normally, and the run learns it at its next save.
    with pytest.raises(OSError, match="No space left"):
        points.save()
    assert saves.count == 1
    clock.now += 2 * WINDOW
    points.save()  # raised once: the next save is an ordinary one
    assert saves.count == 2


def test_a_failed_immediate_lease_save_is_raised_by_the_next_save():
    points, clock, saves = saved_once()
    clock.now = 101.0
    saves.fail = OSError(28, "No space left on device")
    with points.lease_saved():
        pass
    with pytest.raises(OSError, match="No space left"):
        points.save(force=True)
