"""The team answers from the chat: presses and commands read from the fake Telegram over real HTTP
(the conversation's own Bot API calls, httpx), applied to a state as a run applies them.

The alert under test is composed and sent by the real notifier, so its buttons are the ones a run
sends; people press them (and forge and replay them) through the fake's control side.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from monitor.chat.actions import Place
from monitor.chat.bot import BotApi
from monitor.chat.conversation import Conversation
from monitor.chat.people import Gate
from monitor.core.clock import ManualClock
from monitor.engine.health import FAIL, OK, SheetHealth
from monitor.engine.incidents import incident_id, settle_incidents
from monitor.notify.buttons import Signer
from monitor.notify.notifier import notify
from monitor.notify.settings import AlertSettings
from monitor.notify.telegram import TelegramSender
from monitor.state import State
from sheet_sandbox.http import HTTPServerThread
from sheet_sandbox.telegram import FakeTelegram

TOKEN = "123456:SECRET-chat-token-0123456789abc"
GROUP = -1001000000123
ELSEWHERE = -1001000000999  # a group the config does not name
IVAN = {"id": 501, "first_name": "Ivan", "username": "ivan"}
OLGA = {"id": 502, "first_name": "Olga", "username": "olga"}
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
@dataclass(frozen=True)
class Configured:
    """A configured spreadsheet as the chat's names resolve it (``admin.targets.Target``)."""

    id: str
    name: str
    tags: tuple[str, ...] = ()


SHEETS = [Configured(f"1chatSheet{n}".ljust(44, "x"), f"Store {n:03d}") for n in (1, 2, 3)]
NAMES = {sheet.id: sheet.name for sheet in SHEETS}
ONE, TWO, THREE = (sheet.id for sheet in SHEETS)


class Chat:
    """The fake Telegram, a state whose alert was sent with buttons, and the conversation that reads
    the chat for it."""

    def __init__(self, fake: FakeTelegram, server: HTTPServerThread, http: httpx.Client, clock: ManualClock,
                 operators: tuple[str, ...] = ()) -> None:
        self.fake, self.server, self.http, self.clock = fake, server, http, clock
        self.state = State(health={ONE: SheetHealth(FAIL, since=NOW), TWO: SheetHealth(FAIL, since=NOW),
                                   THREE: SheetHealth(OK, since=NOW)})
        rng = random.Random(3)
        settle_incidents(self.state, NAMES, NOW, lambda: incident_id(rng))
        self.saved = 0
        self.operators = operators
        self.conversation = self.listening()

    def sender(self, outbox=None) -> TelegramSender:
        return TelegramSender(TOKEN, GROUP, self.server.base_url, client=self.http, clock=self.clock)

    def alert(self, *events) -> int:
        """The notifier's message about ``events`` (with buttons), as Telegram took it: its id."""
        for event in events:
            self.state.events.add(event)
        quiet = AlertSettings(summary="off", digest_at=None)
        report = notify(self.state, self.state.outbox, self.state.alerts, quiet, self.sender(),
                        self.clock.now(), names=NAMES, signer=Signer(TOKEN))
        self.state.outbox, self.state.alerts = report.outbox, report.memory
        [sent] = [result for result in report.results if result.outcome == "sent"]
        return sent.message_id

    def listening(self) -> Conversation:
        conversation = Conversation(
            BotApi(TOKEN, self.server.base_url, self.http), Signer(TOKEN),
            Gate.of([str(GROUP)], self.operators), Place(NAMES, timedelta(minutes=5)), SHEETS, None,
            self.clock, self.clock.monotonic() + 600, self.sender, (str(GROUP), None))
        conversation.conflict_pause = 0.05  # Telegram's 3 s between 409s are the fake's clock's, not moving
        conversation.start(self.state.conversation)
        return conversation

    def next_process(self, **changes) -> None:
        """The conversation of the next process (with ``changes`` to this one's settings). The old one
        is stopped while its poll waits or its updates wait to be answered: a reader stopped between
        two polls could still send one, and it would end the new reader's poll, as Telegram does."""
        ends = time.monotonic() + 5
        while (self.conversation.reading() and not self.conversation.has_updates()
               and self.fake.waiting_polls() == 0):
            assert time.monotonic() < ends, "the reader neither polls nor holds updates"
            time.sleep(0.01)
        self.conversation.stop()
        for name, value in changes.items():
            setattr(self, name, value)
        self.conversation = self.listening()

    def answered(self, seconds: float = 5.0) -> None:
        """Wait (really: the fake hands updates over HTTP) until the conversation read something,
        then answer it as the run's thread does."""
        ends = time.monotonic() + seconds
        while not self.conversation.has_updates():
            assert time.monotonic() < ends, "the conversation read nothing"
            time.sleep(0.02)
        self.conversation.answer(self.state, self.save, self.clock.now())

    def save(self) -> None:
        self.saved += 1

    def lines(self) -> list[str]:
        return [message.plain_text for message in self.fake.messages(GROUP)]


