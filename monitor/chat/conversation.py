"""The runs' side of the chat: one reader of the bot's updates at a time, what they change saved with
the offset past them, and the answers.

Telegram hands a bot its updates by long polling (``getUpdates``), and forgets a press 150 seconds
after it was made (a message: a day). So a run reads the chat for as long as it lives: a thread
long-polls while the run works, and the run's own thread, which alone changes the state, applies
what came between two of its steps (within a second); once the run's work is done and its lock
released, it goes on listening until its budget is spent, taking the lock for each batch only (so
`sheet-monitor mute` never waits for a listening run). The next cron tick's run takes over.

Exactly once, whatever is killed when: an update is confirmed to Telegram only by the next
getUpdates asking from past it, and that offset is saved in the same save as what the update
changed and the reply it owes. A run killed before that save leaves the update unconfirmed: the
next reader gets it again and applies it then; one killed after it has saved both, and the next
reader asks from past it. Answering the press and changing its message's buttons come after the
save: at most they are missing, never doubled.

One reader per bot: the poll lock (``chat``: a file lock, or a Redis lock with a lease when runners
share a state) is held by whoever polls; a run that cannot have it leaves the chat to its holder and
tries again now and then. A webhook set on the bot, or another program polling it, is Telegram's
409: said once, in the chat and in `status`, with the fix, and polling stops until it is fixed. One
poll ended by another is polled again first: it may have been the last poll of the run before,
still out as that process ended; a second in a row is another program.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from monitor.chat.actions import Place, Said, apply_press
from monitor.chat.bot import BotApi, Conflict, Refused, Unreachable
from monitor.chat.commands import Context, run_command, verdict_line
from monitor.chat.people import Gate
from monitor.chat.updates import Command, Ignored, Press, parse
from monitor.core.logs import log_event
from monitor.notify.buttons import Offer, Signer, keyboard
from monitor.notify.destinations import DEFAULT, Destination
from monitor.notify.documents import ChatPosition
from monitor.notify.messages import Message, esc, utc_text
from monitor.notify.outbox import deliver, enqueue
from monitor.state import State

POLL_LOCK = "chat"
POLL_SECONDS = 20.0  # a long poll's wait (Telegram allows 50): it ends at once when an update comes
UNREACHABLE_PAUSE = 3.0  # after a poll that got no answer, before the next
CONFLICT_PAUSE = 3.0  # after a poll another ended: Telegram answers such conflicts once in 3 s at most
RESERVE_SECONDS = 3.0  # kept for the end of the process: no poll runs into the budget's last seconds
COMMAND_STALE = timedelta(minutes=10)  # a command this old was written to a monitor that did not run
ASKED_FOR_AT_MOST = timedelta(minutes=30)  # a check still unread after this is answered as such
KEPT_BY_TELEGRAM = timedelta(hours=24)  # messages; presses last 150 s


@dataclass
class Batch:
    """Updates read and not applied yet, or why none can be read."""

    updates: list
    refused: str | None = None


class Conversation:
    """One process's reading of the chat (``start`` it, ``stop`` it) and its answers. ``home``: the
    default chat's id and topic, where the monitor's own words go; ``senders(outbox)``: the sender
    replies go through, as the notifier's; ``deadline``: the process's, on the clock's monotonic
    reading."""

    def __init__(
        self,
        bot: BotApi,
        signer: Signer,
        gate: Gate,
        place: Place,
        sheets,
        report_url: str | None,
        clock,
        deadline: float,
        senders: Callable,
        home: tuple[str, int | None],
    ) -> None:
        self.bot, self.signer, self.gate, self.place = bot, signer, gate, place
        self.sheets, self.report_url, self.clock, self.deadline = sheets, report_url, clock, deadline
        self.senders, self.home = senders, home
        self._offset: int | None = None
        self._ready: Batch | None = None
        self._wake = threading.Condition()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.conflict_pause = CONFLICT_PAUSE

    # -- the reader thread ---------------------------------------------------------------------

    def start(self, position: ChatPosition) -> None:
        """Read from where ``position`` (the saved conversation) left off, on a thread of its own. A
        chat Telegram refused to hand over is asked again all the same (one request, when it still
        refuses): the webhook may be gone since."""
        self._offset = position.offset
        self._thread = threading.Thread(target=self._read, name="chat-reader", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        with self._wake:
            self._wake.notify_all()

    def left(self) -> float:
        """Seconds this process may still listen."""
        return self.deadline - self.clock.monotonic() - RESERVE_SECONDS

    def reading(self) -> bool:
        """Is the reader thread still reading (not stopped, refused or past the deadline)?"""
        return self._thread is not None and self._thread.is_alive()

    def has_updates(self) -> bool:
        return self._ready is not None

    def _read(self) -> None:
        conflicts = 0  # in a row
        while not self._stopped.is_set() and self.left() > 1:
            try:
                updates = self.bot.updates(self._offset, min(POLL_SECONDS, self.left() - 1))
            except Refused as exc:
                if self._stopped.is_set():  # a poll cut off by this process's own end says nothing
                    return
                conflicts += isinstance(exc, Conflict)
                if isinstance(exc, Conflict) and conflicts == 1:
                    # Perhaps the last poll of the run before this one, sent as it ended: try again.
                    log_event("chat_poll_conflict", logging.WARNING, error=str(exc))
                    self._stopped.wait(self.conflict_pause)
                    continue
                self._hand_over(Batch([], str(exc)))
                return
            except Unreachable as exc:
                if self._stopped.is_set():
                    return
                log_event("chat_poll_failed", logging.WARNING, error=str(exc))
                self._stopped.wait(UNREACHABLE_PAUSE)
                continue
            conflicts = 0
            if updates and not self._stopped.is_set():
                self._hand_over(Batch(updates))

    def _hand_over(self, batch: Batch) -> None:
        """Give ``batch`` to the thread that owns the state and wait until it is applied and saved
        (the next poll must ask from past it, or it would get the same updates again)."""
        with self._wake:
            self._ready = batch
            self._wake.notify_all()  # a thread waiting in ``wait`` answers now
            while self._ready is not None and not self._stopped.is_set():
                self._wake.wait(1.0)

    # -- the thread that owns the state ---------------------------------------------------------

    def waiting(self, state: State, now: datetime) -> bool:
        """Is there something to answer: updates read, or a check asked for whose read is done?"""
        return self._ready is not None or any(
            self._answerable(asked, state, now) for asked in state.conversation.asked
        )

    def wait(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking as soon as updates are read."""
        with self._wake:
            if self._ready is None:  # on the run's clock: an injected one moves on instead of waiting
                self.clock.wait(self._wake, seconds)

    def answer(self, state: State, save: Callable[[], None], now: datetime) -> None:
        """Apply what was read and answer what is owed; ``save`` is the caller's atomic save."""
        batch, said = self._ready, []
        if batch is not None:
            said = self._apply(batch, state, now)
        self._owed_answers(state, now)
        save()  # what the updates did, the offset past them and the replies: one save
        with self._wake:
            if batch is not None:
                self._offset = state.conversation.offset
                self._ready = None
                self._wake.notify_all()
        for press, reply in said:
            self._answer_press(press, reply, state)
        if state.outbox.pending:  # the replies just composed, and whatever else waits
            self._deliver(state, save, now)

    def _apply(self, batch: Batch, state: State, now: datetime) -> list[tuple[Press, Said]]:
        position, pressed = state.conversation, []
        if batch.refused is not None:
            if position.refused != batch.refused:
                self._reply(
                    state,
                    DEFAULT,
                    f"refused:{now.isoformat()}",
                    f"📵 The buttons and commands here stopped working: {esc(batch.refused, 600)}",
                )
                log_event("chat_refused", logging.ERROR, error=batch.refused)
            state.conversation = replace(
                position, refused=batch.refused, refused_since=position.refused_since or now
            )
            return []
        if position.polled_at is not None and now - position.polled_at > KEPT_BY_TELEGRAM:
            self._reply(
                state,
                DEFAULT,
                f"gap:{position.polled_at.isoformat()}",
                f"⚠️ Nothing read the chat between {utc_text(position.polled_at)} and now: Telegram "
                "keeps messages a day and presses 150 seconds, so what was asked before "
                f"{utc_text(now - KEPT_BY_TELEGRAM)} is lost. Ask again if it still matters.",
            )
        if position.refused is not None:
            self._reply(state, DEFAULT, f"works:{now.isoformat()}", "📱 The buttons and commands here work "
                        f"again (refused since {utc_text(position.refused_since)}).")
        offset = position.offset
        for raw in batch.updates:
            try:
                update = parse(raw)
            except ValueError:
                log_event("chat_update_ignored", logging.WARNING, why="an update without an update_id")
                continue
            offset = max(offset or 0, update.update_id + 1)
            if isinstance(update, Press):
                said = apply_press(update, state, self.signer, self.gate, self.place, now)
                pressed.append((update, said))
                if said.line:
                    self._reply(
                        state,
                        self._where(update.chat_id, update.thread_id),
                        f"press:{update.update_id}",
                        said.line,
                    )
            elif isinstance(update, Command):
                self._command(update, state, now)
            elif isinstance(update, Ignored):
                log_event("chat_update_ignored", why=update.why, update_id=update.update_id)
        state.conversation = replace(
            state.conversation, offset=offset, polled_at=now, refused=None, refused_since=None
        )
        return pressed

    def _command(self, command: Command, state: State, now: datetime) -> None:
        if not self.gate.in_team_chat(command.chat_id):
            log_event(
                "chat_update_ignored",
                logging.WARNING,
                why="a command from a chat the monitor does not tell",
                chat_id=command.chat_id,
                user=command.person.shown,
                user_id=command.person.id,
            )
            return
        where = self._where(command.chat_id, command.thread_id)
        if command.sent_at is not None and now.timestamp() - command.sent_at > COMMAND_STALE.total_seconds():
            written = datetime.fromtimestamp(command.sent_at, now.tzinfo)
            self._reply(
                state,
                where,
                f"command:{command.update_id}",
                f"/{esc(command.name)} was written at "
                f"{utc_text(written)}, when no run was reading the chat: nothing done. Send it again if "
                "it still holds.",
            )
            return
        said = run_command(command, Context(state, self.sheets, self.place, self.report_url, now), self.gate)
        if said is not None and said.line:
            log_event(
                "chat_command",
                command=command.name,
                user=command.person.shown,
                user_id=command.person.id,
                chat_id=command.chat_id,
            )
            self._reply(state, where, f"command:{command.update_id}", said.line)

    def _owed_answers(self, state: State, now: datetime) -> None:
        """Answer every check asked for whose read is done (or that waited too long)."""
        position, answered, kept = state.conversation, 0, []
        for asked in position.asked:
            if not self._answerable(asked, state, now):
                kept.append(asked)
                continue
            name = self.place.names.get(asked.spreadsheet_id)
            record = state.health.get(asked.spreadsheet_id)
            if name is None:
                line = "That spreadsheet is no longer in the config."
            elif record is not None and record.last_checked_at and record.last_checked_at >= asked.at:
                verdict = verdict_line(state, asked.spreadsheet_id, name, now)
                line = f"Checked again, as {esc(asked.by)} asked: {verdict}"
            else:
                line = (
                    f"{esc(name)} could not be read within {int(ASKED_FOR_AT_MOST.total_seconds() // 60)} "
                    "minutes of being asked: /failing shows what stands."
                )
            self._reply(
                state,
                self._where(asked.chat_id, asked.thread_id),
                f"asked:{asked.spreadsheet_id}:{asked.at.isoformat()}",
                line,
            )
            answered += 1
        if answered:
            state.conversation = replace(state.conversation, asked=tuple(kept))

    def _answerable(self, asked, state: State, now: datetime) -> bool:
        if asked.spreadsheet_id not in self.place.names or now - asked.at > ASKED_FOR_AT_MOST:
            return True
        record = state.health.get(asked.spreadsheet_id)
        return (
            record is not None and record.last_checked_at is not None and record.last_checked_at >= asked.at
        )

    # -- saying it ------------------------------------------------------------------------------

    def _where(self, chat_id: str, thread_id: int | None) -> Destination:
        """Where an answer goes: the chat and topic it was asked in (the default chat as configured,
        so that its halt and migrations apply)."""
        return DEFAULT if (chat_id, thread_id) == self.home else Destination(chat_id, thread_id)

    def _reply(self, state: State, where: Destination, key: str, line: str) -> None:
        state.outbox = enqueue(state.outbox, [Message(f"chat:{key}", line)], self.clock.now(), where).outbox

    def _answer_press(self, press: Press, said: Said, state: State) -> None:
        self.bot.answer_press(press.query_id, said.answer, said.alert)
        if said.changed is not None:
            self.bot.set_buttons(
                press.chat_id,
                press.message_id,
                buttons_of(state, press.chat_id, press.message_id, self.signer, self.clock.now()),
            )

    def _deliver(self, state: State, save: Callable[[], None], now: datetime) -> None:
        def checkpoint(outbox) -> None:
            state.outbox = outbox
            save()

        state.outbox, _ = deliver(state.outbox, self.senders(state.outbox), now, 5, checkpoint)


def buttons_of(state: State, chat_id: str, message_id: int, signer: Signer, now: datetime):
    """The buttons a message should have now: a row for each open incident it told, in the order
    the message named them (a row does not move when another is pressed)."""
    placed = []
    for sid, incident in state.incidents.items():
        told = [t for t in incident.told if (t.chat_id, t.message_id) == (chat_id, message_id)]
        if incident.is_open and told:
            placed.append((told[-1].place, Offer(incident, state.is_muted(sid, now))))
    return keyboard([offer for _, offer in sorted(placed, key=lambda pair: pair[0])], signer)
