"""How many reads are worth having out: Little's law over the read's latency and the run's own time
per read, and the measure of that own time."""

from __future__ import annotations

import pytest

from monitor.core.clock import ManualClock
from monitor.engine.concurrency import FEWEST_OUT, OwnPace, reads_worth_keeping_out


@pytest.mark.parametrize("read_seconds, own_seconds, ceiling, worth", [
    (0.4, 0.005, 64, 64),  # Google's latency: the thread takes in 80 while one is out; the ceiling
    (0.02, 0.005, 64, 16),  # a server answering in 20 ms: four times the 4 it applies meanwhile
    (0.0005, 0.005, 64, FEWEST_OUT),  # answers faster than they are applied: a handful still
    (0.02, 0.005, 2, 2),  # never above the ceiling, even the fewest
    (0.4, None, 64, FEWEST_OUT),  # not measured yet: the fewest, until the first reads are applied
    (0.4, 0.0, 64, 64),  # a clock that stands still while the thread works: the ceiling
])
def test_reads_worth_keeping_out(read_seconds, own_seconds, ceiling, worth):
    assert reads_worth_keeping_out(read_seconds, own_seconds, ceiling) == worth


def test_the_run_s_own_time_per_read_leaves_out_its_waits_and_the_time_with_nothing_out():
    clock = ManualClock()
    pace = OwnPace(clock.monotonic)
    clock.advance(5.0)  # building the round, before any read is out: nobody's
    pace.first_out()
    clock.advance(0.01)  # handing reads out
    with pace.waiting():
        clock.advance(0.3)  # for their answers
    clock.advance(0.03)  # applying them
    pace.applied(4)
    assert pace.per_read == pytest.approx(0.01)  # (0.01 + 0.03) / 4
    clock.advance(0.02)
    pace.applied(1)  # one more, 20 ms of its own: the estimate moves a fifth of the way
    assert pace.per_read == pytest.approx(0.01 + 0.2 * (0.02 - 0.01))
    pace.applied(0)  # nothing applied: nothing learnt
    assert pace.per_read == pytest.approx(0.012)