@pytest.fixture
def chat():
    clock = ManualClock(NOW)
    fake = FakeTelegram(clock=clock)
    fake.add_token(TOKEN, username="stock_monitor_bot")
    fake.add_chat(GROUP, title="Ops")
    fake.add_chat(ELSEWHERE, title="Strangers")
    with HTTPServerThread(fake) as server, httpx.Client() as http:
        made = Chat(fake, server, http, clock)
        yield made
        made.conversation.stop()


def failing_alert(chat: Chat) -> int:
    from notify_helpers import went_bad

    chat.state.events.add(went_bad(ONE, "Store 001"))
    chat.state.events.add(went_bad(TWO, "Store 002"))
    return chat.alert()


def test_a_press_on_mute_1_day_mutes_that_spreadsheet_only_and_says_who_did_it(chat):
    message = failing_alert(chat)
    [row_one, _] = chat.fake.messages(GROUP)[0].reply_markup["inline_keyboard"]
    assert row_one[0]["text"] == "✔ Store 001"
    chat.fake.press(GROUP, message, position=(0, 2), user=IVAN)  # the first row's "🔕 1d"
    chat.answered()
    mute = chat.state.mutes[ONE]
    assert (mute.until, mute.by, mute.until_fixed) == (NOW + timedelta(days=1), "@ivan", False)
    assert TWO not in chat.state.mutes and THREE not in chat.state.mutes
    assert chat.state.incidents[ONE].actions[-1].what == "muted for 1 day"
    assert "Muted for 1 day by @ivan: Store 001 (until 2026-03-03 09:00 UTC)." in chat.lines()[-1]
    [answer] = chat.fake.callback_answers()
    assert answer["text"].startswith("🔕 Muted for 1 day by @ivan") and not answer.get("show_alert")
    [edit] = chat.fake.edits(GROUP)
    rows = edit.after.reply_markup["inline_keyboard"]
    assert [button["text"] for button in rows[0]] == ["✔ Store 001", "🔔", "🔄"]  # muted: Unmute offered
    assert chat.state.conversation.offset is not None and chat.saved >= 1


def test_after_a_press_each_row_stays_where_the_message_put_it(chat):
    message = failing_alert(chat)
    before = [row[0]["text"] for row in chat.fake.messages(GROUP)[0].reply_markup["inline_keyboard"]]
    # The state's own order is no guide: a saved state comes back in whatever order it was written.
    chat.state.incidents = dict(reversed(list(chat.state.incidents.items())))
    chat.fake.press(GROUP, message, position=(1, 2), user=IVAN)  # the second row's "🔕 1d"
    chat.answered()
    [edit] = chat.fake.edits(GROUP)
    rows = edit.after.reply_markup["inline_keyboard"]
    assert [row[0]["text"] for row in rows] == before == ["✔ Store 001", "✔ Store 002"]
    assert [button["text"] for button in rows[1]] == ["✔ Store 002", "🔔", "🔄"]


def test_acknowledging_stops_reminders_and_the_recovery_says_who_acknowledged(chat):
    from notify_helpers import came_back

    message = failing_alert(chat)
    chat.fake.press(GROUP, message, position=(1, 0), user=OLGA)
    chat.answered()
    assert chat.state.incidents[TWO].acked_by == "@olga"
    chat.clock.advance(5 * 3600)  # past reminder_every: only Store 001 is owed a reminder
    chat.alert()
    reminder = chat.lines()[-1]
    assert "reminder: 1 still failing" in reminder and "Store 001" in reminder and "Store 002" not in reminder
    chat.state.health[TWO] = SheetHealth(OK, since=chat.clock.now())
    settle_incidents(chat.state, NAMES, chat.clock.now(), lambda: "unused1")
    chat.alert(came_back(TWO, name="Store 002"))
    assert "Store 002 recovered after" in chat.lines()[-1] and "(acknowledged by @olga)" in chat.lines()[-1]


