"""Round summaries and the daily digest, pure: what they say, when they are owed, that each goes once."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from notify_helpers import NOW, bad_since, overview_of

from monitor.engine.health import ERROR, OK, SheetHealth
from monitor.engine.mutes import Mute
from monitor.engine.tasks import Round
from monitor.notify.digest import (
    Overview,
    compose_digest,
    compose_summary,
    daily_digest,
    digest_due,
    digest_slot,
    round_summary,
    summary_due,
)
from monitor.notify.documents import AlertMemory, RoundChanges
from monitor.notify.settings import AlertSettings
from sheet_sandbox.telegram_html import parse_html


def test_summary_policy_on_change_every_round_and_off():
    changed = AlertMemory(round=RoundChanges("r1", 2))
    quiet = AlertMemory(round=RoundChanges("r1", 0))
    assert summary_due("on_change", True, "r1", changed)
    assert not summary_due("on_change", True, "r1", quiet)
    assert not summary_due("on_change", True, "r2", changed)  # the changes were counted for another round
    assert not summary_due("on_change", False, "r1", changed)  # round not finished
    assert summary_due("every_round", True, "r1", quiet)
    assert not summary_due("every_round", True, "r1", AlertMemory(summarized_round="r1"))
    assert not summary_due("off", True, "r1", changed)


def overview() -> Overview:
    health = {
        "old": bad_since(NOW - timedelta(days=2)),
        "new": bad_since(NOW - timedelta(hours=1), ERROR),
        "ok": SheetHealth(OK),
        "muted": bad_since(NOW - timedelta(days=9)),
        "fresh": SheetHealth(),
    }
    return overview_of(health, {"old": "Old <one>"},
                       mutes={"muted": Mute(until=NOW + timedelta(hours=1), reason="moving")})


def test_summary_and_digest_list_what_is_failing_first_then_the_fleets_counts():
    settings = AlertSettings(timezone="Europe/Berlin")
    [digest] = compose_digest(overview(), NOW, settings)
    text = parse_html(digest.text, strict_ampersand=True).text
    old, new = text.index("Old <one> failing for 2 days"), text.index("new cannot be read for 1 hour")
    assert old < new < text.index("5 spreadsheets: 1 ok")
    assert "Still failing (2):" in text
    assert "5 spreadsheets: 1 ok · 1 cannot be read · 1 failing · 1 muted · 1 not checked yet" in text
    assert "read requests" not in text and "dead letters" not in text  # the monitor's own, not the team's
    assert "muted" not in text.split("5 spreadsheets")[0]
    assert "2026-03-02 13:00 UTC+1 (Europe/Berlin)" in text
    rnd = finished_round()
    [summary] = compose_summary(rnd, overview(), NOW + timedelta(minutes=25), settings)
    assert summary.key == f"summary:{rnd.id}"
    text = parse_html(summary.text, strict_ampersand=True).text
    assert text.startswith("sheet-monitor: round done (started 2026-03-02 12:00 UTC, 25 minutes)")
    assert "Failing now (2):" in text and rnd.id not in text


def test_a_digest_with_nothing_failing_says_so_and_a_long_list_is_cut():
    [digest] = compose_digest(overview_of({"ok": SheetHealth(OK)}), NOW, AlertSettings())
    assert "Nothing is failing." in digest.text and digest.key == "digest:2026-03-02T09:00:00.000Z"
    many = {f"s{n:02d}": bad_since(NOW - timedelta(hours=n + 1)) for n in range(30)}
    [digest] = compose_digest(overview_of(many), NOW, AlertSettings(max_items=5))
    lines = digest.text.split("\n")
    assert lines[2] == "Still failing (30):" and lines[3].startswith("🔴 <a") and ">s29</a>" in lines[3]
    assert lines[8] == "+25 more: <code>sheet-monitor sheets</code> lists them all"
    linked = AlertSettings(max_items=5, report_url="https://ops.example/")
    [digest] = compose_digest(overview_of(many), NOW, linked)
    assert digest.text.split("\n")[8] == (
        '+25 more: see <a href="https://ops.example/">the status page</a> or '
        '<code>sheet-monitor sheets</code>')


def test_a_spreadsheet_bad_since_an_unknown_time_is_listed_first():
    health = {"known": bad_since(NOW - timedelta(days=3)), "unknown": SheetHealth(ERROR)}
    [digest] = compose_digest(overview_of(health), NOW, AlertSettings())
    text = digest.text
    assert text.index(">unknown</a> cannot be read") < text.index(">known</a> failing for 3 days")


def finished_round() -> Round:
    rnd = Round.build(["s1"], NOW)
    for task in list(rnd.tasks.values()):
        rnd.start(task)
        rnd.succeed(task, NOW)
    return rnd


def test_a_round_is_summarised_once_and_the_memory_says_so():
    rnd = finished_round()
    memory = AlertMemory(round=RoundChanges(rnd.id, 1))
    memory, messages = round_summary(memory, rnd, overview(), NOW, AlertSettings())
    assert [m.key for m in messages] == [f"summary:{rnd.id}"] and memory.summarized_round == rnd.id
    assert round_summary(memory, rnd, overview(), NOW, AlertSettings()) == (memory, [])
    assert round_summary(AlertMemory(), None, overview(), NOW, AlertSettings()) == (AlertMemory(), [])


# ---- the digest's timing -------------------------------------------------------------------------


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


BERLIN = "Europe/Berlin"
NINE = time(9, 0)


def test_digest_boundaries_just_before_at_and_after_the_local_time():
    last = at("2026-03-01T08:00:00+00:00")  # yesterday's 09:00 CET
    assert not digest_due(at("2026-03-02T07:59:59+00:00"), last, NINE, BERLIN)
    assert digest_due(at("2026-03-02T08:00:00+00:00"), last, NINE, BERLIN)
    assert digest_due(at("2026-03-02T08:00:01+00:00"), last, NINE, BERLIN)
    sent = at("2026-03-02T08:00:30+00:00")
    assert not digest_due(at("2026-03-02T23:00:00+00:00"), sent, NINE, BERLIN)


def test_digest_follows_local_time_across_the_spring_dst_change():
    # 2026-03-29: Berlin goes from CET (UTC+1) to CEST (UTC+2): 09:00 local is 07:00 UTC, not 08:00.
    last = at("2026-03-28T08:00:00+00:00")
    assert not digest_due(at("2026-03-29T06:59:59+00:00"), last, NINE, BERLIN)
    assert digest_due(at("2026-03-29T07:00:00+00:00"), last, NINE, BERLIN)
    assert digest_slot(at("2026-03-29T12:00:00+00:00"), NINE, BERLIN) == at("2026-03-29T07:00:00+00:00")


def test_digest_follows_local_time_across_the_autumn_dst_change():
    # 2026-10-25: back to CET; 09:00 local is 08:00 UTC again (07:00 UTC the day before).
    last = at("2026-10-24T07:00:00+00:00")
    assert not digest_due(at("2026-10-25T07:30:00+00:00"), last, NINE, BERLIN)
    assert digest_due(at("2026-10-25T08:00:00+00:00"), last, NINE, BERLIN)


def test_a_digest_time_skipped_or_repeated_by_dst_fires_once_that_day():
    gap = time(2, 30)  # does not exist on 2026-03-29 in Berlin: it happens at 03:30 CEST (01:30 UTC)
    assert digest_slot(at("2026-03-29T05:00:00+00:00"), gap, BERLIN) == at("2026-03-29T01:30:00+00:00")
    twice = time(2, 30)  # happens twice on 2026-10-25: the first one (CEST, 00:30 UTC) counts
    slot = digest_slot(at("2026-10-25T05:00:00+00:00"), twice, BERLIN)
    assert slot == at("2026-10-25T00:30:00+00:00")
    assert not digest_due(at("2026-10-25T01:30:00+00:00"), slot, twice, BERLIN)


def test_after_days_without_runs_one_digest_is_owed_not_one_per_day():
    now = at("2026-03-05T10:00:00+00:00")
    assert digest_due(now, at("2026-03-01T08:00:00+00:00"), NINE, BERLIN)
    assert not digest_due(now, now, NINE, BERLIN)


def test_no_digest_time_means_no_digest_and_a_bad_zone_is_refused_at_config_time():
    assert not digest_due(NOW, None, None, "UTC")
    with pytest.raises(Exception, match="Mars"):
        AlertSettings(timezone="Mars/Olympus")
    with pytest.raises(ValueError, match="summary"):
        AlertSettings(summary="sometimes")


def test_the_config_fills_in_the_settings():
    from monitor.config import AlertsConfig

    settings = AlertSettings.from_config(AlertsConfig(timezone="Europe/Berlin", digest_at="off"))
    assert settings.timezone == "Europe/Berlin" and settings.digest_at is None
    assert settings.reminder_every == timedelta(hours=4) and settings.summary == "on_change"
    assert AlertSettings.from_config(AlertsConfig(), max_items=3).max_items == 3


def test_a_fresh_install_waits_for_the_next_digest_time_then_sends_one():
    settings = AlertSettings(digest_at=time(9, 0))
    memory, messages = daily_digest(AlertMemory(), overview(), NOW, settings)
    assert messages == [] and memory.last_digest_at == NOW
    assert daily_digest(memory, overview(), NOW + timedelta(hours=20), settings) == (memory, [])
    tomorrow = NOW + timedelta(hours=21)  # 09:00 UTC
    memory, messages = daily_digest(memory, overview(), tomorrow, settings)
    assert len(messages) == 1 and memory.last_digest_at == tomorrow
