"""The grouped alert, pure: typed events -> one HTML message, collapsed, muted, ranked, split."""

from __future__ import annotations

from datetime import timedelta

import pytest
from notify_helpers import FINDING, NASTY, NOW, came_back, formula_errors, health_changed, went_bad

from monitor.core.errors import ErrorInfo
from monitor.engine import events as ev
from monitor.engine.fleet import Fleet
from monitor.engine.health import ERROR, FAIL, OK, UNKNOWN, WARN, SheetHealth
from monitor.engine.mutes import Mute
from monitor.engine.runner_state import RunnerState
from monitor.notify import render
from monitor.notify.alerts import compose_alert
from monitor.notify.messages import split_message
from monitor.notify.settings import AlertSettings
from sheet_sandbox.telegram_html import parse_html

SHEET = {"at": NOW, "run_id": "run-1"}


def sheet(sid: str, name: str | None = None) -> dict:
    return {**SHEET, "spreadsheet_id": sid, "name": name or sid}


def damaged(key: str, problem: str = "target: Field required") -> ev.StateEntryDamaged:
    return ev.StateEntryDamaged(**SHEET, key=key, problem=problem, set_aside_as=f"damaged/{key}")


def one_of_each() -> list[ev.Event]:
    """One event of every kind, with names and texts that need escaping."""
    error = ErrorInfo("permanent", "Requested entity <was> not found", 404, None, "A1")
    return [
        went_bad("a"),
        came_back("b"),
        ev.DeadLettered(**sheet("c", NASTY), error=error, attempts=3),
        ev.ReadableAgain(**sheet("d"), down_for_seconds=600, health=WARN),
        ev.BreakerOpened(**sheet("e"), opened_at=NOW, consecutive_failures=3, cooldown_seconds=60,
                         probe_at=NOW),
        ev.BreakerClosed(**sheet("f"), down_seconds=3600),
        ev.ApiDegraded(**SHEET, failing_in_a_row=8),
        ev.ApiRecovered(**SHEET, degraded_since=NOW - timedelta(minutes=30)),
        ev.FallingBehind(**SHEET, round_id="r1", round_started_at=NOW, done=5, total=9),
        ev.CrashRecovered(**SHEET, previous_run_id="x", reclaimed=2, poisoned=1),
        ev.StateRestored(**SHEET, reason="the main file is torn"),
        damaged("health/<s&1>", "health: Input should be 'ok', 'warn' or <fail>"),
        ev.DeliveryHalted(**SHEET, since=NOW, status=403, description="Forbidden: <bot> was blocked"),
        ev.SpreadsheetTrashed(**sheet("g", NASTY)),
        ev.SpreadsheetRestored(**sheet("h"), trashed_at=NOW - timedelta(days=2)),
        ev.NoLongerMonitored(**sheet("i", NASTY), was="fail"),
    ]


def lines_of(events: list[ev.Event], **settings) -> list[str]:
    [message] = compose_alert(events, Fleet({}), AlertSettings(**settings))
    return message.text.split("\n")


def test_names_and_values_are_escaped_and_linked():
    [message] = compose_alert([went_bad("abc-1", NASTY, cells=["'<b>'!A1"])], Fleet({}), AlertSettings())
    parsed = parse_html(message.text, strict_ampersand=True)  # Telegram's own parser accepts it
    assert NASTY in parsed.text
    assert "is failing: <b>, “no errors”: 2 cells show #REF! (A1)" in parsed.text  # the tab leads
    links = [e for e in parsed.entities if e["type"] == "text_link"]
    assert links[0]["url"] == "https://docs.google.com/spreadsheets/d/abc-1"


def test_one_run_gives_one_message_with_counts_first_items_and_the_rest_counted():
    events = [went_bad(f"s{n}") for n in range(8)] + [
        came_back("r1"),
        ev.ApiDegraded(**SHEET, failing_in_a_row=8),
    ]
    lines = lines_of(events, max_items=5)
    assert lines[0] == "<b>sheet-monitor: 1 API degraded, 8 new failures, 1 recovered</b>"
    assert "Google API degraded" in lines[3]  # the system problem goes first
    assert sum("is failing" in line for line in lines) == 4
    assert lines[-1] == "+5 more (<code>sheet-monitor sheets</code> shows where each spreadsheet stands)"


def test_under_the_headline_the_alert_counts_what_fails_now_of_the_fleet_without_muted_spreadsheets():
    health = {"a": SheetHealth(FAIL), "b": SheetHealth(ERROR), "c": SheetHealth(OK), "m": SheetHealth(FAIL)}
    state = RunnerState(health=health, mutes={"m": Mute(until=NOW + timedelta(hours=1), reason="x")})
    fleet = Fleet.of(state, ["a", "b", "c", "m"], NOW)
    [message] = compose_alert([went_bad("a")], fleet, AlertSettings(), muted={"m"})
    assert message.text.split("\n")[:2] == ["<b>sheet-monitor: 1 new failure</b>",
                                            "Failing now: 2 of 4 spreadsheets"]


