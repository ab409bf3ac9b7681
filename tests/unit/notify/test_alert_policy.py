"""What the team hears: one test per row of docs/operations.md's table "What the team hears".

Each test drives whole cron runs as they happen: the engine's run reads the spreadsheets (a scripted
Google: each spreadsheet's stock quantity and price) and records what changed, then the real notifier
turns the run's events into messages and delivers them with the real sender, over HTTP, to the fake
Telegram; the test reads the chat.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time, timedelta

import pytest
from config_fixtures import FULL, load
from run_fixtures import Bench, Killed
from telegram_fixtures import PRIVATE, TOKEN, fake_telegram

from monitor.checks import ThresholdCheck
from monitor.config import MaintenanceWindow
from monitor.core.clock import ManualClock
from monitor.engine.inspect import SheetPlan
from monitor.notify.notifier import notify
from monitor.notify.routing import Routing
from monitor.notify.settings import AlertSettings
from monitor.notify.telegram import TelegramSender
from monitor.storage import MemoryLocation
from sheet_sandbox.http import HTTPServerThread

QUANTITY, PRICE = "Stock!C2:C3", "Stock!D2:D3"
CHECKS = (
    ThresholdCheck(name="stock", range=QUANTITY, aggregate="min", warn="< 5", fail="< 0"),
    ThresholdCheck(name="price", range=PRICE, aggregate="min", warn="< 1", fail="< 0"),
)
QUIET = AlertSettings(summary="off", digest_at=None)


class Stock:
    """Google as the run reads it: each spreadsheet's quantity and price; a read of a spreadsheet
    named in ``kill`` dies as a kill -9 during the request would (once per spreadsheet)."""

    def __init__(self) -> None:
        self.quantity: dict[str, float] = {}
        self.price: dict[str, float] = {}
        self.kill: set[str] = set()

    def read(self, spreadsheet_id, ranges, credential, timeout):
        if spreadsheet_id in self.kill:
            self.kill.discard(spreadsheet_id)
            raise Killed
        value = {QUANTITY: self.quantity[spreadsheet_id], PRICE: self.price[spreadsheet_id]}
        return [{"range": r, "majorDimension": "ROWS", "values": [[value[r]], [50]]} for r in ranges]

    read_detailed = None  # no cell shows an error: the run never asks for details

    def time_zone(self, spreadsheet_id, credential, timeout):
        return "Etc/GMT"


@dataclass
class Team:
    """One installation: its state, the runs cron starts, and the chat they tell."""

    clock: ManualClock
    server: HTTPServerThread
    fake: object
    settings: AlertSettings = QUIET
    routing: Routing = field(default_factory=Routing)  # owners, routes, where escalations go
    maintenance: tuple[MaintenanceWindow, ...] = ()  # the config's [[maintenance]] windows
    google: Stock = field(default_factory=Stock)
    bench: Bench = field(init=False)
    read_up_to: int = 0  # messages of the chat already read by the test

    def __post_init__(self) -> None:
        self.bench = Bench(self.google, [], MemoryLocation(), clock=self.clock)

    def sheet(self, n: int, quantity: float = 10, price: float = 9) -> str:
        sid = f"s{n}"
        if sid not in self.google.quantity:
            self.bench.plans.append(SheetPlan(sid, f"Store {n:03d}", CHECKS, (QUANTITY, PRICE)))
        self.google.quantity[sid], self.google.price[sid] = quantity, price
        return sid

    def run(self, sender: object | None = None) -> None:
        """One cron run: the engine's run, then the notifier at its end (not when the run dies)."""
        try:
            self.bench.run()
        except Killed:
            return
        with self.bench.session(actor=f"run-{self.bench.runs}") as session:
            state = session.state

            def save(outbox, memory) -> None:
                state.outbox, state.alerts = outbox, memory
                session.save()

            report = notify(state, state.outbox, state.alerts, self.settings, sender or self.telegram(),
                            self.clock.now(), names={plan.id: plan.name for plan in self.bench.plans},
                            checkpoint=save, routing=self.routing, maintenance=self.maintenance)
            save(report.outbox, report.memory)

    def next_round(self, minutes: float = 5) -> None:
        self.clock.advance(minutes * 60)
        self.run()

    def telegram(self) -> TelegramSender:
        return TelegramSender(TOKEN, PRIVATE, self.server.base_url, clock=self.clock)

    def heard(self) -> list[str]:
        """Every message in the chat so far, as people read it; the chat is then read."""
        texts = [message.plain_text for message in self.fake.messages(PRIVATE)][self.read_up_to:]
        self.read_up_to += len(texts)
        return texts


