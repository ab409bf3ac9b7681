"""Delivery through real HTTP: TelegramSender (httpx) and the outbox against the fake Bot API.

The fake and the sender share one ManualClock: the sender's pacing and 429 waits advance it, the
fake's flood control reads it, so nothing here sleeps.
"""

from __future__ import annotations

import io
import json
import logging
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import SecretStr
from telegram_fixtures import TOKEN, closed_port_url, fake_telegram

from monitor.core.clock import ManualClock
from monitor.core.timefmt import format_utc
from monitor.notify.alerts import AlertSettings, Message
from monitor.notify.outbox import (
    ALERTS,
    OUTBOX,
    chat_id_for,
    deliver,
    enqueue,
    new_outbox,
    notify,
)
from monitor.notify.outbox import sender_for as outbox_sender
from monitor.notify.telegram import (
    PermanentChatError,
    PermanentMessageError,
    PrintingSender,
    RetryableDeliveryError,
    TelegramSender,
)
from monitor.sandbox.http import HTTPServerThread, Request, Response
from monitor.sandbox.telegram import FakeTelegram
from monitor.state import events as ev
from monitor.state.runner_state import RunnerState, dump_state, load_state

PRIVATE = 4242
GROUP = -4001
NASTY = 'Stock <Moscow> & "Co"'
QUIET = AlertSettings(summary="off", digest_at=None)  # alerts and reminders only


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))


@pytest.fixture
def fake(clock: ManualClock) -> FakeTelegram:
    return fake_telegram(clock, {PRIVATE: "Olga", GROUP: "Stock alerts"})


def sender_for(server, http, clock, chat_id=PRIVATE, token=TOKEN, **kwargs) -> TelegramSender:
    return TelegramSender(token, chat_id, server.base_url, client=http, clock=clock, **kwargs)


def event(kind, now, sid=None, name=None, **details) -> dict:
    return ev.Event.make(kind, now, "run", spreadsheet_id=sid, name=name, details=details).to_dict()


def went_bad(now, sid, name=None) -> dict:
    finding = {
        "check": "no errors",
        "kind": "formula_errors",
        "status": "fail",
        "message": "1 cell shows #REF!",
        "cells": ["Stock!F7"],
    }
    details = {"from": "ok", "to": "fail", "findings": [finding], "down_for_seconds": None}
    return event(ev.HEALTH_CHANGED, now, sid, name or sid, **details)


def came_back(now, sid, down, name=None) -> dict:
    details = {"from": "fail", "to": "ok", "findings": [], "down_for_seconds": down}
    return event(ev.HEALTH_CHANGED, now, sid, name or sid, **details)


def set_health(state: RunnerState, sid: str, health: str, now: datetime) -> None:
    at = format_utc(now)
    record = state.health(sid)
    if record.health != health:
        record.since = at
        record.down_since = at if health in ("fail", "error") else None
    record.health, record.last_checked_at = health, at


def persisted(state: RunnerState) -> RunnerState:
    """What the next run reads back: the state via its JSON form (outbox and alerts included)."""
    properties = dump_state(state)
    properties[OUTBOX] = json.dumps(state.outbox)
    properties[ALERTS] = json.dumps(state.alerts)
    again = load_state(properties)
    again.outbox = json.loads(properties[OUTBOX])
    again.alerts = json.loads(properties[ALERTS])
    return again


# ---- the message arrives as written --------------------------------------------------------------


def test_a_name_full_of_html_arrives_intact(server, http, clock, fake):
    fake.strict_ampersand = True  # would reject a forgotten escape that Telegram lets through
    state = RunnerState()
    state.add_event(went_bad(clock.now(), "abc-1", NASTY))
    set_health(state, "abc-1", "fail", clock.now())
    report = notify(state, QUIET, sender_for(server, http, clock), clock.now())
    assert report.count("sent") == 1
    [message] = fake.messages(PRIVATE)
    assert f"{NASTY} is failing" in message.plain_text
    link = next(e for e in message.entities if e["type"] == "text_link")
    assert link["url"] == "https://docs.google.com/spreadsheets/d/abc-1"
    units = message.plain_text.encode("utf-16-le")  # entity offsets count UTF-16 code units
    linked = units[2 * link["offset"] : 2 * (link["offset"] + link["length"])].decode("utf-16-le")
    assert linked == NASTY
    assert state.events == [] and state.outbox["pending"] == []


