"""Command line: builds the objects, maps errors to exit codes, prints. No business rules here."""

from __future__ import annotations

import click

from .sandbox.cli import sandbox


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sheet-monitor")
def cli() -> None:
    """Watch Google Sheets and tell the team in Telegram."""


cli.add_command(sandbox)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