@pytest.fixture
def team() -> Iterator[Team]:
    clock = ManualClock(datetime(2026, 3, 2, 8, 0, tzinfo=UTC))
    fake = fake_telegram(clock, {PRIVATE: "Olga"})
    with HTTPServerThread(fake) as server:
        yield Team(clock, server, fake)


def lines(texts: list[str]) -> list[str]:
    return [line for text in texts for line in text.split("\n")]


# ---- a spreadsheet's verdict -------------------------------------------------------------------------


def test_a_first_check_announces_a_warning_or_a_failure_and_says_nothing_when_ok(team):
    team.sheet(1)
    team.sheet(2, quantity=3)
    team.sheet(3, quantity=-1)
    team.run()
    [message] = team.heard()
    assert "🟡 Store 002 warns: Stock:" in message
    assert "🔴 Store 003 is failing: Stock:" in message
    assert "Store 001" not in message


def test_ok_to_warn_and_then_a_new_finding_are_announced_each_time(team):
    team.sheet(1)
    team.run()
    team.sheet(1, quantity=3)
    team.next_round()
    [warns] = team.heard()
    assert "🟡 Store 001 warns: Stock:" in warns
    team.sheet(1, quantity=3, price=0.5)  # the price warns too
    team.next_round()
    [again] = team.heard()
    assert "🟡 Store 001 warns:" in again and "“price”:" in again


def test_the_same_findings_with_other_values_or_one_gone_say_nothing(team):
    team.sheet(1, quantity=3, price=0.5)
    team.run()
    assert len(team.heard()) == 1
    team.sheet(1, quantity=2, price=0.5)  # other values, the same two checks warn
    team.next_round()
    team.sheet(1, quantity=2, price=9)  # the price is fine again; the stock still warns
    team.next_round()
    assert team.heard() == []


def test_a_told_warning_that_ends_is_told_ok_again_and_one_nobody_heard_of_ends_in_silence(team):
    team.sheet(1, quantity=3)
    team.sheet(2, quantity=3)
    team.run()
    team.heard()
    with team.bench.session() as session:
        # Store 002's warning was never told: as the release before this one left its memory (it
        # announced no first warning, and remembered none).
        memory = session.state.alerts
        session.state.alerts = replace(memory, warned={"s1": memory.warned["s1"]})
    team.sheet(1)
    team.sheet(2)
    team.next_round()
    [message] = team.heard()
    assert "✅ Store 001 is ok again" in message and "Store 002" not in message


def test_failing_is_announced_and_its_end_told_with_how_long_and_what_still_warns(team):
    team.sheet(1)
    team.sheet(2, quantity=3)
    team.run()
    assert "Store 002 warns" in team.heard()[0]
    team.sheet(1, quantity=-1)
    team.sheet(2, quantity=-1)
    team.next_round()
    [failing] = team.heard()
    assert "🔴 Store 001 is failing" in failing and "🔴 Store 002 is failing" in failing
    team.sheet(1)
    team.sheet(2, quantity=3)
    team.next_round(minutes=60)
    [recovered] = team.heard()
    assert "✅ Store 001 recovered after 1 hour" in recovered
    assert "✅ Store 002 recovered after 1 hour, still warns: Stock:" in recovered


def test_a_new_finding_of_a_failure_is_announced_and_reminders_count_from_it(team):
    team.sheet(1, quantity=-1)
    team.run()
    team.heard()
    team.sheet(1, quantity=-1, price=-3)
    team.next_round()
    [again] = team.heard()
    assert "🔴 Store 001 is failing:" in again and "“price”:" in again
    team.next_round(minutes=4 * 60 - 5)  # four hours after the first alert, not after the last
    assert team.heard() == []
    team.next_round()
    [reminder] = team.heard()
    assert "reminder: 1 still failing" in reminder and "Store 001 failing for 4 hours" in reminder


def test_the_daily_digest_names_what_warns(team):
    team.settings = AlertSettings(summary="off", digest_at=time(8, 30))
    team.sheet(1, quantity=3)
    team.sheet(2)
    team.run()  # a fresh install waits for the next digest time
    team.heard()
    team.next_round(minutes=35)
    [digest] = team.heard()
    assert "daily digest" in digest and "Nothing is failing." in digest
    assert "Warning (1):\n🟡 Store 001 warns: Stock:" in digest


