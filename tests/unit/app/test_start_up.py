"""The collector during a run's start-up: off while the state loads, its objects frozen out of later
passes once the run is wired, and everything as it was when the run ends."""

from __future__ import annotations

import gc

import pytest

from monitor.app.start_up import collector_paused

pytestmark = pytest.mark.usefixtures("collector_on")


def test_the_collector_is_off_until_the_run_is_wired_then_on_with_start_ups_objects_frozen():
    with collector_paused() as start_up:
        assert not gc.isenabled()
        made = [[n] for n in range(1000)]  # what loading made
        start_up.done()
        assert gc.isenabled() and gc.get_freeze_count() >= len(made)
    assert gc.isenabled() and gc.get_freeze_count() == 0  # handed back to the collector


def test_a_start_up_that_ends_before_it_is_wired_turns_the_collector_back_on():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("the state cannot be opened")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_the_runs_pause_within_the_commands_is_the_commands():
    with collector_paused() as outer:  # `sheet-monitor run`: from the config's load
        with collector_paused() as inner:  # run_once: from the state's opening
            assert inner is outer
            inner.done()
            assert gc.isenabled()
        assert gc.isenabled() and gc.get_freeze_count() > 0  # frozen until the command ends
    assert gc.get_freeze_count() == 0


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    with collector_paused() as start_up:
        start_up.done()
        assert not gc.isenabled()
    assert not gc.isenabled()
