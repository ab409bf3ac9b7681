"""A runner's name: what tells apart the runners that share one state (``[state] runner``).

It is part of keys (``heartbeat/<runner>``, an event's ``000000000042.<runner>``) and of a lock's
name (``run-<runner>``), so it is held to what both allow.
"""

from __future__ import annotations

import re

RUNNER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")


def is_runner_name(name: str) -> bool:
    """Letters, digits, '-' and '_', not first; 63 characters at most (a DNS label's length)."""
    return bool(RUNNER_NAME.fullmatch(name))
