"""A value an admin wrote that cannot be used, said as "what is wrong" and "how to write it".

One type for every such value: durations, check parameters and the config's own fields raise it, and
the config loader turns it into a ``ConfigIssue`` with the file position of the key; the CLI shows
``problem`` and ``fix`` for an option. A ``ValueError``, so that pydantic validators may raise it
and keep it (in the error's ``ctx["error"]``) for the loader to read back.
"""

from __future__ import annotations

__all__ = ["InvalidValue"]


class InvalidValue(ValueError):
    """``problem`` says what is wrong with the value as written, ``fix`` how to write it instead."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}: {fix}")
        self.problem = problem
        self.fix = fix
