"""The ``sheet-monitor`` command group: builds the objects, maps errors to exit codes, prints.

Each command lives in its own module and is imported only when it is invoked: cron's ``run`` every
five minutes must not pay for the emulator, the operator commands or the demo (a test checks what
``run`` imports). No business rules here.

Exit codes: 0 the command did its job (also: a run that found another run working); 1 operational
failure (state unreadable, cannot send where sending was the job); 2 usage or configuration error.
"""

from __future__ import annotations

import importlib

import click

from monitor.app.start_up import collector_paused

# command name -> "module:attribute" of the click command
COMMANDS = {
    "run": "monitor.cli.run:run",
    "status": "monitor.cli.status:status",
    "sheets": "monitor.cli.status:sheets",
    "report": "monitor.cli.report:report",
    "dlq": "monitor.cli.dlq:dlq",
    "breakers": "monitor.cli.breakers:breakers",
    "mute": "monitor.cli.mutes:mute",
    "unmute": "monitor.cli.mutes:unmute",
    "check-config": "monitor.cli.check:check_config",
    "check": "monitor.cli.check:check",
    "init": "monitor.cli.init:init",
    "config-schema": "monitor.cli.schema:config_schema",
    "suggest": "monitor.cli.suggest:suggest",
    "watchdog": "monitor.cli.watchdog:watchdog_command",
    "notify": "monitor.cli.notify:notify_commands",
    "metrics": "monitor.cli.metrics:metrics",
    "state": "monitor.cli.state:state",
    "demo": "monitor.cli.demo:demo",
    "sandbox": "sheet_sandbox.cli:sandbox",
}
# Commands whose start-up the garbage collector sits out from their module's import on
# (monitor.app.start_up): the run's imports made objects enough for a full pass of the collector, a
# tenth of the imports' CPU (0.30 -> 0.27 s), before its config and state made far more.
PAUSED_FROM_IMPORT = frozenset({"run"})


class LazyGroup(click.Group):
    """A group whose subcommands are imported by name when used (click's documented lazy pattern)."""

    def __init__(self, *args, lazy: dict[str, str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.lazy:
            return super().get_command(ctx, name)
        module, _, attribute = self.lazy[name].partition(":")
        if name in PAUSED_FROM_IMPORT and ctx is not None:  # (None: only the command is asked for)
            ctx.with_resource(collector_paused())  # until the run is wired, or the command ends
        return getattr(importlib.import_module(module), attribute)


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sheet-monitor")
def cli() -> None:
    """Watch Google Sheets and tell the team in Telegram."""


def main() -> None:
    cli()
