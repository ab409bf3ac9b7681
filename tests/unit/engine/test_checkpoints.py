"""When the run saves (monitor.engine.checkpoints): merged saves, forced saves, and owed saves.

The merge window is measured on an injected monotonic reading that the tests move by hand.
"""

from __future__ import annotations

import math

import pytest

from monitor.engine.checkpoints import Checkpoints


class Saves:
    """The save callback: counts saves, and can fail once."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.count = 0
        self.fail = fail

    def __call__(self) -> None:
        if self.fail is not None:
            failure, self.fail = self.fail, None
            raise failure
        self.count += 1


class Monotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def saved_once(every: float = 0.2) -> tuple[Checkpoints, Monotonic, Saves]:
    """Checkpoints that have just saved (at monotonic 100.0), their clock and their saves."""
    saves, clock = Saves(), Monotonic()
    points = Checkpoints(saves, clock, every)
    points.save()
    return points, clock, saves


def test_saves_closer_than_the_window_are_merged():
    points, clock, saves = saved_once()
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


def test_a_merged_save_is_owed_until_its_window_passes_then_made():
    points, clock, saves = saved_once()
    assert points.owed_in() == math.inf  # nothing merged yet
    clock.now = 100.05
    points.save()  # merged
    assert saves.count == 1
    assert points.owed_in() == pytest.approx(0.15)
    points.save_owed()  # still inside the window: not yet
    assert saves.count == 1
    clock.now = 100.2
    assert points.owed_in() == 0.0
    points.save_owed()
    assert saves.count == 2
    assert points.owed_in() == math.inf
    points.save_owed()  # nothing owed any more: no save
    assert saves.count == 2


def test_a_forced_save_pays_what_was_owed():
    points, clock, saves = saved_once()
    clock.now = 100.05
    points.save()
    points.save(force=True)
    assert saves.count == 2
    assert points.owed_in() == math.inf


def test_a_failed_save_is_raised_and_the_next_one_is_ordinary():
    points, clock, saves = saved_once()
    saves.fail = OSError(28, "No space left on device")
    clock.now = 100.5
    with pytest.raises(OSError, match="No space left"):
        points.save()
    clock.now = 101.0
    points.save()
    assert saves.count == 2
