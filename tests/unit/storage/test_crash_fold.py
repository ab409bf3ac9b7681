"""Runs dying mid-round, folded into one notice per outage (``monitor.notify.crashes``): pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from notify_helpers import stored, went_bad

from monitor.engine.events import CrashRecovered, RunsFinishAgain
from monitor.notify.crashes import QUIET_AFTER_CRASHES, fold_crashes
from monitor.notify.documents import AlertMemory

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def crash(minutes: float, reclaimed: int = 2, poisoned: int = 0) -> CrashRecovered:
    return CrashRecovered(at=NOW + timedelta(minutes=minutes), run_id=f"run-{minutes}",
                          previous_run_id=None, reclaimed=reclaimed, poisoned=poisoned)


def test_the_first_crash_is_told_and_the_next_ones_of_the_outage_only_counted():
    first, other = crash(0), went_bad("s1")
    events, memory = fold_crashes([other, first], AlertMemory(), NOW)
    assert events == [other, first]  # told, where it stood
    memory = stored(memory)  # the fold outlives the runs that die
    events, memory = fold_crashes([crash(5), crash(10, poisoned=1)], memory, NOW + timedelta(minutes=10))
    assert events == []
    assert (memory.crashes.runs, memory.crashes.reclaimed, memory.crashes.poisoned) == (3, 6, 1)
    assert memory.crashes.first_at == NOW and memory.crashes.last_at == NOW + timedelta(minutes=10)


def test_several_crashes_in_one_pass_open_the_outage_with_the_first_told():
    events, memory = fold_crashes([crash(0), crash(1)], AlertMemory(), NOW + timedelta(minutes=1))
    assert events == [crash(0)] and memory.crashes.runs == 2


def test_the_outage_ends_after_the_quiet_time_with_one_line_when_deaths_went_untold():
    _, memory = fold_crashes([crash(0), crash(5)], AlertMemory(), NOW + timedelta(minutes=5))
    almost = NOW + timedelta(minutes=5) + QUIET_AFTER_CRASHES - timedelta(seconds=1)
    assert fold_crashes([], memory, almost) == ([], memory)
    events, after = fold_crashes([], memory, almost + timedelta(seconds=1), "run-9")
    [ended] = events
    assert isinstance(ended, RunsFinishAgain) and (ended.runs, ended.reclaimed) == (2, 4)
    assert ended.first_at == NOW and ended.last_at == NOW + timedelta(minutes=5)
    assert after.crashes is None


def test_a_single_crash_ends_in_silence_its_one_message_said_it_all():
    _, memory = fold_crashes([crash(0)], AlertMemory(), NOW)
    events, after = fold_crashes([], memory, NOW + QUIET_AFTER_CRASHES)
    assert events == [] and after.crashes is None
