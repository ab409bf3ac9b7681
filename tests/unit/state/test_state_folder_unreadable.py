"""A state folder this user may not read (another owner's, mode 0700): every command that reads the
state says so in one line (whose folder it is, its mode, and the user to run as or the chown to do)
and exits 1, never a traceback; check-config calls it a problem of the machine; and the watchdog, run
as that user, alerts once with that reason, keeps its memory elsewhere meanwhile and says "recovered"
once the folder can be read again.

As root the commands run as ``nobody`` in a child process (``other_user``) on a folder of root's; as
any other user, on a folder of its own that it shuts itself out of (mode 0000).
"""

from __future__ import annotations

import html
import io
import os
import shutil
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from cli_fixtures import A, invoke, seed, state_dir, write_config
from other_user import AS_ROOT, NOBODY, as_nobody, needs_root, open_folder
from telegram_fixtures import TOKEN
from watchdog_helpers import CHAT, heartbeat, runs_every_5_minutes, texts, write_runner_state

from monitor.cli.watchdog import run_watchdog
from monitor.storage.writability import user_name

READERS = [("status",), ("sheets",), ("dlq", "list"), ("dlq", "show", A), ("breakers",), ("report", "--json"),
           ("metrics",), ("status", "--json")]


@pytest.fixture
def site():
    """A config and the state a run left, in a folder every user may enter; the state folder 0700."""
    with open_folder() as base:
        config = write_config(base / "site")
        seed(config)
        state_dir(config).chmod(0o700)
        yield config


def outcome(config: Path, *args: str) -> tuple[int, str, str]:
    """``sheet-monitor ARGS --config CONFIG``: exit code, stdout, stderr. An exception the CLI lets escape
    (a traceback) fails the test."""
    result = invoke(config, *args)
    return result.exit_code, result.stdout, result.stderr


def shut_out_line(folder: Path) -> str:
    return (f"the state folder {folder} cannot be read by user nobody: it belongs to root, mode 0700. "
            "Fix: run sheet-monitor as root, its owner (sudo -u root sheet-monitor ...); or, if nobody is to "
            f"run the monitor, sudo chown -R nobody {folder} && chmod u+rwX -R {folder}")


@needs_root
@pytest.mark.parametrize("args", READERS, ids=" ".join)
def test_a_command_reading_another_owners_state_folder_says_whose_in_one_line_and_exits_1(site, args):
    assert outcome(site, *args)[0] == 0  # its owner reads it (and the child finds every module loaded)
    code, stdout, stderr = as_nobody(lambda: outcome(site, *args))
    assert (code, stdout) == (1, "")
    assert stderr.splitlines() == [f"sheet-monitor: {shut_out_line(state_dir(site))}"]


@needs_root
def test_a_command_reading_a_state_file_of_another_owner_names_the_file(site):
    folder = state_dir(site)
    folder.chmod(0o755)  # the folder open, its files still root's, 0600
    assert outcome(site, "status")[0] == 0
    code, _, stderr = as_nobody(lambda: outcome(site, "status"))
    assert code == 1
    assert stderr.startswith(f"sheet-monitor: the state folder {folder} cannot be read by user nobody: "
                             f"{folder}/properties.json belongs to root, mode 0600. Fix: run sheet-monitor "
                             "as root") and len(stderr.splitlines()) == 1


@needs_root
def test_check_config_calls_another_owners_state_folder_a_problem_of_the_machine(site):
    assert outcome(site, "check-config", "--offline")[0] == 0
    code, stdout, stderr = as_nobody(lambda: outcome(site, "check-config", "--offline"))
    assert code == 1, stdout + stderr
    what, _, fix = shut_out_line(state_dir(site)).partition(" Fix: ")
    assert f"  problem  state folder: {what}\n           fix: {fix}\n" in stdout
    assert "problem  run lock:" in stdout and "this user may not read the state folder (above)" in stdout
    assert stdout.rstrip().endswith("Not ready: 2 problems above.")


@pytest.mark.skipif(AS_ROOT, reason="chmod does not bind root (as root, the tests above run as nobody)")
def test_a_state_folder_its_own_user_shut_out_is_told_with_the_chmod(site):
    folder = state_dir(site)
    folder.chmod(0)
    try:
        code, stdout, stderr = outcome(site, "status")
    finally:
        folder.chmod(0o700)
    assert (code, stdout) == (1, "")
    me = user_name()
    assert stderr.splitlines() == [f"sheet-monitor: the state folder {folder} cannot be read by user {me}: "
                                   f"it belongs to {me}, mode 0000. Fix: chmod u+rwX -R {folder}"]


# -- the watchdog, run as that user ----------------------------------------------------------------


@pytest.fixture
def watched(site, server, monkeypatch):
    """``site`` with a chat on the fake Telegram and no state yet, and a temporary folder nobody may
    write to (where the watchdog keeps its memory while the state folder shuts it out)."""
    shutil.rmtree(state_dir(site))
    site.write_text(site.read_text() + f'\n[telegram]\nchat_id = "{CHAT}"\napi_base = "{server.base_url}"\n')
    spare = site.parent.parent / "tmp"
    spare.mkdir(mode=0o777)
    spare.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(spare))
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    return site


def watchdog_pass(config: Path, clock) -> tuple[int, str]:
    """One pass of sheet-watchdog: its exit code and its log lines."""
    logs, kept = io.StringIO(), sys.stderr
    sys.stderr = logs  # where its log handler writes
    try:
        return run_watchdog(config, io.StringIO(), clock=clock), logs.getvalue()
    finally:
        sys.stderr = kept


@needs_root
def test_the_watchdog_alerts_once_that_it_cannot_read_the_state_folder_then_that_it_recovered(
        watched, clock, fake):
    folder = state_dir(watched)
    write_runner_state(folder, heartbeat(clock.now() - timedelta(minutes=1)),
                       runs_every_5_minutes(clock.now() - timedelta(minutes=16), 4))
    folder.chmod(0o700)
    assert watchdog_pass(watched, clock)[0] == 0  # as root: healthy, nothing said
    assert texts(fake) == []

    code, logs = as_nobody(lambda: watchdog_pass(watched, clock))
    assert code == 0, logs  # it did its job: it told people
    [alert] = map(html.unescape, texts(fake))
    assert alert.startswith("🚨 <b>Monitor cannot read its state</b>")
    assert shut_out_line(folder) in alert
    assert "Errno" not in logs and '"status": "state_inaccessible"' in logs

    clock.advance(timedelta(minutes=15).total_seconds())
    code, logs = as_nobody(lambda: watchdog_pass(watched, clock))
    assert code == 0 and len(texts(fake)) == 1, logs  # one alert per outage: its memory was kept elsewhere

    clock.advance(60)
    write_runner_state(folder, heartbeat(clock.now() - timedelta(minutes=1)),
                       runs_every_5_minutes(clock.now() - timedelta(minutes=16), 4))
    for path in (folder, *folder.iterdir()):  # the runs are nobody's now: the admin gave them the folder
        os.chown(path, NOBODY, NOBODY)
    code, logs = as_nobody(lambda: watchdog_pass(watched, clock))
    assert code == 0, logs
    assert len(texts(fake)) == 2 and "healthy again" in texts(fake)[1]
    assert "monitor cannot read its state" in texts(fake)[1]