def test_six_hundred_failing_at_once_fit_telegram_and_are_paced_without_a_single_429(
    server, http, clock, fake
):
    state = RunnerState()
    for n in range(600):
        state.add_event(went_bad(clock.now(), f"id{n:04d}", f"{NASTY} #{n}"))
        set_health(state, f"id{n:04d}", "fail", clock.now())
    settings = AlertSettings(max_items=600, summary="off", digest_at=None)
    started = clock.monotonic()
    report = notify(
        state, settings, sender_for(server, http, clock, chat_id=GROUP), clock.now(), budget=None
    )
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


def test_a_forced_429_is_waited_out_on_the_clock_and_nothing_is_lost(server, http, clock, fake):
    fake.force_rate_limit(count=2, retry_after=7, chat_id=PRIVATE)
    outbox = new_outbox()
    for n in range(3):
        enqueue(outbox, Message(f"k{n}", f"message {n}"), clock.now())
    started = clock.monotonic()
    results = deliver(outbox, sender_for(server, http, clock), clock.now())
    assert [r.outcome for r in results] == ["sent", "sent", "sent"]
    assert [m.text for m in fake.messages(PRIVATE)] == ["message 0", "message 1", "message 2"]
    assert fake.stats()["sends"] == {"429": 2, "200": 3}
    assert clock.monotonic() - started >= 14 + 2  # two waits of 7 s, then 1 s between messages


def test_a_rate_limit_longer_than_the_sender_may_wait_keeps_the_message(server, http, clock, fake):
    fake.force_rate_limit(count=1, retry_after=600, chat_id=PRIVATE)
    outbox = new_outbox()
    enqueue(outbox, Message("k", "hello"), clock.now())
    [result] = deliver(outbox, sender_for(server, http, clock, max_wait=60), clock.now())
    assert result.outcome == "kept" and result.error["status"] == 429
    assert outbox["pending"][0]["attempts"] == 1
    assert deliver(outbox, sender_for(server, http, clock), clock.now())[0].outcome == "sent"


def test_a_backlog_drains_oldest_first_within_the_send_budget_of_each_run(
    server, http, clock, fake
):
    outbox = new_outbox()
    for n in range(45):
        enqueue(outbox, Message(f"k{n}", f"m{n}"), clock.now())
    for _ in range(3):  # three runs
        deliver(outbox, sender_for(server, http, clock, chat_id=GROUP), clock.now(), budget=20)
        clock.advance(300)
    assert [m.text for m in fake.messages(GROUP)] == [f"m{n}" for n in range(45)]
    assert fake.stats()["sends"] == {"200": 45}


def test_one_message_a_second_to_a_private_chat(server, http, clock, fake):
    sender = sender_for(server, http, clock)
    started = clock.monotonic()
    for n in range(5):
        sender.send(f"m{n}")
    assert fake.stats()["sends"] == {"200": 5}
    assert clock.monotonic() - started == pytest.approx(4.0)


# ---- outages and refusals ------------------------------------------------------------------------