def test_a_forged_or_replayed_press_acts_on_nothing_and_is_logged(chat, caplog):
    message = failing_alert(chat)
    chat.fake.forge_callback(GROUP, message, "d:aaaaaaaa:AAAAAAAAAAAA", user=IVAN)
    chat.answered()
    assert not chat.state.mutes and chat.fake.callback_answers()[-1]["show_alert"] is True
    # A genuine press, then its data sent again on another of the bot's messages.
    chat.fake.press(GROUP, message, position=(0, 0), user=IVAN)  # acknowledge Store 001
    chat.answered()
    [query] = [q for q in chat.fake.callback_queries() if q.data.startswith("a:")]
    other = chat.sender().send("an unrelated message").message_id
    chat.fake.replay_callback(query.id, message_id=other, user=OLGA)
    chat.answered()
    incident = chat.state.incidents[ONE]
    assert [action.by for action in incident.actions] == ["@ivan"]  # the replay did nothing
    assert "belongs to another message" in chat.fake.callback_answers()[-1]["text"]
    refusals = [r.fields for r in caplog.records if r.getMessage() == "chat_press_refused"]
    assert [r["reason"] for r in refusals] == ["data the monitor did not sign", "a button of another message"]


def test_someone_not_among_the_operators_is_refused_politely_and_nothing_changes(chat):
    chat.next_process(operators=("@olga",))
    message = failing_alert(chat)
    chat.fake.press(GROUP, message, position=(0, 2), user=IVAN)
    chat.answered()
    assert not chat.state.mutes
    answer = chat.fake.callback_answers()[-1]
    assert answer["show_alert"] is True and "operators" in answer["text"] and "501" in answer["text"]


def test_the_offset_moves_only_with_the_save_so_a_kill_before_it_applies_the_press_once_later(chat):
    message = failing_alert(chat)
    saved = State(health=dict(chat.state.health.items()), incidents=dict(chat.state.incidents.items()),
                  conversation=chat.state.conversation)  # what the store holds before the press
    chat.fake.press(GROUP, message, position=(0, 2), user=IVAN)

    def killed() -> None:
        raise KeyboardInterrupt  # the process dies in its save: nothing of the press is stored

    ends = time.monotonic() + 5
    while not chat.conversation.has_updates():
        assert time.monotonic() < ends
        time.sleep(0.02)
    with pytest.raises(KeyboardInterrupt):
        chat.conversation.answer(chat.state, killed, chat.clock.now())
    chat.next_process(state=saved)  # the next process starts from what was stored
    chat.answered()  # Telegram hands the unconfirmed press over again
    assert chat.state.mutes[ONE].by == "@ivan"
    assert [action.what for action in chat.state.incidents[ONE].actions] == ["muted for 1 day"]
    chat.next_process()  # from the saved offset: nothing more to read
    time.sleep(0.3)
    assert not chat.conversation.has_updates()


def test_commands_answer_what_status_and_sheets_say_and_change_what_they_name(chat):
    failing_alert(chat)
    for text in ("/status", "/failing", "/mute Store 003 2h new supplier", "/ack Store 001", "/mute Store 1h",
                 "/check Store 002"):
        chat.fake.write(GROUP, text, user=IVAN)
        chat.answered()
    status, failing, muted, acked, ambiguous, checking = chat.lines()[-6:]
    assert "3 spreadsheets: 1 ok · 2 failing" in status
    assert failing.startswith("Failing now (2)") and "Store 001 failing for" in failing
    assert chat.state.mutes[THREE].reason == "new supplier" and "Muted for 2 hours" in muted
    assert chat.state.incidents[ONE].acked_by == "@ivan" and "Acknowledged by @ivan" in acked
    assert "fits 3 spreadsheets" in ambiguous and "Store 001" in ambiguous  # never guessed
    assert "is read" in checking and chat.state.conversation.asked[0].spreadsheet_id == TWO


def test_a_command_from_a_chat_the_monitor_does_not_tell_is_ignored(chat, caplog):
    chat.fake.write(ELSEWHERE, "/mute Store 001 1d", user=IVAN)
    chat.answered()
    assert not chat.state.mutes and not [m for m in chat.fake.messages(ELSEWHERE)]
    assert any(r.getMessage() == "chat_update_ignored" for r in caplog.records)


def test_a_webhook_on_the_bot_is_said_once_with_the_fix_and_reading_stops(chat):
    chat.fake.set_webhook("https://example.org/hook")
    chat.next_process()
    chat.answered()
    assert "can't use getUpdates method while webhook is active" in chat.state.conversation.refused
    assert "deleteWebhook" in chat.state.conversation.refused
    [said] = chat.lines()
    assert said.startswith("📵 The buttons and commands here stopped working:") and "deleteWebhook" in said
    assert stops_reading(chat.conversation)
    chat.conversation = chat.listening()  # the next run asks again: still refused, said no more
    chat.answered()
    assert stops_reading(chat.conversation) and len(chat.lines()) == 1
    chat.fake.delete_webhook()  # someone fixed it
    chat.conversation = chat.listening()
    chat.fake.write(GROUP, "/help", user=IVAN)
    chat.answered()
    assert chat.state.conversation.refused is None
    assert chat.lines()[1].startswith("📱 The buttons and commands here work again")


