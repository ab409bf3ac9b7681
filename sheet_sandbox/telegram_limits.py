"""Telegram's flood control for the fake Bot API, as sliding windows over accepted sends.

Telegram's published guidance (core.telegram.org/bots/faq, "My bot is hitting limits"): about one
message per second in one chat, at most 20 messages per minute to one group, about 30 messages per
second in total. Excess gets 429 ``Too Many Requests: retry after N`` with
``parameters.retry_after`` (whole seconds). Real Telegram tolerates short bursts and is not exact;
this fake is exact, so a test can say where the limit is. Times are epoch seconds passed in by
the caller (no clock here).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Window:
    limit: int  # sends allowed ...
    seconds: float  # ... in any window this long

    def wait(self, sent: deque[float], now: float) -> float:
        """Seconds until one more send fits (0 when it fits now); ``sent`` is ascending."""
        while sent and sent[0] <= now - self.seconds:
            sent.popleft()
        if self.limit <= 0:
            return self.seconds
        if len(sent) < self.limit:
            return 0.0
        return sent[-self.limit] + self.seconds - now


def retry_after_seconds(wait: float) -> int:
    """Telegram answers whole seconds and never 0."""
    return max(1, math.ceil(wait - 1e-9))


@dataclass
class FloodControl:
    """Per-chat and global windows; ``admit`` decides, ``record`` counts an accepted send."""

    per_chat: Window = field(default_factory=lambda: Window(1, 1.0))
    per_group: Window = field(default_factory=lambda: Window(20, 60.0))
    overall: Window = field(default_factory=lambda: Window(30, 1.0))
    _chat_second: dict[int, deque[float]] = field(default_factory=dict)
    _chat_minute: dict[int, deque[float]] = field(default_factory=dict)
    _all: deque[float] = field(default_factory=deque)

    def admit(
        self,
        chat_id: int,
        is_group: bool,
        now: float,
        per_chat: Window | None = None,
        per_group: Window | None = None,
    ) -> int | None:
        """None when a send to ``chat_id`` may go now, else the retry_after to answer.
        ``per_chat`` / ``per_group`` override the defaults for this chat."""
        chat_second = self._chat_second.setdefault(chat_id, deque())
        waits = [
            (per_chat or self.per_chat).wait(chat_second, now),
            self.overall.wait(self._all, now),
        ]
        if is_group:
            chat_minute = self._chat_minute.setdefault(chat_id, deque())
            waits.append((per_group or self.per_group).wait(chat_minute, now))
        longest = max(waits)
        return retry_after_seconds(longest) if longest > 0 else None

    def record(self, chat_id: int, is_group: bool, now: float) -> None:
        self._chat_second.setdefault(chat_id, deque()).append(now)
        if is_group:  # only groups have a per-minute window (and only they prune it)
            self._chat_minute.setdefault(chat_id, deque()).append(now)
        self._all.append(now)

    def reset(self) -> None:
        self._chat_second.clear()
        self._chat_minute.clear()
        self._all.clear()
