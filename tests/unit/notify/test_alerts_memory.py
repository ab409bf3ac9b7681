"""The alert memory, pure: who was told what and when, and the reminders."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from notify_helpers import FINDING, NASTY, NOW, bad_since, came_back, overview_of, stored, went_bad

from monitor.core.errors import ErrorInfo
from monitor.engine.dlq import DeadLetter
from monitor.engine.events import BreakerOpened, ReadableAgain
from monitor.engine.health import ERROR, FAIL, OK, WARN, SheetHealth
from monitor.engine.mutes import Mute
from monitor.engine.tasks import Task
from monitor.notify import memory as told
from monitor.notify.digest import compose_reminder
from monitor.notify.documents import Alerted, AlertMemory, RoundChanges
from monitor.notify.settings import AlertSettings
from sheet_sandbox.telegram_html import parse_html

EVERY = timedelta(hours=4)


def test_a_reminder_is_due_exactly_every_interval_after_the_last_alert():
    health = {"s1": bad_since(NOW - timedelta(hours=10))}
    memory, _ = told.note_alerts(AlertMemory(), [went_bad("s1")], NOW)
    assert told.due_reminders(health, health, memory, NOW + EVERY - timedelta(seconds=1), EVERY) == []
    assert told.due_reminders(health, health, memory, NOW + EVERY, EVERY) == ["s1"]
    memory = told.mark_reminded(memory, ["s1"], {}, NOW + EVERY)
    assert told.due_reminders(health, health, memory, NOW + EVERY + timedelta(hours=3), EVERY) == []
    assert told.due_reminders(health, health, memory, NOW + 2 * EVERY, EVERY) == ["s1"]


def test_reminders_skip_muted_and_healthy_spreadsheets_and_count_from_going_bad_when_never_told():
    health = {
        "bad": bad_since(NOW - timedelta(hours=5)),
        "muted": bad_since(NOW - timedelta(hours=5)),
        "fine": SheetHealth(OK),
        "fresh": bad_since(NOW - timedelta(hours=1)),
        "unreadable": bad_since(NOW - timedelta(hours=4), ERROR),
        "no start known": SheetHealth(FAIL),
    }
    failing = overview_of(health, mutes={"muted": Mute(until=NOW + EVERY, reason="moving")}).fleet.failing
    assert told.due_reminders(failing, health, AlertMemory(), NOW, EVERY) == [
        "bad",
        "no start known",
        "unreadable",
    ]


def test_alerting_remembers_the_name_people_were_told_and_recovery_forgets_it():
    memory, worthy = told.note_alerts(AlertMemory(), [went_bad("s1", NASTY)], NOW)
    assert memory.alerted == {"s1": Alerted(NOW, NASTY)} and worthy == 1
    memory, worthy = told.note_alerts(memory, [came_back("s1")], NOW)
    assert memory.alerted == {} and worthy == 1


def test_a_breaker_leaves_who_is_bad_as_it_was_and_a_warning_is_remembered_as_told():
    memory, _ = told.note_alerts(AlertMemory(), [went_bad("s1")], NOW)
    opened = BreakerOpened(
        at=NOW,
        run_id="r",
        spreadsheet_id="s1",
        name="s1",
        opened_at=NOW,
        consecutive_failures=3,
        cooldown_seconds=60,
        probe_at=NOW,
    )
    warned = replace(went_bad("s2"), current=WARN)
    again, worthy = told.note_alerts(memory, [opened, warned], NOW + timedelta(hours=1))
    assert again.alerted == memory.alerted and worthy == 2  # both were told, neither changes who is bad
    assert set(again.warned) == {"s2"}  # so that its "ok again" is heard


def test_muted_spreadsheets_are_neither_remembered_nor_counted():
    memory, worthy = told.note_alerts(AlertMemory(), [went_bad("m"), went_bad("s")], NOW, muted={"m"})
    assert set(memory.alerted) == {"s"} and worthy == 1


def test_readable_again_but_failing_is_still_a_failure_and_stays_remembered():
    back_but_bad = ReadableAgain(
        at=NOW,
        run_id="r",
        spreadsheet_id="s1",
        name="s1",
        down_for_seconds=600,
        health=FAIL,
        findings=(FINDING,),
    )
    memory, _ = told.note_alerts(AlertMemory(), [went_bad("s1")], NOW)
    memory, _ = told.note_alerts(memory, [back_but_bad], NOW)
    assert "s1" in memory.alerted


def test_spreadsheets_no_longer_bad_or_configured_are_forgotten():
    memory, _ = told.note_alerts(AlertMemory(), [went_bad("bad"), went_bad("fixed"), went_bad("gone")], NOW)
    health = {"bad": bad_since(NOW), "fixed": SheetHealth(OK)}
    assert set(told.forget_healthy(memory, health).alerted) == {"bad"}
    kept = told.forget_healthy(told.forget_healthy(memory, health), health)
    # Nothing more to forget: the same value, so nothing to save.
    assert told.forget_healthy(kept, health) is kept


def test_a_reminder_keeps_the_name_it_was_told_by_when_the_config_no_longer_has_one():
    memory, _ = told.note_alerts(AlertMemory(), [went_bad("s1", "Stock")], NOW)
    memory = told.mark_reminded(memory, ["s1", "s2"], {"s2": "Sales"}, NOW + EVERY)
    assert memory.alerted == {"s1": Alerted(NOW + EVERY, "Stock"), "s2": Alerted(NOW + EVERY, "Sales")}
    assert stored(memory) == memory  # what the state file keeps


def test_a_reminder_lists_how_long_each_has_been_failing_and_why():
    health = {"s1": bad_since(NOW - timedelta(hours=5)), "s2": bad_since(NOW - timedelta(minutes=18), ERROR)}
    not_shared = ErrorInfo("permanent", "The caller does not have permission", 403, "PERMISSION_DENIED",
                           account="sm@acme.iam.gserviceaccount.com")
    task = Task(id="t", target="s2", round_id="r", created_at=NOW)
    letter = DeadLetter("s2", "Sales", task, not_shared, NOW, NOW)
    dead_lettered = {"s1": health["s1"], "s2": replace(health["s2"], findings=())}  # a DLQ verdict has none
    view = overview_of(dead_lettered, {"s1": NASTY, "s2": "Sales"}, dlq={"s2": letter})
    [message] = compose_reminder(["s1", "s2"], view, NOW, AlertSettings())
    parsed = parse_html(message.text, strict_ampersand=True)
    assert "2 still failing" in parsed.text
    assert f"{NASTY} failing for 5 hours: “stock”: below 10 (A1)" in parsed.text
    assert ("Sales cannot be read for 18 minutes: it is not shared with the service account "
            "sm@acme.iam.gserviceaccount.com. To fix: share the spreadsheet with that e-mail") in parsed.text
    assert compose_reminder([], view, NOW, AlertSettings()) == []


def test_a_long_reminder_lists_max_items_and_says_where_the_rest_are():
    health = {f"s{n}": bad_since(NOW - timedelta(hours=5)) for n in range(5)}
    [message] = compose_reminder(sorted(health), overview_of(health), NOW, AlertSettings(max_items=2))
    assert message.text.split("\n")[-1] == "+3 more: <code>sheet-monitor sheets</code> lists them all"
    assert message.key == "reminder:2026-03-02T12:00:00.000Z"


def test_alert_worthy_events_are_counted_per_round():
    memory = told.count_round_changes(AlertMemory(), "r1", 2)
    memory = told.count_round_changes(memory, "r1", 1)
    assert memory.round == RoundChanges("r1", 3)
    assert told.count_round_changes(memory, "r1", 0) is memory
    assert told.count_round_changes(memory, "r2", 0).round == RoundChanges("r2", 0)


def test_names_come_from_the_config_then_the_dead_letters_then_what_people_were_told():
    memory, _ = told.note_alerts(AlertMemory(), [went_bad("a", "told a"), went_bad("b", "told b")], NOW)
    task = Task(id="t", target="b", round_id="r", created_at=NOW)
    letter = DeadLetter("b", "dlq b", task, ErrorInfo("permanent", "gone"), NOW, NOW)
    names = told.known_names(memory, {"b": letter, "c": letter}, {"c": "config c"})
    assert names == {"a": "told a", "b": "dlq b", "c": "config c"}
