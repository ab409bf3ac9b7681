"""``notify`` end to end: a RunnerState's events -> messages -> the outbox -> the fake Bot API over HTTP.

A :class:`Site` stands for one installation across runs: it stores the outbox and the alert memory
each pass returns, and ``next_run()`` reads every document back through the state file's encoding.
"""

from __future__ import annotations

import io
import logging
from datetime import datetime, time, timedelta

import pytest
from notify_helpers import NASTY, Site, came_back, set_health, went_bad
from telegram_fixtures import GROUP, PRIVATE, TOKEN, closed_port_url

from monitor.engine.events import ApiRecovered, StateEntryDamaged
from monitor.engine.health import FAIL, OK
from monitor.engine.mutes import Mute
from monitor.engine.tasks import Round
from monitor.notify.documents import AlertMemory, Outbox
from monitor.notify.settings import AlertSettings
from monitor.notify.telegram import PrintingSender, TelegramSender
from monitor.state import schema

QUIET = AlertSettings(summary="off", digest_at=None)  # alerts and reminders only


def telegram(server, http, clock, chat_id=PRIVATE) -> TelegramSender:
    return TelegramSender(TOKEN, chat_id, server.base_url, client=http, clock=clock)


def failing(site: Site, now: datetime, sid: str, name: str | None = None) -> None:
    site.add(went_bad(sid, name, at=now))
    set_health(site.state, sid, FAIL, now)


# ---- the message arrives as written --------------------------------------------------------------


def test_a_name_full_of_html_arrives_intact(server, http, clock, fake):
    fake.strict_ampersand = True  # would reject a forgotten escape that Telegram lets through
    site = Site()
    failing(site, clock.now(), "abc-1", NASTY)
    report = site.notify(QUIET, telegram(server, http, clock), clock.now())
    assert report.count("sent") == 1 and report.enqueued == 1
    [message] = fake.messages(PRIVATE)
    assert f"{NASTY} is failing" in message.plain_text
    link = next(e for e in message.entities if e["type"] == "text_link")
    assert link["url"] == "https://docs.google.com/spreadsheets/d/abc-1"
    units = message.plain_text.encode("utf-16-le")  # entity offsets count UTF-16 code units
    linked = units[2 * link["offset"] : 2 * (link["offset"] + link["length"])].decode("utf-16-le")
    assert linked == NASTY
    assert len(site.state.events) == 0 and site.outbox.pending == ()


def test_six_hundred_failing_at_once_fit_telegram_and_are_paced_without_a_single_429(
    server, http, clock, fake
):
    site = Site()
    for n in range(600):
        failing(site, clock.now(), f"id{n:04d}", f"{NASTY} #{n}")
    settings = AlertSettings(max_items=600, flood_after=600, summary="off", digest_at=None)
    started = clock.monotonic()
    report = site.notify(settings, telegram(server, http, clock, chat_id=GROUP), clock.now(), budget=None)
    sent = fake.messages(GROUP)
    assert len(sent) > 20  # more than a group's minute: pacing had to wait
    assert report.count("sent") == len(sent)
    assert fake.stats()["sends"] == {"200": len(sent)}
    assert all(len(m.text) <= 4096 and len(m.plain_text) <= 4096 for m in sent)
    names = [
        line.split(" is failing")[0]
        for m in sent
        for line in m.plain_text.split("\n")
        if " is failing" in line
    ]
    assert names == [f"🔴 {NASTY} #{n}" for n in range(600)]
    assert clock.monotonic() - started >= 60  # 20 per minute to a group


def test_new_kinds_of_event_reach_the_chat(server, http, clock, fake):
    site = Site()
    site.add(
        StateEntryDamaged(
            at=clock.now(),
            run_id="admin-mute",
            key="mute/s1",
            problem="until: Field required",
            set_aside_as="damaged/mute/s1",
        ),
        ApiRecovered(at=clock.now(), run_id="run", degraded_since=clock.now() - timedelta(hours=1)),
    )
    site.notify(QUIET, telegram(server, http, clock), clock.now())
    [message] = fake.messages(PRIVATE)
    assert message.plain_text.split("\n")[0] == "sheet-monitor: 1 state entry damaged, 1 recovered"
    assert "set aside: mute/s1 (until: Field required)" in message.plain_text
    assert "Google API answers again (degraded since 2026-03-02 08:00 UTC)" in message.plain_text


