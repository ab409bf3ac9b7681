"""`sheet-monitor config-schema`: the config file's JSON Schema on stdout, for editors."""

from __future__ import annotations

import click

from monitor.config.schema import schema_text


@click.command("config-schema")
def config_schema() -> None:
    """Print the JSON Schema of monitor.toml, generated from the config's models, for an editor to
    flag unknown keys, misspelt check kinds and values of the wrong form as the file is written
    (taplo, Even Better TOML: docs/configuration.md, "Checking the file in an editor"). The same
    schema is committed as docs/monitor.schema.json."""
    click.echo(schema_text(), nl=False)
