"""The garbage collector during `sheet-monitor run`'s start-up (monitor.app.start_up): paused from the
command's import, not only from its config's load, and back on once the command ends."""

from __future__ import annotations

import gc

import click
import pytest

from monitor.cli.main import cli

pytestmark = pytest.mark.usefixtures("collector_on")


def test_the_run_commands_import_is_made_with_the_collector_paused_until_the_command_ends():
    with click.Context(cli) as ctx:
        assert cli.get_command(ctx, "run") is not None
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_other_commands_leave_the_collector_alone():
    with click.Context(cli) as ctx:
        assert cli.get_command(ctx, "status") is not None
        assert gc.isenabled()