# ---- outages and crashes -------------------------------------------------------------------------


def test_three_runs_without_telegram_then_everything_in_order_on_the_fourth(server, http, clock, fake):
    site = Site()
    down = TelegramSender(TOKEN, PRIVATE, closed_port_url(), client=http, clock=clock)
    for run in range(3):
        failing(site, clock.now(), f"s{run}")
        report = site.notify(QUIET, down, clock.now())
        assert report.count("kept") == 1 and report.count("sent") == 0
        site = site.next_run()
        clock.advance(300)
    assert [entry.attempts for entry in site.outbox.pending] == [3, 0, 0]  # only the head is tried
    site.add(came_back("s0", 900, at=clock.now()))
    set_health(site.state, "s0", OK, clock.now())
    report = site.notify(QUIET, telegram(server, http, clock), clock.now())
    assert report.count("sent") == 4
    texts = [m.plain_text for m in fake.messages(PRIVATE)]
    expected = ("s0 is failing", "s1 is failing", "s2 is failing", "s0 recovered after 15 minutes")
    assert all(part in text for part, text in zip(expected, texts, strict=True))
    assert len(set(texts)) == 4 and site.outbox.pending == ()
    report = site.next_run().notify(QUIET, telegram(server, http, clock), clock.now())
    assert report.count("sent") == 0 and len(fake.messages(PRIVATE)) == 4  # nothing sent twice


class Crash(BaseException):
    """The process dies: nothing in the monitor catches it."""


class DiesAfterSending:
    """A real sender whose process dies right after Telegram accepted its ``sends``-th message,
    before the outbox could record it."""

    def __init__(self, inner: TelegramSender, sends: int) -> None:
        self.inner, self.left = inner, sends

    @property
    def chat_id(self) -> str:
        return self.inner.chat_id

    def send(self, text: str, keyboard=()):
        sent = self.inner.send(text)
        self.left -= 1
        if self.left == 0:
            raise Crash
        return sent


def test_a_crash_between_sending_and_recording_repeats_one_message_marked_as_a_repeat(
    server, http, clock, fake
):
    site = Site()
    for n in range(4):
        failing(site, clock.now(), f"s{n}")
        site.notify(QUIET, PrintingSender(io.StringIO()), clock.now(), budget=0)  # queued only
        clock.advance(300)
    disk: dict[str, Site] = {}

    def save(outbox: Outbox, memory: AlertMemory) -> None:
        site.outbox, site.memory = outbox, memory
        disk["site"] = site.next_run()

    with pytest.raises(Crash):
        site.notify(QUIET, DiesAfterSending(telegram(server, http, clock), 2), clock.now(), checkpoint=save)
    site = disk["site"]  # the next run starts from the last checkpoint
    site.notify(QUIET, telegram(server, http, clock), clock.now(), checkpoint=save)
    texts = [m.plain_text for m in fake.messages(PRIVATE)]
    assert len(texts) == 5  # one repeat: the message in flight when the run died
    note, repeated = texts[2].split("\n\n", 1)
    assert note.startswith("↻ Sent again") and "this one repeats it" in note
    assert repeated == texts[1] and "s1 is failing" in texts[1]
    assert [f"s{n} is failing" in text for n, text in enumerate(texts[2:], start=1)] == [True] * 3
    assert not any(text.startswith("↻") for text in texts[3:])  # only the one in doubt is marked
    assert site.outbox.sending is None


def test_the_first_checkpoint_holds_the_composed_messages_and_not_their_events(clock):
    site = Site()
    failing(site, clock.now(), "s1")
    saved: list[tuple[int, int, int]] = []

    def save(outbox: Outbox, memory: AlertMemory) -> None:
        saved.append((len(outbox.pending), len(site.state.events), len(memory.alerted), outbox.sending))

    site.notify(QUIET, PrintingSender(io.StringIO()), clock.now(), checkpoint=save)
    [key] = site.outbox.sent_keys
    # composed and remembered; marked as being sent before the request; then sent
    assert saved == [(1, 0, 1, None), (1, 0, 1, key), (0, 0, 1, None)]


