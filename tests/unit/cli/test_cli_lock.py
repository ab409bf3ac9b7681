"""The operator commands and the run lock: a change waits briefly for a run and then gives up changing
nothing; readers never need the lock; a change that finds the state damaged repairs it and leaves an
event for the next run's notifier. Through the real CLI, against a real state folder."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from cli_fixtures import A, B, C, invoke, saved_state, seed, state_dir, state_file, write_config

from monitor.engine.events import StateRestored
from monitor.storage import FileLocation


@pytest.fixture
def config(tmp_path):
    path = write_config(tmp_path / "site")
    seed(path)
    return path


def run_lock(config: Path):
    return FileLocation(state_dir(config)).lock()


def state_files(config: Path) -> dict[str, bytes]:
    """Every file that holds part of the state (lock files aside), by name."""
    return {path.name: path.read_bytes() for path in sorted(state_dir(config).iterdir())
            if path.suffix != ".lock"}


@pytest.mark.parametrize("args", [
    ("mute", A, "--for", "1h", "--reason", "x"), ("unmute", A), ("dlq", "retry", A),
    ("dlq", "purge", "--all", "--yes"), ("breakers", "reset", C),
])
def test_a_change_while_a_run_holds_the_lock_waits_then_exits_1_changing_nothing(config, args):
    before = state_files(config)
    lock = run_lock(config)
    assert lock.try_acquire()
    try:
        result = invoke(config, *args, "--wait", "0.1")
    finally:
        lock.release()
    assert result.exit_code == 1
    assert "a run is in progress" in result.stderr
    assert state_files(config) == before


def test_a_change_waits_for_a_run_that_ends_within_the_wait(config):
    lock = run_lock(config)
    assert lock.try_acquire()
    releaser = threading.Timer(0.15, lock.release)
    releaser.start()
    try:
        result = invoke(config, "breakers", "reset", C, "--wait", "5")
    finally:
        releaser.join()
    assert result.exit_code == 0 and "breaker closed" in result.stdout
    assert len(saved_state(config).breakers) == 0


def test_a_change_that_finds_the_state_damaged_restores_it_and_leaves_an_event_for_the_next_run(config):
    state_file(config).write_text("{torn")  # the last good copy and the journal are intact
    result = invoke(config, "unmute", A)
    assert result.exit_code == 0
    state = saved_state(config)
    [event] = state.events
    assert isinstance(event, StateRestored) and event.run_id == "admin-unmute"
    assert A in state.dlq and C in state.breakers  # what the runs had saved came back


def test_a_failing_change_that_restored_the_state_still_leaves_the_event(config):
    state_file(config).write_text("{torn")
    result = invoke(config, "dlq", "purge", B)  # B is not in the DLQ: the command itself fails
    assert result.exit_code == 1
    assert [type(event) for event in saved_state(config).events] == [StateRestored]
    assert A in saved_state(config).dlq  # the failed command changed nothing else


def test_readers_do_not_need_the_lock(config):
    lock = run_lock(config)
    assert lock.try_acquire()
    try:
        for args in (("status",), ("sheets",), ("dlq", "list"), ("dlq", "show", A), ("breakers", "list")):
            assert invoke(config, *args).exit_code == 0, args
    finally:
        lock.release()