def stops_reading(conversation: Conversation, seconds: float = 2.0) -> bool:
    ends = time.monotonic() + seconds
    while conversation.reading() and time.monotonic() < ends:
        time.sleep(0.02)
    return not conversation.reading()


def test_a_command_written_while_no_run_read_the_chat_is_not_obeyed_hours_later(chat):
    chat.fake.write(GROUP, "/mute Store 001 1d", user=IVAN)
    chat.clock.advance(3 * 3600)
    chat.answered()
    assert not chat.state.mutes
    assert "when no run was reading the chat: nothing done" in chat.lines()[-1]


def test_maintenance_from_the_chat_silences_what_it_names_until_then_and_ends_when_asked(chat):
    chat.fake.write(GROUP, "/maintenance 2h Store 001 moving servers", user=IVAN)
    chat.answered()
    [window] = chat.state.maintenance.windows
    assert window.spreadsheet_ids == (ONE,) and window.reason == "moving servers" and window.by == "@ivan"
    assert window.end == NOW + timedelta(hours=2)
    started = "Maintenance until 2026-03-02 11:00 UTC, started by @ivan: Store 001: moving servers"
    assert started in chat.lines()[-1]
    assert chat.state.alerts.maintenance == (window,)  # its beginning is told: the run says no more of it
    chat.fake.write(GROUP, "/maintenance end", user=IVAN)
    chat.answered()
    assert not [w for w in chat.state.maintenance.windows if w.in_force(chat.clock.now())]
    assert chat.lines()[-1] == "🛠 Maintenance ended by @ivan: Store 001."


def test_a_chat_unread_for_more_than_a_day_says_what_telegram_has_dropped(chat):
    chat.state.conversation = replace(chat.state.conversation, polled_at=NOW - timedelta(hours=30))
    chat.fake.write(GROUP, "/status", user=IVAN)
    chat.answered()
    [gap] = [line for line in chat.lines() if line.startswith("⚠️ Nothing read the chat")]
    assert "between 2026-03-01 03:00 UTC and now" in gap
    assert "what was asked before 2026-03-01 09:00 UTC is lost" in gap
    assert chat.state.conversation.polled_at == NOW
    chat.fake.write(GROUP, "/status", user=IVAN)
    chat.answered()
    assert sum(line.startswith("⚠️ Nothing read the chat") for line in chat.lines()) == 1  # said once


def stray_poll(chat: Chat) -> int:
    """A getUpdates of another client, as the last poll of a process that has just ended sends it,
    once the conversation's poll waits: it ends that poll (409). Its own status."""
    ends = time.monotonic() + 5
    while chat.fake.waiting_polls() == 0:
        assert time.monotonic() < ends, "the conversation does not poll"
        time.sleep(0.01)
    return another_poll(chat)


def another_poll(chat: Chat) -> int:
    url = f"{chat.server.base_url}/bot{TOKEN}/getUpdates"
    return httpx.post(url, json={"timeout": 5}, timeout=10).status_code


def test_a_poll_ended_once_by_another_is_polled_again_and_presses_still_count(chat, caplog):
    message = failing_alert(chat)
    assert stray_poll(chat) == 409  # ours, polling again, ended it in turn
    assert any(r.getMessage() == "chat_poll_conflict" for r in caplog.records)
    chat.fake.press(GROUP, message, position=(0, 2), user=IVAN)
    chat.answered()
    assert chat.state.mutes[ONE].by == "@ivan" and chat.state.conversation.refused is None
    assert not [line for line in chat.lines() if "stopped working" in line]


def test_another_program_polling_the_bot_all_along_is_said_once(chat):
    stop = threading.Event()

    def polls() -> None:  # whenever the conversation's poll waits, another ends it
        while not stop.is_set():
            if chat.fake.waiting_polls():
                another_poll(chat)
            time.sleep(0.01)

    other = threading.Thread(target=polls, daemon=True)
    other.start()
    try:
        chat.answered()
    finally:
        stop.set()
        other.join(10)
    assert "Another program reads this bot's updates" in chat.state.conversation.refused
    [said] = [line for line in chat.lines() if "stopped working" in line]
    assert "give the monitor a bot of its own" in said