def test_recomposing_after_a_crash_enqueues_nothing_twice(clock):
    site = Site()
    site.add(went_bad("s1", at=clock.now()))
    saved_events = [event for _, event in site.state.events.pending()]
    printer = PrintingSender(io.StringIO())
    site.notify(QUIET, printer, clock.now())
    site.add(*saved_events)  # as if the run died before the events' removal was saved
    report = site.notify(QUIET, printer, clock.now())
    assert report.enqueued == 0 and report.results == ()


def test_only_the_events_notify_saw_are_removed(clock):
    site = Site()
    site.add(went_bad("s1", at=clock.now()))

    class AddsAnEventWhileSending(PrintingSender):
        def send(self, text: str, keyboard=()):
            site.add(went_bad("s2", at=clock.now()))  # as another producer would, mid-pass
            return super().send(text)

    site.notify(QUIET, AddsAnEventWhileSending(io.StringIO()), clock.now())
    assert [event.spreadsheet_id for event in site.state.events] == ["s2"]


def keeps_failing(site: Site, settings: AlertSettings, new_sender, clock, runs: int = 12) -> Site:
    """``runs`` 5-minute runs (each a new process: a new sender, the state read back) during which
    "Stock" (s1) keeps failing; the first run saw it go bad."""
    site.add(went_bad("s1", "Stock", at=clock.now()))
    for _ in range(runs):
        set_health(site.state, "s1", FAIL, clock.now())
        site.notify(settings, new_sender(), clock.now())
        site = site.next_run()
        clock.advance(300)
    return site


def test_a_spreadsheet_failing_for_twelve_runs_gives_one_alert_and_one_resolved_message(
    server, http, clock, fake
):
    start = clock.now()
    site = keeps_failing(Site(), QUIET, lambda: telegram(server, http, clock), clock)
    site.add(came_back("s1", (clock.now() - start).total_seconds(), "Stock", at=clock.now()))
    set_health(site.state, "s1", OK, clock.now())
    site.notify(QUIET, telegram(server, http, clock), clock.now())
    texts = [m.plain_text for m in fake.messages(PRIVATE)]
    assert len(texts) == 2
    assert "Stock is failing" in texts[0] and "Stock recovered after 1 hour" in texts[1]


def test_reminders_follow_the_policy_while_it_keeps_failing(server, http, clock, fake):
    settings = AlertSettings(reminder_every=timedelta(minutes=20), summary="off", digest_at=None)
    # 55 minutes of 5-minute runs: reminders at 20 and 40 minutes
    keeps_failing(Site(), settings, lambda: telegram(server, http, clock), clock)
    texts = [m.plain_text for m in fake.messages(PRIVATE)]
    assert len(texts) == 3
    assert all("reminder: 1 still failing" in text for text in texts[1:])
    assert "Stock failing for 20 minutes" in texts[1] and "Stock failing for 40 minutes" in texts[2]


def test_the_token_never_appears_in_logs_or_the_stored_state(server, http, clock, fake, caplog):
    caplog.set_level(logging.DEBUG)
    site = Site()
    failing(site, clock.now(), "s1")
    down = TelegramSender(TOKEN, PRIVATE, closed_port_url(), clock=clock)  # its own httpx client
    site.notify(QUIET, down, clock.now())
    down.close()
    fake.force_rate_limit(count=1, retry_after=2)
    failing(site, clock.now(), "s2")
    assert site.notify(QUIET, telegram(server, http, clock), clock.now()).count("sent") == 2
    fake.block_chat(PRIVATE)
    failing(site, clock.now(), "s3")
    site.notify(QUIET, telegram(server, http, clock), clock.now())
    stored_text = schema.OUTBOX.encode(site.outbox) + schema.ALERTS.encode(site.memory)
    assert len(caplog.records) >= 3 and "blocked" in stored_text  # logs and errors were kept
    fields = [repr(getattr(r, "fields", {})) for r in caplog.records]
    secret = TOKEN.split(":")[1]
    assert all(secret not in text for text in [caplog.text, *fields, stored_text])