# ---- the run's one message ----------------------------------------------------------------------------


def test_a_round_summary_comes_in_the_runs_one_message_without_repeating_the_alert(team):
    team.settings = AlertSettings(summary="on_change", digest_at=None)
    team.sheet(1, quantity=-1)
    team.sheet(2)
    team.run()
    team.heard()
    team.sheet(2, quantity=-1)
    team.next_round()
    [message] = team.heard()  # the alert, then the summary: one message
    assert message.index("🔴 Store 002 is failing") < message.index("round done")
    summary = message[message.index("round done"):]
    assert "Failing now (2):" in summary and "Store 001 failing for 5 minutes" in summary
    assert "Store 002" not in summary and "1 named above" in summary
    assert "failing for 0 seconds" not in message


def test_summary_off_in_the_config_sends_no_summary(team, tmp_path):
    config = load(tmp_path, FULL.replace('summary = "every_round"', 'summary = "off"'), require_secrets=False)
    team.settings = AlertSettings.from_config(config.alerts)
    team.sheet(1, quantity=-1)
    team.run()
    [message] = team.heard()
    assert "round finished" not in message and "is failing" in message


# ---- runs that die ------------------------------------------------------------------------------------


def test_a_storm_of_runs_dying_is_told_once_then_once_when_runs_finish_again(team):
    ids = [team.sheet(n) for n in range(12)]
    team.run()
    for sid in ids:  # each round's first read dies; the next run takes over and finishes
        team.google.kill.add(sid)
        team.next_round()
        team.run()
    crashes = [line for line in lines(team.heard()) if "died mid-round" in line]
    assert len(crashes) == 1 and crashes[0].startswith("♻️ The previous run died mid-round")
    for _ in range(6):  # half an hour of runs that finish
        team.next_round()
    [message] = team.heard()
    assert "✅ Runs finish again: 12 runs died mid-round between 2026-03-02 08:05 UTC and " in message
    assert "(12 tasks taken over)" in message
    team.google.kill.add(ids[0])
    team.next_round()
    team.run()
    assert [line for line in lines(team.heard()) if "died mid-round" in line]  # a new outage


class DiesAfterTelegramTook:
    """The real sender, in a process killed right after Telegram accepted its first message."""

    def __init__(self, inner: TelegramSender) -> None:
        self.inner = inner
        self.chat_id = inner.chat_id

    def send(self, text: str, keyboard=()):
        self.inner.send(text, keyboard)
        raise Killed


def test_a_message_whose_send_was_cut_off_goes_again_marked_as_a_possible_repeat(team):
    team.sheet(1, quantity=-1)
    with pytest.raises(Killed):
        team.run(DiesAfterTelegramTook(team.telegram()))
    team.next_round()
    first, again = team.heard()
    note, repeated = again.split("\n\n", 1)
    assert note.startswith("↻ Sent again:") and repeated == first and "Store 001 is failing" in first
    team.sheet(1)
    team.next_round()
    [recovered] = team.heard()
    assert not recovered.startswith("↻") and "recovered" in recovered


def test_a_first_round_with_many_problems_is_one_short_message_counted_by_kind_with_the_worst_named(team):
    team.settings = AlertSettings(summary="on_change", digest_at=None,
                                  report_url="https://ops.example.org/sheet-monitor/")
    for number in range(1, 61):  # 60 spreadsheets: 24 failing, 12 warning, 24 fine
        team.sheet(number, quantity=-1 if number % 5 < 2 else 3 if number % 5 == 2 else 10)
    team.run()
    [message] = team.heard()
    lines = message.split("\n")
    assert lines[0] == "sheet-monitor: 24 new failures, 12 new warnings"
    assert lines[1] == "60 spreadsheets: 24 ok · 24 failing · 12 warning"
    assert "By kind: 36 out of bounds" in message and "Worst first:" in message
    assert lines[-1] == "+31 more: see the status page or sheet-monitor sheets"
    assert sum(line.startswith(("🔴", "🟡")) for line in lines) == 5  # the worst few, by name
    assert "round done" not in message  # the counts above are the summary's
    assert len(message) < 1500  # one phone screen or two, not five 4 kB messages
    team.sheet(7, quantity=10)
    team.next_round()
    [later] = team.heard()  # after it, changes are told one by one again
    assert later.startswith("sheet-monitor: 1 recovered")