def test_recovery_says_how_long_it_was_down_and_cell_references_are_listed():
    assert "recovered after 2 hours and 5 minutes" in lines_of([came_back("s1", down=7500)])[3]
    assert "(A1, A2, A3, A4, A5 +3)" in lines_of([went_bad("s2", cells=[f"A{n}" for n in range(1, 9)])])[3]


def test_cells_a_finding_message_already_names_are_not_repeated():
    event = health_changed("s", OK, FAIL, findings=(formula_errors(("F7",), "F7 is #REF!"),))
    assert lines_of([event])[3].endswith("is failing: “no errors”: F7 is #REF!")


def test_muted_spreadsheets_alert_nobody():
    [message] = compose_alert([went_bad("muted"), went_bad("loud")], Fleet({}), AlertSettings(),
                              muted={"muted"})
    assert "loud" in message.text and "muted" not in message.text
    assert compose_alert([went_bad("muted")], Fleet({}), AlertSettings(), muted={"muted"}) == []


def test_a_spreadsheet_that_failed_and_came_back_within_a_run_is_told_once_as_recovered():
    lines = lines_of([went_bad("s1"), came_back("s1")])
    assert lines[0] == "<b>sheet-monitor: 1 recovered</b>" and len(lines) == 4


def test_a_breaker_is_its_own_topic_beside_the_spreadsheets_health():
    opened = ev.BreakerOpened(
        **sheet("s1"), opened_at=NOW, consecutive_failures=3, cooldown_seconds=60, probe_at=NOW
    )
    assert lines_of([went_bad("s1"), opened])[0] == "<b>sheet-monitor: 1 new failure, 1 paused</b>"


def test_system_events_are_told_once_per_kind_but_every_damaged_entry_is_told():
    events = [ev.ApiDegraded(**SHEET, failing_in_a_row=n) for n in (5, 9)] + [
        damaged("breaker/a"),
        damaged("dlq/b"),
    ]
    lines = lines_of(events)
    assert lines[0] == "<b>sheet-monitor: 1 API degraded, 2 state entry damaged</b>"
    assert "9 spreadsheets failed" in lines[3]  # the latest of the kind
    assert "breaker/a" in lines[4] and "dlq/b" in lines[5]


def test_events_that_change_nothing_for_people_make_no_message():
    unknown_to_ok = health_changed("s1", UNKNOWN, OK)
    assert compose_alert([unknown_to_ok], Fleet({}), AlertSettings()) == []
    assert compose_alert([], Fleet({}), AlertSettings()) == []


def test_the_same_events_compose_the_same_key_and_other_events_another():
    first = compose_alert([went_bad("s1")], Fleet({}), AlertSettings())
    again = compose_alert([went_bad("s1")], Fleet({}), AlertSettings())
    later = compose_alert([went_bad("s1", at=NOW + timedelta(seconds=1))], Fleet({}), AlertSettings())
    other = compose_alert([went_bad("s2")], Fleet({}), AlertSettings())
    assert first[0].key == again[0].key
    assert len({first[0].key, later[0].key, other[0].key}) == 3


def test_every_event_kind_has_its_own_renderer():
    fallback = render.render.dispatch(ev.Event)
    assert all(render.render.dispatch(kind) is not fallback for kind in ev.EVENT_TYPES)


def test_every_event_kind_renders_as_valid_telegram_html():
    [message] = compose_alert(one_of_each(), Fleet({}), AlertSettings(max_items=100))
    parsed = parse_html(message.text, strict_ampersand=True)
    assert len(message.text.split("\n")) == 3 + 16
    assert "is in Google Drive's trash" in parsed.text and "out of Google Drive's trash" in parsed.text
    assert "Telegram refused messages since 2026-03-02 12:00 UTC" in parsed.text
    assert "<bot> was blocked" in parsed.text
    assert (
        "cannot be read: no spreadsheet has this id (it was deleted, or the id in the config is wrong)."
        in parsed.text
    )
    assert "(Google: 404: Requested entity <was> not found at A1)" in parsed.text
    assert "checks resumed after 1 hour" in parsed.text
    assert "checks paused after 3 failures in a row, next try 2026-03-02 12:00 UTC" in parsed.text
    assert "has 5 of 9 spreadsheets done" in parsed.text and "2 tasks taken over, 1 given up" in parsed.text


def test_a_dead_letter_says_what_to_do_when_googles_words_do_not():
    not_sheets = ErrorInfo("permanent", "This operation is not supported for this document", 400,
                           "FAILED_PRECONDITION")
    unseen = ErrorInfo("permanent", "File not found: 1abc.", 404, "NOT_FOUND")
    outage = ErrorInfo("transient", "The service is currently unavailable.", 503, "UNAVAILABLE")
    events = [ev.DeadLettered(**sheet(sid), error=error, attempts=1)
              for sid, error in (("x", not_sheets), ("d", unseen), ("o", outage))]
    text = parse_html(compose_alert(events, Fleet({}), AlertSettings())[0].text).text
    assert ("x cannot be read: the file is not a Google Sheets spreadsheet. To fix: the file is not a "
            "Google Sheets spreadsheet (an .xlsx or .csv kept in Drive): open it in Google Sheets, "
            "choose File > Save as Google Sheets") in text
    assert "not supported for this document)" in text
    assert ("d cannot be read: Google Drive shows no such file (deleted, or not shared with the service "
            "account). To fix: if the file is not shared") in text
    assert "o could not be read after 1 attempt: 503: The service is currently unavailable." in text
    assert text.count("To fix") == 2


