"""The fake Telegram's state as its Bot API methods see it (``telegram_send``, ``telegram_edit``,
``telegram_polling``, ...): a protocol that ``telegram_state.TelegramState`` fulfils. The methods name
this, not the class, because the class calls them: each module adds what it needs of its own
records (``telegram_updates.Receiving``, ``telegram_callbacks.Answering``).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

from monitor.core.clock import ManualClock, SystemClock

from .telegram_limits import FloodControl
from .telegram_model import Bot, Chat, Edit, PersonMessage, SentMessage

T = TypeVar("T")


class Fake(Protocol):
    clock: SystemClock | ManualClock
    random: random.Random
    changed: threading.Condition  # on the fake's lock: notified when updates arrive
    chats: dict[int, Chat]
    sent: list[SentMessage]
    person_messages: dict[tuple[int, int], PersonMessage]
    flood: FloodControl
    forced: dict[int | None, list[int]]  # chat id (None: any) -> [count, retry_after]
    max_length: int
    strict_ampersand: bool
    callback_answer_seconds: float

    def wait_for(self, check: Callable[[], T | None], deadline: float) -> T | None: ...

    def record_sent(self, message: SentMessage) -> None: ...

    def record_edit(self, edit: Edit) -> None: ...

    def find_message(self, chat_id: int, message_id: int) -> SentMessage | PersonMessage | None: ...

    def bot_by_id(self, bot_id: int) -> Bot: ...

    def find_bot(self, ref: int | str | None = None) -> Bot: ...
