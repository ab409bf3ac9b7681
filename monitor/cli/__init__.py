"""The command line: thin commands over the library, exit codes, tables and `--json`."""
