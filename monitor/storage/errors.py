"""The state store's exceptions: one root, each message says what is wrong, where and how to fix it."""

from __future__ import annotations


class StateError(Exception):
    """Root of every error raised by the state store."""


class StateUnreadable(StateError):
    """Neither the state file nor its last good copy can be used; both files were left untouched.

    The CLI turns this into exit 1; the message is written for the admin who has to decide what to do.
    """


class StateVersionError(StateError):
    """The state file was written by a newer sheet-monitor, or no migration path exists to this one."""


class PropertyNotJSON(StateError, ValueError):
    """A property read with ``get_json`` holds a string that is not JSON."""