def test_three_runs_without_telegram_then_everything_in_order_on_the_fourth(
    server, http, clock, fake
):
    state = RunnerState()
    down = TelegramSender(TOKEN, PRIVATE, closed_port_url(), client=http, clock=clock)
    for run in range(3):
        state.add_event(went_bad(clock.now(), f"s{run}"))
        set_health(state, f"s{run}", "fail", clock.now())
        report = notify(state, QUIET, down, clock.now())
        assert report.count("kept") == 1 and report.count("sent") == 0
        state = persisted(state)
        clock.advance(300)
    assert [entry["attempts"] for entry in state.outbox["pending"]] == [
        3,
        0,
        0,
    ]  # the head is tried
    state.add_event(came_back(clock.now(), "s0", 900))
    set_health(state, "s0", "ok", clock.now())
    report = notify(state, QUIET, sender_for(server, http, clock), clock.now())
    assert report.count("sent") == 4
    texts = [m.plain_text for m in fake.messages(PRIVATE)]
    assert [
        "s0 is failing" in texts[0],
        "s1 is failing" in texts[1],
        "s2 is failing" in texts[2],
        "s0 recovered after 15m" in texts[3],
    ] == [True] * 4
    assert len(set(texts)) == 4 and state.outbox["pending"] == []
    report = notify(persisted(state), QUIET, sender_for(server, http, clock), clock.now())
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

    def send(self, text: str):
        sent = self.inner.send(text)
        self.left -= 1
        if self.left == 0:
            raise Crash
        return sent


def test_a_crash_between_sending_and_recording_duplicates_at_most_one_message(
    server, http, clock, fake
):
    state = RunnerState()
    for n in range(4):
        state.add_event(went_bad(clock.now(), f"s{n}"))
        set_health(state, f"s{n}", "fail", clock.now())
        notify(state, QUIET, PrintingSender(io.StringIO()), clock.now(), budget=0)  # queued only
        clock.advance(300)
    disk: dict = {}

    def save() -> None:
        disk["state"] = persisted(state)

    with pytest.raises(Crash):
        notify(
            state,
            QUIET,
            DiesAfterSending(sender_for(server, http, clock), 2),
            clock.now(),
            checkpoint=save,
        )
    state = disk["state"]  # the next run starts from the last checkpoint
    notify(state, QUIET, sender_for(server, http, clock), clock.now(), checkpoint=save)
    texts = [m.plain_text for m in fake.messages(PRIVATE)]
    assert len(texts) == 5 and len(set(texts)) == 4  # one duplicate: the message in flight
    assert texts[1] == texts[2] and "s1 is failing" in texts[1]
    assert [f"s{n} is failing" in text for n, text in enumerate(texts[2:], start=1)] == [True] * 3


def test_recomposing_after_a_crash_enqueues_nothing_twice(clock):
    state = RunnerState()
    state.add_event(went_bad(clock.now(), "s1"))
    saved_events = list(state.events)
    printer = PrintingSender(io.StringIO())
    notify(state, QUIET, printer, clock.now())
    state.events.extend(saved_events)  # as if the run died before the events' removal was saved
    report = notify(state, QUIET, printer, clock.now())
    assert report.enqueued == 0 and report.results == []


def test_a_spreadsheet_failing_for_twelve_runs_gives_one_alert_and_one_resolved_message(
    server, http, clock, fake
):
    state = RunnerState()
    start = clock.now()
    for run in range(12):
        now = clock.now()
        if run == 0:
            state.add_event(went_bad(now, "s1", "Stock"))
        set_health(state, "s1", "fail", now)
        notify(state, QUIET, sender_for(server, http, clock), now)
        state = persisted(state)
        clock.advance(300)
    state.add_event(came_back(clock.now(), "s1", (clock.now() - start).total_seconds(), "Stock"))
    set_health(state, "s1", "ok", clock.now())
    notify(state, QUIET, sender_for(server, http, clock), clock.now())
    texts = [m.plain_text for m in fake.messages(PRIVATE)]
    assert len(texts) == 2
    assert "Stock is failing" in texts[0] and "Stock recovered after 1h" in texts[1]


def test_reminders_follow_the_policy_while_it_keeps_failing(server, http, clock, fake):
    settings = AlertSettings(reminder_every=timedelta(minutes=20), summary="off", digest_at=None)
    state = RunnerState()
    for run in range(12):  # 55 minutes of 5-minute runs: reminders at 20 and 40 minutes
        if run == 0:
            state.add_event(went_bad(clock.now(), "s1", "Stock"))
        set_health(state, "s1", "fail", clock.now())
        notify(state, settings, sender_for(server, http, clock), clock.now())
        state = persisted(state)
        clock.advance(300)
    texts = [m.plain_text for m in fake.messages(PRIVATE)]
    assert len(texts) == 3
    assert all("reminder: 1 still failing" in text for text in texts[1:])
    assert "Stock failing for 20m" in texts[1] and "Stock failing for 40m" in texts[2]


