"""How messages say things, pure: durations in words, counts with their plural, moments with their
zone, findings led by their tab, links to a tab's cell, reasons never cut mid-sentence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.core.durations import human_duration
from monitor.core.errors import ErrorInfo
from monitor.core.remedies import problem, remedy
from monitor.core.wording import counted
from monitor.engine.health import Finding, Tab, located
from monitor.engine.heartbeat import RunSummary
from monitor.notify.messages import esc, findings_text, sentences, since_text, tab_url, utc_text
from monitor.watchdog.judge import STATE_UNREADABLE, RunnerReading, Verdict, WatchdogSettings, judge_runner
from monitor.watchdog.outages import WatchdogMemory, advance

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
REF = Finding("formula_errors Stock!A1:H500", "formula_errors", "fail",
              "3 cells show #REF! (Stock!H214, Stock!H215, Stock!H216)",
              ("Stock!H214", "Stock!H215", "Stock!H216"))


@pytest.mark.parametrize(("seconds", "said"), [
    (1, "1 second"), (45, "45 seconds"), (270, "4 minutes and 30 seconds"), (600, "10 minutes"),
    (3600, "1 hour"), (7500, "2 hours and 5 minutes"), (86400, "1 day"), (97200 + 59, "1 day and 3 hours"),
    (45 * 86400, "45 days"),
])
def test_durations_are_said_in_words_with_two_units_at_most(seconds, said):
    assert human_duration(seconds) == said


def test_counts_take_the_plural_except_for_exactly_one():
    assert [counted(n, "task") for n in (0, 1, 2)] == ["0 tasks", "1 task", "2 tasks"]
    assert counted(3, "entry", "entries") == "3 entries"


def test_a_moment_is_shown_one_way_with_its_zone_and_how_long_ago():
    assert utc_text(NOW) == "2026-03-02 12:00 UTC"
    assert since_text(NOW - timedelta(minutes=90), NOW) == "2026-03-02 10:30 UTC (1 hour and 30 minutes ago)"


def test_a_finding_leads_with_its_tab_and_the_problem_not_the_checks_generated_name():
    assert findings_text([REF]) == "Stock: 3 cells show #REF! (H214, H215, H216)"


def test_a_finding_without_cells_takes_its_tab_from_the_range_it_was_named_after():
    empty = Finding("not_empty 'Daily log'!A2:A", "not_empty", "fail",
                    "no non-empty rows (at least 1 required)", tab="Daily log")
    assert findings_text([empty]) == "Daily log: no non-empty rows (at least 1 required)"
    undefined = Finding("threshold min Stock!F2:F", "threshold", "fail", "no min: the range is empty",
                        tab="Stock")
    assert findings_text([undefined]) == "Stock: no min: the range is empty"


def test_a_check_the_admin_named_is_named_after_its_tab():
    named = Finding("low stock", "threshold", "warn", "min 3 < 5", ("Stock!F7",))
    assert findings_text([named]) == "Stock, “low stock”: min 3 &lt; 5 (F7)"
    after_its_tab = Finding("stock", "threshold", "warn", "min 3 < 5", ("Stock!F7",))
    assert findings_text([after_its_tab]) == "Stock: min 3 &lt; 5 (F7)"  # said once


def test_with_the_tabs_id_known_the_tab_links_to_its_first_bad_cell():
    [found] = located((REF,), (Tab("Sales", 7), Tab("Stock", 123)))
    assert found.gid == 123
    text = findings_text([found], spreadsheet_id="1abc")
    url = "https://docs.google.com/spreadsheets/d/1abc/edit#gid=123&amp;range=H214"
    assert text.startswith(f'<a href="{url}">Stock</a>: 3 cells show #REF!')
    assert tab_url("1abc", 0, "H214") == "https://docs.google.com/spreadsheets/d/1abc/edit#gid=0&range=H214"


def test_more_findings_than_shown_are_counted_in_words():
    assert findings_text([REF, REF, REF], limit=1).endswith("; +2 more problems")


def test_each_refusal_says_what_is_wrong_in_words():
    forbidden = ErrorInfo("permanent", "The caller does not have permission", 403, "PERMISSION_DENIED",
                          account="mon@p.iam.gserviceaccount.com")
    assert problem(forbidden) == "it is not shared with the service account mon@p.iam.gserviceaccount.com"
    assert remedy(forbidden).startswith("share the spreadsheet with mon@p.iam.gserviceaccount.com")
    renamed = ErrorInfo("permanent", "Unable to parse range: Stock!A1", 400, "INVALID_ARGUMENT", "Stock!A1",
                        tabs=("Stock 2026",))
    assert problem(renamed) == "the tab “Stock” is missing or was renamed (the config reads Stock!A1)"
    assert remedy(renamed).endswith("tabs found: “Stock 2026”")
    cells_wrong = ErrorInfo("permanent", "Unable to parse range: Stock!A1:ZZZZZZ1", 400, "INVALID_ARGUMENT",
                            "Stock!A1:ZZZZZZ1", tabs=("Stock",))
    assert problem(cells_wrong) == "Google cannot read the range Stock!A1:ZZZZZZ1 of the tab “Stock”"
    assert remedy(cells_wrong) == "fix the range in the config; tabs found: “Stock”"
    gone = ErrorInfo("permanent", "Requested entity was not found.", 404, "NOT_FOUND")
    assert problem(gone) == "no spreadsheet has this id (it was deleted, or the id in the config is wrong)"


def test_a_long_text_keeps_whole_sentences():
    text = "First sentence. Second one names `mv /tmp/a /tmp/b`. Third."
    assert sentences(text, 100) == text
    assert sentences(text, 50) == "First sentence. …"
    assert sentences("one long sentence without an end", 12) == "one long…"


def test_the_watchdogs_unreadable_state_alert_keeps_the_commands_it_gives_whole():
    commands = " ".join(f"`mv /var/lib/sheet-monitor/file{n}.json /var/lib/sheet-monitor/file{n}.broken`"
                        for n in range(8))
    reason = f"the state file cannot be read: The state cannot be loaded. To start over, e.g. {commands}."
    settings = WatchdogSettings(timedelta(minutes=15), timedelta(hours=4), timedelta(minutes=5), 3)
    [message] = advance(WatchdogMemory(), Verdict(STATE_UNREADABLE, reason), NOW, settings).messages
    assert commands + "." in message.text


def test_a_long_value_in_a_message_is_shortened_to_whole_sentences():
    description = "Forbidden: bot was kicked from the group chat. " + "Ask an admin to add it back. " * 12
    shortened = "Forbidden: bot was kicked from the group chat. Ask an admin to add it back. …"
    assert esc(description, 100) == shortened


def test_the_watchdog_counts_failed_runs_with_their_plural():
    failed = RunSummary("run-1", NOW - timedelta(minutes=4), NOW - timedelta(minutes=1), "degraded")
    settings = WatchdogSettings(timedelta(minutes=15), timedelta(hours=4), timedelta(minutes=5), 1)
    verdict = judge_runner(RunnerReading(exists=True, runs=(failed,)), NOW, settings)
    assert verdict.reason == "the last 1 run did not end well (degraded)"


def test_a_missing_column_reads_as_the_header_row_on_its_tabs_line():
    missing = Finding("missing Qty Stock!A1:H500", "missing", "fail",
                      "column 'Qty' not found in the header row (Stock!1:1); found: SKU, Quantity",
                      ("Stock!1:1",))
    assert findings_text([missing]) == (  # as sent: HTML-escaped
        "Stock: column &#x27;Qty&#x27; not found in the header row (1:1); found: SKU, Quantity")