def test_a_long_message_whose_send_was_cut_off_is_marked_as_a_repeat_too(team):
    # A hundred failing spreadsheets listed whole (no short form, no cut): the message fills Telegram's
    # pieces, and the one sent again still has room for the line saying it may repeat one.
    team.settings = AlertSettings(summary="off", digest_at=None, max_items=100, flood_after=100)
    for number in range(1, 101):
        team.sheet(number, quantity=-1)
    with pytest.raises(Killed):
        team.run(DiesAfterTelegramTook(team.telegram()))
    team.next_round()
    first, again, *rest = team.heard()
    assert rest  # a long message, in pieces
    note, repeated = again.split("\n\n", 1)
    assert note.startswith("↻ Sent again:") and repeated == first
    sent = team.fake.messages(PRIVATE)
    assert all(len(message.plain_text) <= 4096 for message in sent)


def test_a_summary_lists_the_failing_sheets_an_alert_cut_short_only_counted(team):
    team.settings = AlertSettings(summary="on_change", digest_at=None, max_items=2)
    for number in (1, 2, 3):
        team.sheet(number)
    team.run()
    team.heard()
    for number in (1, 2, 3):
        team.sheet(number, quantity=-1)
    team.next_round()
    [message] = team.heard()
    assert "+1 more (" in message  # the alert shows two lines of three
    summary = message[message.index("round done"):]
    assert "Failing now (3):" in summary and "2 named above" in summary
    listed = [number for number in (1, 2, 3) if f"Store 00{number} failing for" in summary]
    assert len(listed) == 1  # the one the alert only counted


# ---- escalation and maintenance -----------------------------------------------------------------------


def test_a_failure_nobody_acknowledged_is_escalated_once_to_its_owner_after_escalate_after(team):
    team.settings = replace(QUIET, escalate_after=timedelta(hours=2))
    team.routing = Routing(owners={"s1": "@olga"})
    team.sheet(1, quantity=-1)
    team.sheet(2, quantity=-1)
    team.run()
    assert len(team.heard()) == 1  # the alert
    with team.bench.session() as session:  # Store 002's is acknowledged (its button, or /ack)
        session.state.incidents["s2"] = session.state.incidents["s2"].acknowledge("@ivan", team.clock.now())
    for _ in range(23):  # until 09:55
        team.next_round()
    assert team.heard() == []
    team.next_round()  # 10:00: open for 2 hours
    [escalated] = team.heard()
    assert "⏫ Store 001 has been failing for 2 hours and nobody acknowledged it · owner: @olga" in escalated
    assert "Store 002" not in escalated
    for _ in range(12):
        team.next_round()
    assert team.heard() == []  # once


def test_a_maintenance_window_silences_what_it_covers_and_its_end_tells_what_fails_now(team):
    begins, ends = team.clock.now() + timedelta(minutes=5), team.clock.now() + timedelta(hours=2, minutes=5)
    team.maintenance = (MaintenanceWindow("cfg-servers", "moving the servers", ("s1", "s2"), (),
                                          "monitor.toml:40", start=begins, end=ends),)
    for number in (1, 2, 3):
        team.sheet(number)
    team.run()
    assert team.heard() == []
    team.next_round()  # 08:05
    [began] = team.heard()
    assert ("🛠 Maintenance until 2026-03-02 10:05 UTC: Store 001, Store 002: moving the servers "
            "(silenced until then, still checked)") in began
    team.sheet(1, quantity=-1)
    team.sheet(3, quantity=-1)
    team.next_round()
    [alert] = team.heard()
    assert "🔴 Store 003 is failing" in alert and "Store 001" not in alert
    team.clock.advance((ends - team.clock.now()).total_seconds() - 1)
    team.run()  # a second before its end: Store 001 is still silenced, though it fails
    assert team.heard() == []
    team.clock.advance(1)
    team.run()
    [over] = team.heard()
    assert "🛠 Maintenance over (moving the servers): 2 spreadsheets; failing now: Store 001" in over
    team.sheet(1)
    team.next_round()
    [recovered] = team.heard()
    assert "✅ Store 001 recovered" in recovered  # told as failing when the window ended