def test_a_blocked_bot_is_one_clear_error_not_a_storm_and_the_messages_wait(
    server, http, clock, fake, caplog
):
    caplog.set_level(logging.INFO)
    fake.block_chat(PRIVATE)
    outbox = new_outbox()
    for n in range(5):
        enqueue(outbox, Message(f"k{n}", f"m{n}"), clock.now())
    for _ in range(3):  # three runs
        [result] = deliver(outbox, sender_for(server, http, clock), clock.now())
        assert result.outcome == "kept" and result.error["scope"] == "chat"
    assert fake.stats()["sends"] == {"403": 3}  # one request per run
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in errors] == ["telegram_delivery_halted"]
    assert "blocked" in outbox["halted"]["description"] and len(outbox["pending"]) == 5
    fake.block_chat(PRIVATE, blocked=False)
    assert len(deliver(outbox, sender_for(server, http, clock), clock.now())) == 5
    assert outbox["halted"] is None


@pytest.mark.parametrize("setup", ["unknown_token", "chat_not_found"])
def test_bad_token_and_unknown_chat_are_permanent_for_the_chat(server, http, clock, fake, setup):
    if setup == "unknown_token":
        sender = sender_for(server, http, clock, token="999:not-registered")
    else:
        sender = sender_for(server, http, clock, chat_id=777)
    with pytest.raises(PermanentChatError) as caught:
        sender.send("hello")
    assert caught.value.permanent


def test_a_message_telegram_cannot_parse_is_dropped_and_the_next_goes(server, http, clock, fake):
    outbox = new_outbox()
    enqueue(outbox, Message("bad", "<b>never closed"), clock.now())
    enqueue(outbox, Message("good", "fine"), clock.now())
    results = deliver(outbox, sender_for(server, http, clock), clock.now())
    assert [r.outcome for r in results] == ["dropped", "sent"]
    assert (
        outbox["dropped"][0]["key"] == "bad"
        and "parse entities" in outbox["dropped"][0]["error"]["description"]
    )
    with pytest.raises(PermanentMessageError):
        sender_for(server, http, clock).send("<i>oops")


def test_telegram_unreachable_is_retryable(http, clock):
    sender = TelegramSender(TOKEN, PRIVATE, closed_port_url(), client=http, clock=clock)
    with pytest.raises(RetryableDeliveryError) as caught:
        sender.send("hello")
    assert not caught.value.permanent
    # not chained: httpx's exception holds the request, whose URL holds the token
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_migrated_group_is_followed_and_remembered(server, http, clock, fake):
    new_id = fake.migrate_chat(GROUP)
    outbox = new_outbox()
    enqueue(outbox, Message("k1", "first"), clock.now())
    enqueue(outbox, Message("k2", "second"), clock.now())
    results = deliver(outbox, sender_for(server, http, clock, chat_id=GROUP), clock.now())
    assert [r.outcome for r in results] == ["sent", "sent"]
    assert [m.text for m in fake.messages(new_id)] == ["first", "second"]
    assert outbox["migrations"] == {str(GROUP): str(new_id)}
    assert chat_id_for(outbox, GROUP) == str(new_id)
    assert chat_id_for(outbox, -5555) == "-5555"  # the config now names another chat
    outbox["migrations"][str(new_id)] = "-100999"  # and migrated again later
    assert chat_id_for(outbox, GROUP) == "-100999"


def test_messages_go_to_the_configured_topic(server, http, clock, fake):
    fake.add_chat(-1001234567890, title="Ops", topics=[7])
    sender = sender_for(server, http, clock, chat_id=-1001234567890, thread_id=7)
    sender.send("in the topic")
    assert fake.messages(-1001234567890)[0].message_thread_id == 7