def test_going_to_the_trash_is_told_beside_what_the_same_run_found_in_the_spreadsheet():
    lines = lines_of([ev.SpreadsheetTrashed(**sheet("s1")), went_bad("s1")])
    assert any("is failing" in line for line in lines) and any("trash" in line for line in lines)


def test_api_recovery_says_since_when_google_was_degraded():
    line = lines_of([ev.ApiRecovered(**SHEET, degraded_since=NOW - timedelta(minutes=30))])[3]
    assert line == "✅ Google API answers again (degraded since 2026-03-02 11:30 UTC)"
    assert lines_of([ev.ApiRecovered(**SHEET)])[3].endswith("(degraded since an unknown time)")


def test_a_damaged_state_entry_is_told_with_its_key_its_problem_and_where_it_was_kept():
    [message] = compose_alert([damaged("health/<s&1>", "health: not <ok>")], Fleet({}), AlertSettings())
    text = parse_html(message.text, strict_ampersand=True).text.split("\n")
    assert text[0] == "sheet-monitor: 1 state entry damaged"
    assert text[3] == (
        "🧩 One entry of the state could not be read and was set aside: health/<s&1> (health: not <ok>);"
        " kept as damaged/health/<s&1>"
    )


def test_problems_with_the_monitor_rank_above_spreadsheets_and_recoveries_last():
    events = [came_back("r"), went_bad("f"), damaged("task/x"), ev.ApiDegraded(**SHEET, failing_in_a_row=3)]
    ranked = lines_of(events)[3:]
    assert [
        "Google API" in ranked[0],
        "state" in ranked[1],
        "is failing" in ranked[2],
        "recovered" in ranked[3],
    ] == [True] * 4


def test_readable_again_is_failing_warning_or_recovered_by_what_its_checks_say():
    back = {
        health: ev.ReadableAgain(**sheet("s1"), down_for_seconds=600, health=health, findings=(FINDING,))
        for health in (FAIL, WARN, OK)
    }
    assert lines_of([back[FAIL]])[3].endswith(
        "can be read again after 10 minutes but is failing: “stock”: below 10 (A1)"
    )
    assert lines_of([back[WARN]])[3].endswith(
        "can be read again after 10 minutes, still warns: “stock”: below 10 (A1)"
    )
    assert lines_of([back[OK]])[3].endswith("can be read again after 10 minutes")


@pytest.mark.parametrize(
    ("previous", "current", "says"),
    [
        (OK, ERROR, "could not be checked"),
        (OK, WARN, "warns: Stock, “no errors”: 2 cells show #REF! (F7)"),
        (WARN, OK, "is ok again"),
        (FAIL, WARN, "recovered after 2 hours and 5 minutes, still warns: Stock, “no errors”"),
    ],
)
def test_each_change_of_health_has_its_wording(previous, current, says):
    down = 7500 if previous == FAIL else None
    event = health_changed("s", previous, current, findings=(formula_errors(),), down_for_seconds=down)
    assert says in lines_of([event])[3]


# ---- splitting -----------------------------------------------------------------------------------


def test_six_hundred_items_split_on_line_boundaries_within_the_limit():
    events = [went_bad(f"id{n:04d}", f"{NASTY} #{n}") for n in range(600)]
    messages = compose_alert(events, Fleet({}), AlertSettings(max_items=1000, flood_after=1000))
    assert len(messages) > 1
    assert all(len(m.text) <= 4096 for m in messages)
    assert len({m.key for m in messages}) == len(messages)
    lines = [line for m in messages for line in m.text.split("\n")]
    names = [line.split("#")[1].split("<")[0] for line in lines if "is failing" in line]
    assert names == [str(n) for n in range(600)]  # nothing lost, order kept, no line cut
    for m in messages:
        parse_html(m.text, strict_ampersand=True)


def test_an_over_long_line_is_cut_outside_tags_and_entities_and_each_piece_is_valid():
    line = "<b>" + "&amp;x" * 500 + '</b> <a href="https://e.com/?q=1">' + "&lt;" * 900 + "</a>"
    pieces = split_message(line, limit=1000)
    assert len(pieces) > 3
    assert all(len(piece) <= 1000 for piece in pieces)
    text = "".join(parse_html(piece, strict_ampersand=True).text for piece in pieces)
    assert text == parse_html(line).text


def test_short_text_stays_one_piece():
    assert split_message("a\nb", 4096) == ["a\nb"]
