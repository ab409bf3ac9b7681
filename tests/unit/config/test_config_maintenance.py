"""[[maintenance]] tables and [alerts] escalation in the config: resolved to what they cover, on the
team's clock, and every mistake reported at its line with the fix."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest
from config_fixtures import FULL, SHEET_A, SHEET_B, error_of, load, secrets_folder

from monitor.notify.settings import AlertSettings


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


WINDOWS = """
[[maintenance]]
every = "sunday 02:00"
for = "2h"
tags = ["moscow"]
reason = "weekly backup"

[[maintenance]]
start = "2026-03-08 02:00"
end = 2026-03-08T04:00:00
sheets = ["Sales North"]
reason = "moving servers"

[[maintenance]]
start = "2026-03-08T02:00+00:00"
end = "2026-03-08T03:00+00:00"
sheets = ["1Cdef0000000000000000000000000000000000000bb", "Store 014"]
reason = "both, by id and by name"

[[maintenance]]
every = "day 23:30"
for = "30m"
reason = "the nightly import"
"""


def line_of(text: str, needle: str, nth: int = 1) -> int:
    found = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    return found[nth - 1]


def test_windows_resolve_to_the_spreadsheets_they_cover_on_the_clock_of_alerts_timezone(folder):
    config = load(folder, FULL + WINDOWS)  # [alerts] timezone = "Europe/Moscow" (UTC+3)
    weekly, moving, both, nightly = config.maintenance
    assert (weekly.spreadsheet_ids, weekly.weekday, weekly.at, weekly.length) == (
        (SHEET_A,), 6, time(2, 0), timedelta(hours=2))
    assert (weekly.tags, weekly.reason, weekly.timezone) == (("moscow",), "weekly backup", "Europe/Moscow")
    assert (moving.spreadsheet_ids, moving.start, moving.end) == (
        (SHEET_B,), datetime(2026, 3, 7, 23, 0, tzinfo=UTC), datetime(2026, 3, 8, 1, 0, tzinfo=UTC))
    assert both.spreadsheet_ids == (SHEET_A, SHEET_B)  # in the config's order
    assert both.start == datetime(2026, 3, 8, 2, 0, tzinfo=UTC)  # an offset is that moment, whatever the zone
    assert nightly.spreadsheet_ids is None and nightly.weekday is None  # every spreadsheet, every day
    assert weekly.origin.endswith(f"monitor.toml:{line_of(FULL + WINDOWS, '[[maintenance]]')}")
    assert len({window.key for window in config.maintenance}) == 4
    assert load(folder, FULL + WINDOWS).maintenance[0].key == weekly.key  # stable while unchanged


def test_a_table_edited_is_another_window_and_one_unchanged_keeps_its_key(folder):
    before = load(folder, FULL + WINDOWS).maintenance
    after = load(folder, FULL + WINDOWS.replace("weekly backup", "weekly backup, longer")).maintenance
    assert after[0].key != before[0].key  # told as over, and the edited one as begun
    assert [window.key for window in after[1:]] == [window.key for window in before[1:]]


def test_every_mistake_in_a_window_is_reported_at_its_line_with_the_fix(folder):
    bad = """
[[maintenance]]
start = "2026-03-08 02:00"
end = "2026-03-08 01:00"
reason = "backwards"

[[maintenance]]
every = "sundy 02:00"
for = "2h"
sheets = ["Sales Nrth"]
tags = ["mscow"]
reason = "typos"

[[maintenance]]
every = "day 02:00"
for = "1d"
reason = "never ends"

[[maintenance]]
every = "monday 02:00"
reason = "no length"

[[maintenance]]
start = 2026-03-08
end = "2026-03-08 05:00"
reason = "a date alone"

[[maintenance]]
start = "2026-03-08 02:00"
end = "2026-03-08 05:00"
every = "monday 02:00"
for = "1h"
reason = "both"

[[maintenance]]
reason = "no schedule"
"""
    text = FULL + bad
    message = error_of(folder, text)
    expected = [
        (line_of(text, 'end = "2026-03-08 01:00"'), "maintenance[0].end: end is not after start"),
        (line_of(text, "sundy"), "maintenance[1].every: bad every 'sundy 02:00'"),
        (line_of(text, "Sales Nrth"), "maintenance[1].sheets[0]: no configured spreadsheet is 'Sales Nrth'"),
        (line_of(text, "mscow"), "maintenance[1].tags[0]: no configured spreadsheet has the tag 'mscow'"),
        (line_of(text, 'for = "1d"'), "maintenance[2].for: for (1d) is not shorter than the time between two "
         "occurrences (1d)"),
        (line_of(text, 'every = "monday 02:00"'), "maintenance[3].every: every and for go together: for is "
         "missing"),
        (line_of(text, "start = 2026-03-08"), "maintenance[4].start: start has a date but no time"),
        (line_of(text, 'for = "1h"'), "maintenance[5].for: a window is either once (start, end) or "
         "recurring"),
        (line_of(text, "[[maintenance]]", 7), "maintenance[6]: a maintenance window has no schedule"),
    ]
    for line, said in expected:
        assert f"monitor.toml:{line}: {said}" in message, said
    assert "did you mean 'Sales North'?" in message and "did you mean 'moscow'?" in message
    assert 'every = "sunday 02:00" (or "day 02:00") and for = "2h"' in message  # the fix shows both forms


def test_a_name_two_spreadsheets_share_is_refused_with_their_ids(folder):
    text = FULL.replace('name = "Sales North"', 'name = "Store 014"') + """
[[maintenance]]
every = "day 01:00"
for = "1h"
sheets = ["Store 014"]
reason = "ambiguous"
"""
    message = error_of(folder, text)
    assert (f"maintenance[0].sheets[0]: 'Store 014' is the name of 2 spreadsheets ({SHEET_A}, {SHEET_B})"
            in message)


def test_escalation_keys_default_to_off_and_bad_ones_are_reported_at_their_line(folder):
    alerts = FULL.index('reminder_every = "4h"\n\n[watchdog]') + len('reminder_every = "4h"\n')
    config = load(folder, FULL)
    off = config.alerts
    assert (off.escalate_after, off.escalate_to_chat, off.escalate_to_thread) == (None, None, None)
    on = load(folder, FULL[:alerts] + 'escalate_after = "90m"\nescalate_to_chat = -1003333\n' + FULL[alerts:])
    assert (on.alerts.escalate_after, on.alerts.escalate_to_chat) == (timedelta(minutes=90), "-1003333")
    assert AlertSettings.from_config(on.alerts).escalate_after == timedelta(minutes=90)
    text = FULL[:alerts] + 'escalate_after = "2"\nescalate_to_thread = 0\n' + FULL[alerts:]
    message = error_of(folder, text)
    where = f"monitor.toml:{line_of(text, 'escalate_after')}"
    assert f"{where}: alerts.escalate_after: bad duration '2'" in message
    assert 'or "off"' in message
    assert f"monitor.toml:{line_of(text, 'escalate_to_thread')}: alerts.escalate_to_thread:" in message
    no_chat = (FULL[:alerts] + "escalate_to_thread = 5\n" + FULL[alerts:]).replace(
        'chat_id = "-1001234567890"\n', "")
    message = error_of(folder, no_chat, env={})
    assert "alerts.escalate_to_thread: escalate_to_thread names a topic of the default chat" in message