# ---- the token stays secret ----------------------------------------------------------------------


def test_the_token_never_appears_in_logs_errors_reprs_or_state(server, http, clock, fake, caplog):
    caplog.set_level(logging.DEBUG)
    state = RunnerState()
    state.add_event(went_bad(clock.now(), "s1"))
    set_health(state, "s1", "fail", clock.now())
    down = TelegramSender(TOKEN, PRIVATE, closed_port_url(), clock=clock)  # its own httpx client
    notify(state, QUIET, down, clock.now())
    fake.force_rate_limit(count=1, retry_after=2)
    state.add_event(went_bad(clock.now(), "s2"))
    up = sender_for(server, http, clock)
    report = notify(state, QUIET, up, clock.now())
    assert report.count("sent") == 2
    fake.block_chat(PRIVATE)
    state.add_event(went_bad(clock.now(), "s3"))
    notify(state, QUIET, up, clock.now())
    errors = []
    for bad in (sender_for(server, http, clock, chat_id=777), down):
        try:
            bad.send("x")
        except Exception as error:  # noqa: BLE001 - every error's text is checked below
            errors.append(error)
    state_text = json.dumps({**dump_state(state), OUTBOX: state.outbox, ALERTS: state.alerts})
    assert len(caplog.records) >= 2  # the test saw logging at all
    fields = [json.dumps(getattr(r, "fields", {}), default=str) for r in caplog.records]
    assert any("httpx" in r.name for r in caplog.records) is False
    secret = TOKEN.split(":")[1]
    for text in [
        caplog.text,
        *fields,
        state_text,
        repr(up),
        repr(down),
        *map(str, errors),
        *(json.dumps(e.to_dict()) for e in errors),
    ]:
        assert secret not in text


def test_an_answer_echoing_the_token_is_scrubbed_and_a_malformed_token_is_not_quoted(http, clock):
    def echo(request: Request) -> Response:  # a misbehaving proxy that repeats the URL back
        body = {"ok": False, "error_code": 400, "description": f"Bad Request: {request.raw_path}"}
        return Response.json(400, body)

    with HTTPServerThread(echo) as proxy, pytest.raises(PermanentMessageError) as caught:
        sender_for(proxy, http, clock).send("x")
    assert "/bot[token]/sendMessage" in str(caught.value)
    assert TOKEN not in str(caught.value)
    broken = TOKEN + "\n"  # e.g. read from a file with its newline
    with pytest.raises(PermanentChatError) as caught:
        TelegramSender(broken, PRIVATE, "http://127.0.0.1:9", client=http, clock=clock).send("x")
    assert TOKEN not in str(caught.value) and "bad Telegram URL" in str(caught.value)


def test_httpx_would_have_logged_the_token_without_the_sender(server, http, caplog):
    """The check above can fail: httpx's INFO line carries the URL and so the token."""
    caplog.set_level(logging.INFO, logger="httpx")  # as a host app's logging setup might
    http.post(f"{server.base_url}/bot{TOKEN}/getMe")
    assert TOKEN in caplog.text


# ---- without Telegram ----------------------------------------------------------------------------


def test_without_telegram_messages_are_printed_readably(clock):
    stream = io.StringIO()
    state = RunnerState()
    state.add_event(went_bad(clock.now(), "abc", NASTY))
    set_health(state, "abc", "fail", clock.now())
    report = notify(state, QUIET, PrintingSender(stream), clock.now())
    assert report.count("sent") == 1
    text = stream.getvalue()
    assert f"🔴 {NASTY} (https://docs.google.com/spreadsheets/d/abc) is failing" in text
    assert "<b>" not in text and "&amp;" not in text
    assert text.startswith("sheet-monitor: 1 failing\n")


