"""The fake Telegram's state and its Python API (what tests and the sandbox's server call): bots,
chats, messages, updates, callback queries; people writing and pressing (``telegram_people``), a
bot's webhook (``telegram_webhook``). ``telegram.FakeTelegram`` adds the HTTP app over it.

The Bot API methods' modules see this state through protocols (``telegram_fake.Fake``,
``telegram_updates.Receiving``, ``telegram_callbacks.Answering``), not this class, since it calls some
of them; the control endpoints (``telegram_control``) are a shell over this API.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import TypeVar

from monitor.core.clock import SystemClock

from . import telegram_people
from .telegram_callbacks import ANSWER_WINDOW_SECONDS, CallbackQuery
from .telegram_errors import TelegramError
from .telegram_limits import FloodControl, Window
from .telegram_model import Bot, Chat, Edit, Person, PersonMessage, SentMessage, default_chat_type
from .telegram_send import MAX_MESSAGE_LENGTH
from .telegram_updates import Mailbox, Update, mailbox
from .telegram_webhook import set_webhook

# How often a wait on a clock other than the system's looks whether that clock moved.
_CLOCK_POLL_SECONDS = 0.01
T = TypeVar("T")


class TelegramState:
    """The fake Bot API's state. Thread-safe: one lock around each request; a long poll releases it
    while it waits (``changed``, a condition on that lock, wakes it).

    ``clock`` (monitor.core.clock) dates messages, drives flood control, long polls, update expiry
    and the callback answer window, so tests move a ManualClock instead of sleeping. With a clock
    other than the system's a wait also ends after ``long_poll_cap`` real seconds, so a test that
    forgets to move its clock is slowed, never hung. ``strict_ampersand`` rejects a bare ``&``
    that Telegram itself would accept (see telegram_html). Rate limits default to Telegram's
    published ones; ``callback_answer_seconds`` is how late a callback query may be answered.
    ``seed`` fixes the random parts (update ids, callback query ids).
    """

    def __init__(
        self,
        clock: object | None = None,
        *,
        per_chat_per_second: int = 1,
        group_per_minute: int = 20,
        global_per_second: int = 30,
        max_length: int = MAX_MESSAGE_LENGTH,
        strict_ampersand: bool = False,
        callback_answer_seconds: float = ANSWER_WINDOW_SECONDS,
        long_poll_cap: float = 0.5,
        seed: int | None = None,
    ) -> None:
        self.clock = clock or SystemClock()
        self.max_length = max_length
        self.strict_ampersand = strict_ampersand
        self.callback_answer_seconds = callback_answer_seconds
        self.long_poll_cap = long_poll_cap
        self.random = random.Random(seed)
        self.flood = FloodControl(
            per_chat=Window(per_chat_per_second, 1.0),
            per_group=Window(group_per_minute, 60.0),
            overall=Window(global_per_second, 1.0),
        )
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.releases = 0  # bumped by release(): every wait under way ends
        self.bots: dict[str, Bot] = {}
        self.chats: dict[int, Chat] = {}
        self.forced: dict[int | None, list[int]] = {}  # chat id (None: any) -> [count, retry_after]
        self.sent: list[SentMessage] = []
        self._sent_at: dict[tuple[int, int], int] = {}  # (chat, message) -> index in sent
        self.person_messages: dict[tuple[int, int], PersonMessage] = {}
        self.edit_log: list[Edit] = []
        self.mailboxes: dict[int, Mailbox] = {}  # bot id -> its updates, polling and webhook
        self.update_log: list[Update] = []
        self.callbacks: dict[str, CallbackQuery] = {}
        self.requests: dict[str, Counter] = defaultdict(Counter)  # method -> status -> count

    def wait_for(self, check: Callable[[], T | None], deadline: float) -> T | None:
        """Wait, the lock released meanwhile, until ``check()`` gives something other than None
        (returned), or the fake's clock reaches ``deadline``, or ``release()`` is called (None).
        Called with the lock held. With a clock other than the system's the wait looks at the
        clock every few milliseconds and gives up after ``long_poll_cap`` real seconds."""
        generation = self.releases
        real_clock = isinstance(self.clock, SystemClock)
        left = max(0.0, deadline - self.clock.time())
        real_end = time.monotonic() + (left if real_clock else min(left, self.long_poll_cap))
        while True:
            found = check()
            if found is not None:
                return found
            clock_left = deadline - self.clock.time()
            real_left = real_end - time.monotonic()
            if self.releases != generation or clock_left <= 0 or real_left <= 0:
                return None
            self.changed.wait(min(real_left, clock_left if real_clock else _CLOCK_POLL_SECONDS))

    def release(self) -> None:
        """End every wait under way (long polls answer what they have, an empty list); the HTTP
        server calls it when it stops, so a poll never holds the shutdown."""
        with self.lock:
            self.releases += 1
            self.changed.notify_all()

    # ---- records shared by the methods ---------------------------------------------------------

    def record_sent(self, message: SentMessage) -> None:
        self._sent_at[(message.chat_id, message.message_id)] = len(self.sent)
        self.sent.append(message)

    def record_edit(self, edit: Edit) -> None:
        self.sent[self._sent_at[(edit.chat_id, edit.message_id)]] = edit.after
        self.edit_log.append(edit)

    def find_message(self, chat_id: int, message_id: int) -> SentMessage | PersonMessage | None:
        at = self._sent_at.get((chat_id, message_id))
        if at is not None:
            return self.sent[at]
        return self.person_messages.get((chat_id, message_id))

    def bot_by_id(self, bot_id: int) -> Bot:
        return next(bot for bot in self.bots.values() if bot.id == bot_id)

    def find_bot(self, ref: int | str | None = None) -> Bot:
        """A registered bot by id or username (``@`` optional); None means the only one."""
        with self.lock:
            bots = list(self.bots.values())
            if ref is None:
                if len(bots) != 1:
                    raise ValueError(f"{len(bots)} bots are registered: say which with \"bot\" "
                                     "(its id or username)")
                return bots[0]
            for bot in bots:
                if ref == bot.id or (isinstance(ref, str)
                                     and ref.lstrip("@").lower() == bot.username.lower()):
                    return bot
            raise ValueError(f"no bot {ref!r}; registered: "
                             f"{', '.join(f'{b.id} @{b.username}' for b in bots) or 'none'}")

    # ---- Python API for tests and the sandbox's server -----------------------------------------

    def add_token(
        self,
        token: str,
        username: str | None = None,
        first_name: str | None = None,
        privacy: bool = True,
    ) -> Bot:
        """Register a bot token (``<digits>:<secret>``; the digits become the bot's id).
        ``privacy`` is BotFather's privacy mode (on by default, as BotFather makes bots)."""
        head = token.split(":", 1)[0]
        bot_id = int(head) if head.isdigit() else abs(hash(token)) % 10**10
        with self.lock:
            bot = Bot(
                token, bot_id, username or f"sandbox_{bot_id}_bot", first_name or "Sandbox Bot",
                privacy,
            )
            self.bots[token] = bot
            return bot

    def add_chat(
        self,
        chat_id: int,
        type: str | None = None,
        title: str | None = None,  # noqa: A002
        username: str | None = None,
        topics: list[int] | None = None,
    ) -> Chat:
        """Register (or replace) a chat the bot can write to; its type follows the id by default."""
        chat_type = type or default_chat_type(chat_id)
        if chat_type not in ("private", "group", "supergroup", "channel"):
            raise ValueError(f"unknown chat type {chat_type!r}")
        with self.lock:
            chat = Chat(
                chat_id,
                chat_type,
                title or f"Sandbox chat {chat_id}",
                username,
                frozenset(topics) if topics is not None else None,
            )
            self.chats[chat_id] = chat
            return chat

    def chat(self, chat_id: int) -> Chat:
        with self.lock:
            if chat_id not in self.chats:
                raise KeyError(f"no chat {chat_id} in the sandbox")
            return self.chats[chat_id]

    def block_chat(self, chat_id: int, blocked: bool = True) -> None:
        """Make sends to the chat answer 403 (the user blocked the bot, or it was kicked)."""
        with self.lock:
            self.chat(chat_id).blocked = blocked

    def migrate_chat(self, chat_id: int, to_chat_id: int | None = None) -> int:
        """Upgrade a group to a supergroup: the old id answers 400 with ``migrate_to_chat_id``;
        the new supergroup chat exists. Returns the new id (default ``-100<old digits>``)."""
        with self.lock:
            old = self.chat(chat_id)
            new_id = to_chat_id if to_chat_id is not None else int(f"-100{abs(chat_id)}")
            if new_id not in self.chats:
                self.add_chat(new_id, "supergroup", old.title, old.username)
            old.migrate_to = new_id
            return new_id

    def set_rate_limit(
        self, chat_id: int, per_second: int | None = None, per_minute: int | None = None
    ) -> None:
        """Override flood control for one chat (None: the defaults)."""
        with self.lock:
            chat = self.chat(chat_id)
            chat.per_second, chat.per_minute = per_second, per_minute

    def force_rate_limit(
        self, count: int = 1, retry_after: int = 5, chat_id: int | None = None
    ) -> None:
        """Answer the next ``count`` otherwise-acceptable sends (to ``chat_id``, or to any chat)
        with 429 ``retry_after``."""
        if count < 1 or retry_after < 1:
            raise ValueError("count and retry_after must be at least 1")
        with self.lock:
            self.forced[chat_id] = [count, retry_after]

    def messages(self, chat_id: int | None = None) -> list[SentMessage]:
        """The bots' messages, each as it is now (an edited one with its ``edit_date``)."""
        with self.lock:
            return [m for m in self.sent if chat_id is None or m.chat_id == chat_id]

    def set_privacy(self, bot: int | str | None = None, enabled: bool = True) -> None:
        """Turn a bot's privacy mode on or off (BotFather's /setprivacy)."""
        with self.lock:
            self.find_bot(bot).privacy = enabled

    def write(self, chat_id: int, text: str, *, user: Person | dict | None = None,
              bot: int | str | None = None, message_thread_id: int | None = None,
              reply_to_message_id: int | None = None) -> dict:
        """A person writes in a chat (see telegram_people.write); returns what was delivered."""
        with self.lock:
            return telegram_people.write(self, chat_id, text, user=user, bot=bot,
                                         message_thread_id=message_thread_id,
                                         reply_to_message_id=reply_to_message_id)

    def press(self, chat_id: int, message_id: int, *, callback_data: str | None = None,
              text: str | None = None, position: tuple[int, int] | None = None,
              user: Person | dict | None = None, inaccessible: bool = False) -> dict:
        """A person presses a callback button (see telegram_people.press)."""
        with self.lock:
            return telegram_people.press(self, chat_id, message_id, callback_data=callback_data,
                                         text=text, position=position, user=user,
                                         inaccessible=inaccessible)

    def forge_callback(self, chat_id: int, message_id: int, data: str, *,
                       user: Person | dict | None = None) -> dict:
        """A tampered client sends any ``data`` for a bot's message."""
        with self.lock:
            return telegram_people.forge(self, chat_id, message_id, data, user=user)

    def replay_callback(self, callback_query_id: str, *, chat_id: int | None = None,
                        message_id: int | None = None, user: Person | dict | None = None) -> dict:
        """An old callback query's data sent again, as a new query."""
        with self.lock:
            return telegram_people.replay(self, callback_query_id, chat_id=chat_id,
                                          message_id=message_id, user=user)

    def set_webhook(self, url: str, bot: int | str | None = None, **params: str) -> str:
        """Put a bot in webhook mode (``url`` empty: take it out), as setWebhook does; returns
        Telegram's description, raises ValueError with its error."""
        return self._webhook(bot, {"url": url, **params}, delete=not url)

    def delete_webhook(self, bot: int | str | None = None, drop_pending_updates: bool = False) -> str:
        params = {"drop_pending_updates": "true"} if drop_pending_updates else {}
        return self._webhook(bot, params, delete=True)

    def _webhook(self, bot: int | str | None, params: dict[str, str], delete: bool) -> str:
        with self.lock:
            try:
                response = set_webhook(self, self.find_bot(bot), params, delete)
            except TelegramError as error:
                raise ValueError(error.description) from None
            return json.loads(response.body)["description"]

    def updates(self, bot: int | str | None = None) -> list[Update]:
        """Every update made, queued or not, oldest first (for one bot if given)."""
        with self.lock:
            chosen = self.find_bot(bot).id if bot is not None else None
            return [u for u in self.update_log if chosen is None or u.bot_id == chosen]

    def pending_updates(self, bot: int | str | None = None) -> int:
        """How many updates wait for the bot (getWebhookInfo's pending_update_count)."""
        with self.lock:
            return mailbox(self, self.find_bot(bot)).queue.pending(self.clock.time())

    def waiting_polls(self, bot: int | str | None = None) -> int:
        """How many getUpdates requests the fake holds now: the one waiting for updates (a bot has
        at most one: another ends it) and those ended whose 409 is held back."""
        with self.lock:
            chosen = self.find_bot(bot).id if bot is not None else None
            return sum(box.held for bot_id, box in self.mailboxes.items()
                       if chosen in (None, bot_id))

    def callback_queries(self) -> list[CallbackQuery]:
        """Every callback query made, oldest first, each with its answer (None if unanswered)."""
        with self.lock:
            return list(self.callbacks.values())

    def callback_answers(self) -> list[dict]:
        """The accepted answerCallbackQuery calls, in the order of their queries."""
        with self.lock:
            return [{"callback_query_id": q.id, "data": q.data, **q.answer}
                    for q in self.callbacks.values() if q.answer is not None]

    def edits(self, chat_id: int | None = None) -> list[Edit]:
        with self.lock:
            return [e for e in self.edit_log if chat_id is None or e.chat_id == chat_id]

    def stats(self) -> dict:
        """Requests by method and HTTP status, e.g. ``{"sendMessage": {"200": 3, "429": 1}}``."""
        with self.lock:
            return {
                "requests": {method: dict(counts) for method, counts in self.requests.items()},
                "sends": dict(self.requests.get("sendMessage", {})),
                "messages": len(self.sent),
            }

    def reset(self, full: bool = False) -> None:
        """Forget messages (the bots' and the people's), edits, updates, callback queries and
        their answers, stats, flood windows and forced 429s, and end the long polls under way;
        ``full`` also forgets bots and chats. Otherwise chats keep their behaviour (blocked,
        migrated, limits) and bots theirs (privacy, webhook, allowed_updates); update ids keep
        counting up, as Telegram's never go back."""
        with self.lock:
            self.sent.clear()
            self._sent_at.clear()
            self.person_messages.clear()
            self.edit_log.clear()
            self.update_log.clear()
            self.callbacks.clear()
            for box in self.mailboxes.values():
                box.queue.clear()
            self.requests.clear()
            self.forced.clear()
            self.flood.reset()
            for chat in self.chats.values():
                chat.next_message_id = 1
            if full:
                self.bots.clear()
                self.chats.clear()
                self.mailboxes.clear()
        self.release()
