"""A state folder the monitor cannot write: another user's, on a read-only filesystem, on a full disk.

Each ends in one line on stderr that says what, where and how to fix it, and exit 1, never a
traceback; and the state stays as the last save left it: it opens to that state, with every task.
The failures are injected at the file backend's os-level writes (a read-only folder through chmod
too, where chmod binds: not for root).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from cli_fixtures import A, B, C, invoke, saved_state, seed, state_dir, write_config
from failing_disk import fail_writes_under

from monitor.storage import StateWriteError
from monitor.storage.writability import folder_problem

AS_ROOT = os.geteuid() == 0


@pytest.fixture
def config(tmp_path):
    path = write_config(tmp_path / "site")
    seed(path)
    return path


def tasks_of(config: Path) -> dict[str, str]:
    return {task.target: task.status for task in saved_state(config).round.tasks.values()}


def test_a_run_on_a_full_disk_exits_1_saying_so_and_the_state_keeps_its_last_save(config, monkeypatch):
    before = tasks_of(config)
    fail_writes_under(monkeypatch, state_dir(config), errno.ENOSPC)
    result = invoke(config, "run")
    monkeypatch.undo()
    assert result.exit_code == 1
    assert "no space left on the device holding the state folder" in result.stderr
    assert f"df -h {state_dir(config)}" in result.stderr and "Traceback" not in result.stderr
    assert tasks_of(config) == before  # nothing lost, nothing half written
    assert set(before) == {A, B, C}


def test_a_run_on_a_read_only_filesystem_exits_1_naming_the_folder_and_the_fix(config, monkeypatch):
    before = tasks_of(config)
    fail_writes_under(monkeypatch, state_dir(config), errno.EROFS)
    result = invoke(config, "run")
    monkeypatch.undo()
    assert result.exit_code == 1
    assert f"the state folder {state_dir(config)} is on a read-only filesystem" in result.stderr
    assert "mount -o remount,rw" in result.stderr
    assert tasks_of(config) == before


def test_mute_on_a_read_only_filesystem_exits_1_changing_nothing(config, monkeypatch):
    fail_writes_under(monkeypatch, state_dir(config), errno.EROFS)
    result = invoke(config, "mute", A, "--for", "1h", "--reason", "x", "--wait", "0")
    monkeypatch.undo()
    assert result.exit_code == 1
    assert "read-only filesystem" in result.stderr
    assert A not in saved_state(config).mutes


def test_a_failed_append_is_a_state_write_error_that_is_still_an_os_error(tmp_path, monkeypatch):
    from monitor.storage import FileStore

    store = FileStore.in_dir(tmp_path / "state")
    store.set_property("a", "1")
    fail_writes_under(monkeypatch, tmp_path / "state", errno.ENOSPC)
    with pytest.raises(StateWriteError) as caught:
        store.set_property("a", "2")
    monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC and isinstance(caught.value, OSError)
    assert "no space left on the device holding the state folder" in str(caught.value)
    assert FileStore.in_dir(tmp_path / "state", read_only=True).get_property("a") == "1"


@pytest.mark.skipif(AS_ROOT, reason="chmod does not bind root")
def test_run_and_mute_in_a_folder_this_user_cannot_write_exit_1_with_chown_advice(config):
    folder = state_dir(config)
    for path in folder.iterdir():
        path.chmod(0o400)
    folder.chmod(0o500)
    try:
        ran = invoke(config, "run")
        muted = invoke(config, "mute", A, "--for", "1h", "--reason", "x", "--wait", "0")
    finally:
        folder.chmod(0o700)
        for path in folder.iterdir():
            path.chmod(0o600)
    for result in (ran, muted):
        assert result.exit_code == 1, result.stderr
        assert f"the state folder {folder} is not writable by user" in result.stderr
        assert "chown" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.skipif(AS_ROOT, reason="chmod does not bind root")
def test_the_probe_names_a_folder_this_user_cannot_write(tmp_path):
    folder = tmp_path / "state"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        problem = folder_problem(folder)
    finally:
        folder.chmod(0o700)
    assert problem is not None and f"the state folder {folder} is not writable by user" in problem


def test_the_probe_names_a_full_disk_and_a_writable_folder_has_none(tmp_path):
    assert folder_problem(tmp_path) is None
    problem = folder_problem(tmp_path, free_bytes=lambda path: 4096)
    assert problem is not None and "no space left on the device holding the state folder" in problem