def test_muted_spreadsheets_stay_quiet_through_notify(clock):
    stream = io.StringIO()
    state = RunnerState()
    state.mutes["s1"] = {"until": format_utc(clock.now() + timedelta(hours=1)), "reason": "fixing"}
    state.add_event(went_bad(clock.now(), "s1"))
    set_health(state, "s1", "fail", clock.now())
    report = notify(
        state,
        AlertSettings(reminder_every=timedelta(minutes=1)),
        PrintingSender(stream),
        clock.now() + timedelta(minutes=30),
    )
    assert report.enqueued == 0 and stream.getvalue() == "" and state.events == []


def test_notify_reports_a_new_halt_once_so_the_caller_can_emit_one_event(server, http, clock, fake):
    fake.block_chat(PRIVATE)
    state = RunnerState()
    reports = []
    for n in range(2):
        state.add_event(went_bad(clock.now(), f"s{n}"))
        reports.append(notify(state, QUIET, sender_for(server, http, clock), clock.now()))
    assert [r.newly_halted for r in reports] == [True, False]
    assert "blocked" in reports[1].halted["description"]


def test_the_digest_counts_google_reads_since_the_last_one(clock):
    stream = io.StringIO()
    settings = AlertSettings(summary="off", digest_at=datetime(2026, 1, 1, 10, 0).time())
    state = RunnerState()
    for run, reads in enumerate((40, 2, 0)):  # 09:00, 09:05, 09:10 finished runs
        state.heartbeat = {
            "run_id": f"run{run}",
            "finished_at": format_utc(clock.now()),
            "stats": {"reads_by_credential": {"a": reads, "b": reads}},
        }
        notify(state, settings, PrintingSender(stream), clock.now())
        notify(state, settings, PrintingSender(stream), clock.now())  # the same run is counted once
        clock.advance(300)
    clock.advance(3600)
    notify(state, settings, PrintingSender(stream), clock.now())
    assert "read requests since the last digest 84" in stream.getvalue()
    assert state.alerts["reads_since_digest"] == 0


def test_a_finished_round_with_changes_gets_one_summary_and_the_digest_comes_daily(clock):
    from monitor.engine.tasks import DONE, Round

    stream = io.StringIO()
    settings = AlertSettings(summary="on_change", digest_at=datetime(2026, 1, 1, 10, 0).time())
    state = RunnerState()
    state.round = Round.build(["s1"], clock.now())
    notify(state, settings, PrintingSender(stream), clock.now())  # 09:00: install, no digest yet
    for task in state.round.tasks.values():
        task.status = DONE
    state.add_event(went_bad(clock.now(), "s1"))
    set_health(state, "s1", "fail", clock.now())
    notify(state, settings, PrintingSender(stream), clock.now())
    notify(state, settings, PrintingSender(stream), clock.now())
    assert stream.getvalue().count("round finished") == 1
    assert "daily digest" not in stream.getvalue()
    clock.advance(3600)  # 10:00 UTC
    notify(state, settings, PrintingSender(stream), clock.now())
    notify(state, settings, PrintingSender(stream), clock.now())
    assert stream.getvalue().count("daily digest") == 1
    assert "Still failing (1):" in stream.getvalue()


def test_the_config_decides_between_telegram_and_the_printer(server, http, clock, fake, tmp_path):
    from monitor.config import AlertsConfig, TelegramConfig

    settings = AlertSettings.from_config(AlertsConfig(timezone="Europe/Berlin", digest_at="off"))
    assert settings.timezone == "Europe/Berlin" and settings.digest_at is None
    assert settings.reminder_every == timedelta(hours=4)
    printer = outbox_sender(TelegramConfig(), new_outbox(), io.StringIO())
    assert isinstance(printer, PrintingSender)
    configured = TelegramConfig(chat_id=str(GROUP), api_base=server.base_url).model_copy(
        update={"bot_token": SecretStr(TOKEN)}
    )
    outbox = new_outbox()
    outbox["migrations"] = {str(GROUP): str(PRIVATE)}
    sender = outbox_sender(configured, outbox, io.StringIO(), clock=clock, client=http)
    sender.send("hi")
    assert [m.text for m in fake.messages(PRIVATE)] == ["hi"]
