"""The watchdog when the state folder cannot be written: the runs stop at their first save and cannot
tell anyone (their outbox is in that folder), so the watchdog says what is wrong, in words, once per
outage, keeping its own memory elsewhere meanwhile; and says "recovered" once the folder works again.
Failures injected at the os-level writes (test_state_folder_errors), sending to the fake Telegram."""

from __future__ import annotations

import errno
import io
import os
import tempfile
from datetime import timedelta

import pytest
from failing_disk import fail_writes_under
from telegram_fixtures import TOKEN, closed_port_url
from watchdog_helpers import (
    CHAT,
    T0,
    Watchdog,
    google_table,
    heartbeat,
    runs_every_5_minutes,
    texts,
    write_runner_state,
)

from monitor.cli.watchdog import run_watchdog
from monitor.core.clock import ManualClock
from monitor.watchdog.judge import HEALTHY, STATE_UNWRITABLE
from monitor.watchdog.store import STORE_NAME, fallback_dir


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def dog(tmp_path, clock, server, http, monkeypatch) -> Watchdog:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where its memory goes meanwhile
    (tmp_path / "tmp").mkdir()
    last_good = T0 - timedelta(minutes=1)
    write_runner_state(tmp_path / "state", heartbeat(last_good), runs_every_5_minutes(last_good, 1))
    return Watchdog(tmp_path / "state", clock, server.base_url, http)


def test_a_read_only_state_folder_is_told_once_in_words_and_its_recovery_once(dog, clock, fake, monkeypatch):
    with monkeypatch.context() as failing:
        fail_writes_under(failing, dog.state_dir, errno.EROFS)
        first = dog.run()
        clock.advance(15 * 60)
        second = dog.run()
    assert first.verdict.status == STATE_UNWRITABLE and first.said == "alert" and not first.delivery_failed
    assert second.verdict.status == STATE_UNWRITABLE and second.said is None
    [alert] = texts(fake)
    assert "Monitor cannot save its state" in alert
    assert f"the state folder {dog.state_dir} is on a read-only filesystem" in alert
    assert "cannot send alerts either" in alert

    last_good = clock.now() - timedelta(minutes=1)
    write_runner_state(dog.state_dir, heartbeat(last_good), runs_every_5_minutes(last_good, 1))
    clock.advance(60)
    third = dog.run()
    assert third.verdict.status == HEALTHY and third.said == "recovered"
    assert len(texts(fake)) == 2
    assert not any(path.name.startswith("watchdog-") for path in (dog.state_dir.parent / "tmp").rglob("*"))


def test_a_full_disk_under_the_state_folder_is_told_with_df(dog, fake, monkeypatch):
    with monkeypatch.context() as failing:
        fail_writes_under(failing, dog.state_dir, errno.ENOSPC)
        report = dog.run()
    assert report.verdict.status == STATE_UNWRITABLE and report.said == "alert"
    assert f"df -h {dog.state_dir}" in texts(fake)[0]


@pytest.mark.skipif(os.geteuid() == 0, reason="chmod does not bind root")
def test_a_state_folder_of_another_mode_is_told_with_chown(dog, fake):
    for path in dog.state_dir.iterdir():
        path.chmod(0o400)
    dog.state_dir.chmod(0o500)
    try:
        report = dog.run()
    finally:
        dog.state_dir.chmod(0o700)
        for path in dog.state_dir.iterdir():
            path.chmod(0o600)
    assert report.verdict.status == STATE_UNWRITABLE
    assert f"the state folder {dog.state_dir} is not writable by user" in texts(fake)[0]
    assert "chown" in texts(fake)[0]


def test_messages_a_pass_could_not_send_are_said_to_wait_where_its_memory_is_kept(
        tmp_path, clock, monkeypatch, capsys):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    state_dir = tmp_path / "state"
    write_runner_state(state_dir, heartbeat(T0 - timedelta(minutes=1)), runs_every_5_minutes(T0, 1))
    config = tmp_path / "monitor.toml"
    config.write_text(f'[run]\nstate_dir = "state"\n[telegram]\nchat_id = "{CHAT}"\n'
                      f'api_base = "{closed_port_url()}"\n{google_table(tmp_path)}'
                      '[[sheets]]\nid = "1Cdef0000000000000000000000000000000000000aa"\n'
                      'checks = [{ kind = "not_empty", range = "Data!A2:A" }]\n')
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    with monkeypatch.context() as failing:
        fail_writes_under(failing, state_dir, errno.EROFS)
        assert run_watchdog(config, io.StringIO(), clock=clock) == 1  # the alert could not be sent
    said = capsys.readouterr().err.splitlines()[-1]
    kept = fallback_dir(state_dir) / STORE_NAME
    assert said.endswith(f"they wait in {kept}.json for the next pass (see the log line above for why)")