# ---- muting, halts, summaries and the digest -----------------------------------------------------


def test_without_telegram_messages_are_printed_readably(clock):
    stream = io.StringIO()
    site = Site()
    failing(site, clock.now(), "abc", NASTY)
    assert site.notify(QUIET, PrintingSender(stream), clock.now()).count("sent") == 1
    text = stream.getvalue()
    assert f"🔴 {NASTY} (https://docs.google.com/spreadsheets/d/abc) is failing" in text
    assert "<b>" not in text and "&amp;" not in text
    assert text.startswith("sheet-monitor: 1 new failure\nFailing now: 1 of 1 spreadsheet\n")


def test_muted_spreadsheets_stay_quiet_through_notify(clock):
    stream = io.StringIO()
    site = Site()
    site.state.mutes["s1"] = Mute(until=clock.now() + timedelta(hours=1), reason="fixing")
    failing(site, clock.now(), "s1")
    settings = AlertSettings(reminder_every=timedelta(minutes=1))
    report = site.notify(settings, PrintingSender(stream), clock.now() + timedelta(minutes=30))
    assert report.enqueued == 0 and stream.getvalue() == "" and len(site.state.events) == 0


def test_messages_held_while_telegram_refused_the_chat_go_as_one_saying_why_once_it_works(
    server, http, clock, fake
):
    fake.block_chat(PRIVATE)
    site = Site()
    for n in range(3):  # three runs, each with news, while the chat is refused
        failing(site, clock.now(), f"s{n}", f"Store {n}")
        report = site.notify(QUIET, telegram(server, http, clock), clock.now())
        site = site.next_run()
        clock.advance(300)
    assert "blocked" in report.halted.description and len(site.outbox.pending) == 1  # joined while held
    assert fake.messages(PRIVATE) == []
    fake.block_chat(PRIVATE, blocked=False)  # the bot is let back in
    report = site.notify(QUIET, telegram(server, http, clock), clock.now())
    [message] = fake.messages(PRIVATE)
    text = message.plain_text
    assert text.startswith("📵 Held back since 2026-03-02 09:00 UTC: Telegram refused this chat (403: "
                           "Forbidden: bot was blocked by the user). What follows came late, oldest first.")
    stores = [text.index(f"Store {n} is failing") for n in range(3)]
    assert stores == sorted(stores)
    assert report.halted is None and site.outbox.pending == () and report.count("sent") == 1
    again = site.next_run()
    failing(again, clock.now(), "s9", "Store 9")
    again.notify(QUIET, telegram(server, http, clock), clock.now())
    assert not fake.messages(PRIVATE)[-1].plain_text.startswith("📵")  # the chat works: no note


def test_a_finished_round_with_changes_gets_one_summary_and_the_digest_comes_daily(clock):
    stream = io.StringIO()
    settings = AlertSettings(summary="on_change", digest_at=time(10, 0))
    site = Site()
    site.state.round = Round.build(["s1"], clock.now())
    site.notify(settings, PrintingSender(stream), clock.now())  # 09:00: install, no digest yet
    for task in list(site.state.round.tasks.values()):
        site.state.round.start(task)
        site.state.round.succeed(task, clock.now())
    failing(site, clock.now(), "s1")
    site.notify(settings, PrintingSender(stream), clock.now())
    site.notify(settings, PrintingSender(stream), clock.now())
    assert stream.getvalue().count("round done") == 1
    assert "daily digest" not in stream.getvalue()
    clock.advance(3600)  # 10:00 UTC
    site.notify(settings, PrintingSender(stream), clock.now())
    site.next_run().notify(settings, PrintingSender(stream), clock.now())
    assert stream.getvalue().count("daily digest") == 1
    assert "Still failing (1):" in stream.getvalue()
