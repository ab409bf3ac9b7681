"""A spreadsheet's tags travel with the events about it and show in the alert as hashtags."""

from __future__ import annotations

from notify_helpers import NOW

from monitor.engine import events as ev
from monitor.engine.fleet import Fleet
from monitor.engine.health import FAIL, OK
from monitor.notify.alerts import compose_alert
from monitor.notify.settings import AlertSettings
from sheet_sandbox.telegram_html import parse_html


def test_the_alert_line_shows_the_spreadsheets_tags_as_hashtags():
    event = ev.HealthChanged(at=NOW, run_id="run-1", spreadsheet_id="s1", name="Store 1",
                             tags=("moscow", "north-west <b>"), previous=OK, current=FAIL)
    [message] = compose_alert([event], Fleet({}), AlertSettings())
    parsed = parse_html(message.text, strict_ampersand=True)  # Telegram's parser accepts it
    line = next(line for line in parsed.text.split("\n") if "Store 1" in line)
    assert "Store 1 #moscow #north_west__b_" in line


def test_an_event_stored_before_tags_were_reads_back_without_them():
    from pydantic import TypeAdapter

    stored = {"at": "2026-01-01T00:00:00.000Z", "run_id": "r", "spreadsheet_id": "s1", "name": "Store 1",
              "previous": "ok", "current": "fail"}
    assert TypeAdapter(ev.HealthChanged).validate_python(stored).tags == ()
