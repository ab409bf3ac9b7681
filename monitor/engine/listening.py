"""What a run asks of whoever listens to the chat while it works (``monitor.chat``): the engine
knows nothing of Telegram, only that between two steps something may want the run's thread, which
alone changes the state.
"""

from __future__ import annotations

from typing import Protocol

# While something listens, a run never waits longer than this before looking again: a press made
# while the run waits for reads is answered within a second or so.
LISTEN_SLICE_SECONDS = 1.0


class Listener(Protocol):
    def waiting(self) -> bool:
        """Is there something to answer now (updates read, an answer owed)?"""
        ...

    def answer(self) -> None:
        """Apply it to the state and save, on the run's thread."""
        ...

    def wait(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking early when there is something to answer."""
        ...
