"""monitor.alerts, pure: events -> grouped HTML messages, reminders, summaries, digest timing."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

from monitor.core.timefmt import format_utc
from monitor.engine.health import SheetHealth
from monitor.notify import alerts
from monitor.notify.alerts import AlertSettings
from monitor.sandbox.telegram_html import parse_html
from monitor.state import events as ev

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
NASTY = 'Stock <Moscow> & "Co"'
FINDING = {"check": "stock", "kind": "threshold", "status": "fail", "message": "below 10", "cells": ["A1"]}


def event(kind: str, sid: str | None = None, name: str | None = None, at: datetime = NOW, **details) -> dict:
    return ev.Event.make(kind, at, "run-1", spreadsheet_id=sid, name=name, details=details).to_dict()


def failing(sid: str, name: str | None = None, cells=("Stock!F7",)) -> dict:
    finding = {
        "check": "no errors",
        "kind": "formula_errors",
        "status": "fail",
        "message": "2 cells show #REF!",
        "cells": list(cells),
    }
    return event(
        ev.HEALTH_CHANGED,
        sid,
        name or sid,
        **{"from": "ok", "to": "fail", "findings": [finding], "down_for_seconds": None},
    )


def recovered(sid: str, name: str | None = None, down: float = 7500) -> dict:
    return event(
        ev.HEALTH_CHANGED,
        sid,
        name or sid,
        **{"from": "fail", "to": "ok", "findings": [], "down_for_seconds": down},
    )


def bad_sheet(down_since: datetime, health: str = "fail") -> SheetHealth:
    at = format_utc(down_since)
    return SheetHealth(
        health=health,
        since=at,
        last_checked_at=at,
        down_since=at,
        findings=[FINDING],
    )


def test_names_and_values_are_escaped_and_linked():
    [message] = alerts.compose([failing("abc-1", NASTY, cells=["'<b>'!A1"])], {}, NOW, AlertSettings())
    parsed = parse_html(message.text, strict_ampersand=True)  # Telegram's own parser accepts it
    assert NASTY in parsed.text
    assert "'<b>'!A1" in parsed.text
    links = [e for e in parsed.entities if e["type"] == "text_link"]
    assert links[0]["url"] == "https://docs.google.com/spreadsheets/d/abc-1"


def test_one_run_gives_one_message_with_counts_first_items_and_the_rest_counted():
    events = [failing(f"s{n}") for n in range(30)] + [
        recovered("r1"),
        event(ev.API_DEGRADED, failing_in_a_row=8),
    ]
    [message] = alerts.compose(events, {}, NOW, AlertSettings(max_items=10))
    lines = message.text.split("\n")
    assert lines[0] == "<b>sheet-monitor: 1 API degraded, 30 failing, 1 recovered</b>"
    assert "Google API degraded" in lines[3]  # the system problem goes first
    assert sum("is failing" in line for line in lines) == 9
    assert lines[-1] == "+22 more"


def test_recovery_says_how_long_it_was_down_and_cell_references_are_listed():
    [message] = alerts.compose([recovered("s1", down=7500)], {}, NOW, AlertSettings())
    assert "recovered after 2h5m" in message.text
    [message] = alerts.compose(
        [failing("s2", cells=[f"A{n}" for n in range(1, 9)])], {}, NOW, AlertSettings()
    )
    assert "(A1, A2, A3, A4, A5 +3)" in message.text


def test_muted_spreadsheets_alert_nobody():
    events = [failing("muted"), failing("loud")]
    [message] = alerts.compose(events, {}, NOW, AlertSettings(), muted={"muted"})
    assert "loud" in message.text and "muted" not in message.text
    assert alerts.compose([failing("muted")], {}, NOW, AlertSettings(), muted={"muted"}) == []


def test_a_spreadsheet_that_failed_and_came_back_within_a_run_is_told_once_as_recovered():
    [message] = alerts.compose([failing("s1"), recovered("s1")], {}, NOW, AlertSettings())
    assert "1 recovered" in message.text and "failing" not in message.text.split("\n")[0]


def test_events_that_change_nothing_for_people_make_no_message():
    unknown_to_ok = event(ev.HEALTH_CHANGED, "s1", "s1", **{"from": "unknown", "to": "ok", "findings": []})
    assert alerts.compose([unknown_to_ok], {}, NOW, AlertSettings()) == []
    assert alerts.compose([], {}, NOW, AlertSettings()) == []


def test_the_same_events_compose_the_same_key_and_other_events_another():
    first = alerts.compose([failing("s1")], {}, NOW, AlertSettings())
    again = alerts.compose([failing("s1")], {}, NOW, AlertSettings())
    other = alerts.compose([failing("s2")], {}, NOW, AlertSettings())
    assert first[0].key == again[0].key != other[0].key


def test_every_event_kind_renders_as_valid_telegram_html():
    events = [
        failing("a"),
        recovered("b"),
        event(
            ev.DEAD_LETTERED,
            "c",
            NASTY,
            error={
                "error_class": "permanent",
                "http_status": 404,
                "message": "Requested entity <was> not found",
                "range": "A1",
            },
            attempts=3,
        ),
        event(ev.RECOVERED, "d", "d", down_for_seconds=600, health="warn", findings=[], last_error={}),
        event(ev.RECOVERED, api=True, degraded_since=format_utc(NOW)),
        event(ev.BREAKER_OPENED, "e", "e", consecutive_failures=3, probe_at=format_utc(NOW)),
        event(ev.BREAKER_CLOSED, "f", "f", down_seconds=3600),
        event(ev.FALLING_BEHIND, round_id="r1", round_started_at=format_utc(NOW), done=5, total=9),
        event(ev.CRASH_RECOVERED, previous_run_id="x", reclaimed=2, poisoned=1),
        event(ev.STATE_RESTORED),
        event(ev.CONFIG_PROBLEM, "g", "g", message="range Sheet9!A1 does not exist"),
        event(
            ev.DELIVERY_HALTED, since=format_utc(NOW), status=403, description="Forbidden: <bot> was blocked"
        ),
    ]
    [message] = alerts.compose(events, {}, NOW, AlertSettings())
    parsed = parse_html(message.text, strict_ampersand=True)
    assert len(message.text.split("\n")) == 3 + 12
    assert "Telegram refused messages since" in parsed.text and "<bot> was blocked" in parsed.text
    assert "Requested entity <was> not found" in parsed.text
    assert "checks resumed after 1h" in parsed.text


# ---- splitting -----------------------------------------------------------------------------------


def test_six_hundred_items_split_on_line_boundaries_within_the_limit():
    events = [failing(f"id{n:04d}", f"{NASTY} #{n}") for n in range(600)]
    messages = alerts.compose(events, {}, NOW, AlertSettings(max_items=1000))
    assert len(messages) > 1
    assert all(len(m.text) <= 4096 for m in messages)
    assert len({m.key for m in messages}) == len(messages)
    lines = [line for m in messages for line in m.text.split("\n")]
    assert [line for line in lines if "is failing" in line] == [
        line for line in "\n".join(m.text for m in messages).split("\n") if "is failing" in line
    ]
    names = [line.split("#")[1].split("<")[0] for line in lines if "is failing" in line]
    assert names == [str(n) for n in range(600)]  # nothing lost, order kept
    for m in messages:
        parse_html(m.text, strict_ampersand=True)


def test_an_over_long_line_is_cut_outside_tags_and_entities_and_each_piece_is_valid():
    line = "<b>" + "&amp;x" * 500 + '</b> <a href="https://e.com/?q=1">' + "&lt;" * 900 + "</a>"
    pieces = alerts.split_message(line, limit=1000)
    assert len(pieces) > 3
    assert all(len(piece) <= 1000 for piece in pieces)
    text = "".join(parse_html(piece, strict_ampersand=True).text for piece in pieces)
    assert text == parse_html(line).text


def test_short_text_stays_one_piece():
    assert alerts.split_message("a\nb", 4096) == ["a\nb"]


# ---- reminders -----------------------------------------------------------------------------------


def test_a_reminder_is_due_exactly_every_interval_after_the_last_alert():
    sheets = {"s1": bad_sheet(NOW - timedelta(hours=10))}
    memory: dict = {}
    alerts.note_alerts(memory, [failing("s1")], NOW)
    every = timedelta(hours=4)
    assert alerts.due_reminders(sheets, memory, NOW + every - timedelta(seconds=1), every) == []
    assert alerts.due_reminders(sheets, memory, NOW + every, every) == ["s1"]
    alerts.mark_reminded(memory, ["s1"], {}, NOW + every)
    assert alerts.due_reminders(sheets, memory, NOW + every + timedelta(hours=3), every) == []
    assert alerts.due_reminders(sheets, memory, NOW + 2 * every, every) == ["s1"]


def test_reminders_skip_muted_and_healthy_spreadsheets_and_count_from_going_bad_when_never_told():
    sheets = {
        "bad": bad_sheet(NOW - timedelta(hours=5)),
        "muted": bad_sheet(NOW - timedelta(hours=5)),
        "fine": SheetHealth(health="ok"),
        "fresh": bad_sheet(NOW - timedelta(hours=1)),
    }
    assert alerts.due_reminders(sheets, {}, NOW, timedelta(hours=4), muted={"muted"}) == ["bad"]


def test_recovery_clears_the_alert_memory():
    memory: dict = {}
    alerts.note_alerts(memory, [failing("s1")], NOW)
    assert "s1" in memory["alerted"]
    alerts.note_alerts(memory, [recovered("s1")], NOW)
    assert memory["alerted"] == {}


def test_a_reminder_lists_how_long_each_has_been_failing():
    sheets = {"s1": bad_sheet(NOW - timedelta(hours=5))}
    [message] = alerts.compose_reminder(["s1"], sheets, {"s1": NASTY}, NOW, AlertSettings())
    parsed = parse_html(message.text, strict_ampersand=True)
    assert "1 still failing" in parsed.text and f"{NASTY} failing for 5h" in parsed.text


# ---- summaries -----------------------------------------------------------------------------------


def test_summary_policy_on_change_every_round_and_off():
    changed = {"round": {"id": "r1", "changes": 2}}
    quiet = {"round": {"id": "r1", "changes": 0}}
    assert alerts.summary_due("on_change", True, "r1", changed)
    assert not alerts.summary_due("on_change", True, "r1", quiet)
    assert not alerts.summary_due("on_change", False, "r1", changed)  # round not finished
    assert alerts.summary_due("every_round", True, "r1", quiet)
    assert not alerts.summary_due("every_round", True, "r1", {**quiet, "summarized_round": "r1"})
    assert not alerts.summary_due("off", True, "r1", changed)


def test_summary_and_digest_list_what_is_failing_first_then_counts():
    sheets = {
        "old": bad_sheet(NOW - timedelta(days=2)),
        "new": bad_sheet(NOW - timedelta(hours=1), "error"),
        "ok": SheetHealth(health="ok"),
        "muted": bad_sheet(NOW - timedelta(days=9)),
    }
    overview = alerts.Overview(
        sheets, {"old": "Old <one>"}, dlq_size=1, open_breakers=2, muted=frozenset({"muted"})
    )
    settings = AlertSettings(timezone="Europe/Berlin")
    [digest] = alerts.compose_digest(overview, NOW, settings)
    text = parse_html(digest.text, strict_ampersand=True).text
    assert text.index("Old <one> failing for 2d") < text.index("new not readable for 1h") < text.index("ok 1")
    assert "dead letters 1 · breakers open 2 · muted 1" in text
    assert "muted" not in text.split("ok 1")[0]
    assert "2026-03-02 13:00 Europe/Berlin" in text
    [summary] = alerts.compose_summary("r7", overview, NOW, settings)
    assert summary.key == "summary:r7"
    assert "fail 1 · error 1" in summary.text


# ---- the digest's timing -------------------------------------------------------------------------


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


BERLIN = "Europe/Berlin"
NINE = time(9, 0)


def test_digest_boundaries_just_before_at_and_after_the_local_time():
    last = format_utc(at("2026-03-01T08:00:00+00:00"))  # yesterday's 09:00 CET
    assert not alerts.digest_due(at("2026-03-02T07:59:59+00:00"), last, NINE, BERLIN)
    assert alerts.digest_due(at("2026-03-02T08:00:00+00:00"), last, NINE, BERLIN)
    assert alerts.digest_due(at("2026-03-02T08:00:01+00:00"), last, NINE, BERLIN)
    sent = format_utc(at("2026-03-02T08:00:30+00:00"))
    assert not alerts.digest_due(at("2026-03-02T23:00:00+00:00"), sent, NINE, BERLIN)


def test_digest_follows_local_time_across_the_spring_dst_change():
    # 2026-03-29: Berlin goes from CET (UTC+1) to CEST (UTC+2): 09:00 local is 07:00 UTC, not 08:00.
    last = format_utc(at("2026-03-28T08:00:00+00:00"))
    assert not alerts.digest_due(at("2026-03-29T06:59:59+00:00"), last, NINE, BERLIN)
    assert alerts.digest_due(at("2026-03-29T07:00:00+00:00"), last, NINE, BERLIN)
    assert alerts.digest_slot(at("2026-03-29T12:00:00+00:00"), NINE, BERLIN) == at(
        "2026-03-29T07:00:00+00:00"
    )


def test_digest_follows_local_time_across_the_autumn_dst_change():
    # 2026-10-25: back to CET; 09:00 local is 08:00 UTC again (07:00 UTC the day before).
    last = format_utc(at("2026-10-24T07:00:00+00:00"))
    assert not alerts.digest_due(at("2026-10-25T07:30:00+00:00"), last, NINE, BERLIN)
    assert alerts.digest_due(at("2026-10-25T08:00:00+00:00"), last, NINE, BERLIN)


def test_a_digest_time_skipped_or_repeated_by_dst_fires_once_that_day():
    gap = time(2, 30)  # does not exist on 2026-03-29 in Berlin: it happens at 03:30 CEST (01:30 UTC)
    assert alerts.digest_slot(at("2026-03-29T05:00:00+00:00"), gap, BERLIN) == at("2026-03-29T01:30:00+00:00")
    twice = time(2, 30)  # happens twice on 2026-10-25: the first one (CEST, 00:30 UTC) counts
    slot = alerts.digest_slot(at("2026-10-25T05:00:00+00:00"), twice, BERLIN)
    assert slot == at("2026-10-25T00:30:00+00:00")
    assert not alerts.digest_due(at("2026-10-25T01:30:00+00:00"), format_utc(slot), twice, BERLIN)


def test_after_days_without_runs_one_digest_is_owed_not_one_per_day():
    last = format_utc(at("2026-03-01T08:00:00+00:00"))
    now = at("2026-03-05T10:00:00+00:00")
    assert alerts.digest_due(now, last, NINE, BERLIN)
    assert not alerts.digest_due(now, format_utc(now), NINE, BERLIN)


def test_no_digest_time_means_no_digest_and_a_bad_zone_is_refused_at_config_time():
    assert not alerts.digest_due(NOW, None, None, "UTC")
    with pytest.raises(Exception, match="Mars"):
        AlertSettings(timezone="Mars/Olympus")
    with pytest.raises(ValueError, match="summary"):
        AlertSettings(summary="sometimes")


def test_readable_again_but_failing_is_still_a_failure_and_stays_remembered():
    back_but_bad = event(
        ev.RECOVERED,
        "s1",
        "s1",
        down_for_seconds=600,
        health="fail",
        last_error={},
        findings=[FINDING],
    )
    [message] = alerts.compose([back_but_bad], {}, NOW, AlertSettings())
    assert "can be read again after 10m but is failing: stock: below 10 (A1)" in message.text
    memory: dict = {}
    alerts.note_alerts(memory, [failing("s1")], NOW)
    alerts.note_alerts(memory, [back_but_bad], NOW)
    assert "s1" in memory["alerted"]
