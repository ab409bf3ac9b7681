"""Maintenance windows, pure, on a ManualClock: when the config's windows are in force (on the team's
clock, across daylight-saving jumps), the chat's started and ended, what the fleet shows, and what the
notifier tells when a window begins and ends while it silences what it covers."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

from monitor.config import MaintenanceWindow
from monitor.core.clock import ManualClock
from monitor.engine.events import HealthChanged
from monitor.engine.fleet import MAINTENANCE, MUTED, Fleet
from monitor.engine.health import FAIL, OK, WARN, SheetHealth
from monitor.engine.maintenance import end_maintenance, in_force, start_maintenance
from monitor.engine.mutes import Mute
from monitor.engine.runner_state import RunnerState
from monitor.notify.destinations import DEFAULT, Destination
from monitor.notify.documents import AlertMemory
from monitor.notify.notifier import compose_all
from monitor.notify.routing import Routing
from monitor.notify.settings import AlertSettings
from sheet_sandbox.telegram_html import parse_html

SUNDAY = datetime(2026, 3, 8, tzinfo=UTC)  # a Sunday
NAMES = {"s1": "Store 001", "s2": "Store 002", "s3": "Store 003"}
QUIET = AlertSettings(summary="off", digest_at=None)


def weekly(at: time, length: timedelta, zone: str = "Europe/Moscow", weekday: int = 6,
           ids: tuple[str, ...] | None = ("s1", "s2")) -> MaintenanceWindow:
    return MaintenanceWindow("cfg-test", "weekly backup", ids, ("moscow",), "monitor.toml:40", zone,
                             weekday=weekday, at=at, length=length)


def once(start: datetime, end: datetime, ids: tuple[str, ...] | None = ("s1", "s2")) -> MaintenanceWindow:
    return MaintenanceWindow("cfg-once", "moving servers", ids, (), "monitor.toml:50", start=start, end=end)


# ---- when the config's windows are in force ---------------------------------------------------------


def test_a_weekly_window_begins_on_the_teams_clock_and_ends_when_its_length_has_passed():
    window = weekly(time(2, 0), timedelta(hours=2))  # Sunday 02:00 in Moscow (UTC+3) is Saturday 23:00 UTC
    begins = datetime(2026, 3, 7, 23, 0, tzinfo=UTC)
    second = timedelta(seconds=1)
    assert window.occurrence_at(begins - second) is None
    assert window.occurrence_at(begins) == (begins, begins + timedelta(hours=2))
    assert window.occurrence_at(begins + timedelta(hours=2) - second) == (begins, begins + timedelta(hours=2))
    assert window.occurrence_at(begins + timedelta(hours=2)) is None
    assert window.occurrence_at(begins + timedelta(days=7)) == (begins + timedelta(days=7),
                                                                begins + timedelta(days=7, hours=2))
    assert window.occurrence_at(begins + timedelta(days=3)) is None  # a Wednesday


def test_a_daily_window_comes_every_day_and_can_run_past_midnight():
    window = weekly(time(23, 30), timedelta(hours=1), zone="UTC", weekday=None)
    for day in range(3):
        night = SUNDAY + timedelta(days=day, hours=23, minutes=30)
        assert window.occurrence_at(night + timedelta(minutes=45)) == (night, night + timedelta(hours=1))
        assert window.occurrence_at(night + timedelta(hours=1)) is None


def test_a_window_whose_time_a_dst_jump_skips_begins_as_far_after_the_jump_and_lasts_its_real_length():
    # Berlin, 2026-03-29: clocks go from 02:00 CET to 03:00 CEST; 02:30 never shows, 03:30 CEST does.
    window = weekly(time(2, 30), timedelta(hours=2), zone="Europe/Berlin")
    begins = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)  # 03:30 CEST
    assert window.occurrence_at(begins - timedelta(seconds=1)) is None
    assert window.occurrence_at(begins) == (begins, begins + timedelta(hours=2))
    # A week earlier (CET) and later (CEST): 02:30 on the clock each time, an hour apart in UTC.
    assert window.occurrence_at(datetime(2026, 3, 22, 1, 30, tzinfo=UTC))[0] == datetime(2026, 3, 22, 1, 30,
                                                                                          tzinfo=UTC)
    assert window.occurrence_at(datetime(2026, 4, 5, 0, 30, tzinfo=UTC))[0] == datetime(2026, 4, 5, 0, 30,
                                                                                         tzinfo=UTC)


def test_a_window_whose_time_happens_twice_in_autumn_begins_the_first_time():
    # Berlin, 2026-10-25: 02:30 shows twice (CEST, then CET); the window begins at the first.
    window = weekly(time(2, 30), timedelta(hours=2), zone="Europe/Berlin")
    first = datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert window.occurrence_at(first) == (first, first + timedelta(hours=2))
    assert window.occurrence_at(first - timedelta(seconds=1)) is None


def test_a_one_off_window_is_in_force_from_its_start_until_its_end_excluded():
    start, end = SUNDAY + timedelta(hours=2), SUNDAY + timedelta(hours=4)
    window = once(start, end)
    moments = (start - timedelta(seconds=1), start, end - timedelta(seconds=1), end)
    assert [window.occurrence_at(moment) is not None for moment in moments] == [False, True, True, False]


# ---- the chat's windows -----------------------------------------------------------------------------


def test_a_window_started_from_the_chat_covers_its_spreadsheets_until_its_end_and_is_then_forgotten():
    clock = ManualClock(SUNDAY)
    state = RunnerState()
    window = start_maintenance(state, clock.now(), clock.now() + timedelta(hours=2), "@ivan",
                               "moving servers", ["s1"], ("moscow",))
    assert (window.by, window.reason, window.spreadsheet_ids, window.tags) == ("@ivan", "moving servers",
                                                                               ("s1",), ("moscow",))
    assert in_force((), state.maintenance, clock.now()) == [window]
    clock.advance(2 * 3600 - 1)
    assert in_force((), state.maintenance, clock.now()) == [window]
    clock.advance(1)
    assert in_force((), state.maintenance, clock.now()) == []
    later = start_maintenance(state, clock.now(), clock.now() + timedelta(minutes=5), "@olga", "check")
    assert state.maintenance.windows == (later,)  # the ended one is dropped by the next change
    assert later.spreadsheet_ids is None  # none named: every spreadsheet


def test_starting_again_over_the_same_spreadsheets_moves_the_end_and_keeps_the_window():
    state = RunnerState()
    first = start_maintenance(state, SUNDAY, SUNDAY + timedelta(hours=1), "@ivan", "moving", ["s1"])
    again = start_maintenance(state, SUNDAY + timedelta(minutes=30), SUNDAY + timedelta(hours=3), "@olga", "")
    other = start_maintenance(state, SUNDAY + timedelta(minutes=31), SUNDAY + timedelta(hours=3), "@olga",
                              "x", ["s1"])
    assert other.key == first.key and other.end == SUNDAY + timedelta(hours=3) and other.reason == "x"
    assert again.key != first.key and len(state.maintenance.windows) == 2
    with pytest.raises(ValueError, match="end after it starts"):
        start_maintenance(state, SUNDAY, SUNDAY, "@ivan", "no time")
    with pytest.raises(ValueError, match="must cover a spreadsheet"):
        start_maintenance(state, SUNDAY, SUNDAY + timedelta(hours=1), "@ivan", "no name matched", [])


def test_ending_from_the_chat_ends_the_chats_windows_and_the_configs_occurrence_until_its_next():
    window = weekly(time(2, 0), timedelta(hours=2))
    begins = datetime(2026, 3, 7, 23, 0, tzinfo=UTC)
    state = RunnerState()
    start_maintenance(state, begins, begins + timedelta(hours=5), "@ivan", "moving", ["s3"])
    now = begins + timedelta(minutes=10)
    assert [w.by for w in in_force([window], state.maintenance, now)] == [None, "@ivan"]
    assert end_maintenance(state, now, "@olga", [window], ["s2"])[0].key.startswith("cfg-test@")
    assert [w.by for w in in_force([window], state.maintenance, now)] == ["@ivan"]  # s3's is not s2's
    assert [w.by for w in end_maintenance(state, now, "@olga", [window])] == ["@ivan"]
    assert in_force([window], state.maintenance, now + timedelta(hours=1)) == []
    assert end_maintenance(state, now, "@olga", [window]) == []
    next_week = begins + timedelta(days=7)
    assert len(in_force([window], state.maintenance, next_week)) == 1  # comes again as planned
    start_maintenance(state, next_week, next_week + timedelta(hours=1), "@ivan", "again")
    assert state.maintenance.ended_early == ()  # the note was kept only until its end


# ---- the fleet ---------------------------------------------------------------------------------------


def test_a_spreadsheet_in_a_window_stands_as_under_maintenance_whatever_its_verdict_and_a_mute_comes_first():
    begins = datetime(2026, 3, 7, 23, 0, tzinfo=UTC)
    state = RunnerState(health={"s1": SheetHealth(FAIL, since=begins), "s2": SheetHealth(OK, since=begins),
                                "s3": SheetHealth(FAIL, since=begins)},
                        mutes={"s2": Mute(until=begins + timedelta(days=1), reason="x")})
    window = weekly(time(2, 0), timedelta(hours=2))
    fleet = Fleet.of(state, NAMES, begins, [window])
    assert fleet.standings == {"s1": MAINTENANCE, "s2": MUTED, "s3": FAIL}
    assert fleet.failing == ["s3"] and fleet.in_maintenance == ["s1"] and fleet.silenced == {"s1", "s2"}
    assert fleet.windows["s1"].end == begins + timedelta(hours=2)
    after = Fleet.of(state, NAMES, begins + timedelta(hours=2), [window])
    assert after.standings == {"s1": FAIL, "s2": MUTED, "s3": FAIL}
    start_maintenance(state, begins, begins + timedelta(hours=3), "@ivan", "moving")  # every spreadsheet
    assert Fleet.of(state, NAMES, begins + timedelta(hours=2)).counts()[MAINTENANCE] == 2


# ---- what the team hears ----------------------------------------------------------------------------


def heard(state: RunnerState, memory: AlertMemory, now: datetime, windows=(), events=(), routing=None,
          settings=QUIET) -> tuple[AlertMemory, dict[Destination, list[str]]]:
    memory, composed = compose_all(state, list(events), memory, settings, NAMES, now, routing,
                                   maintenance=windows)
    return memory, {destination: [parse_html(m.text).text for m in messages]
                    for destination, messages in composed.items()}


def went_bad(sid: str, at: datetime) -> HealthChanged:
    return HealthChanged(at=at, run_id="r", spreadsheet_id=sid, name=NAMES[sid], previous=OK, current=FAIL)


def test_a_window_is_told_once_when_it_begins_silences_what_it_covers_and_its_end_tells_what_fails_now():
    clock = ManualClock(datetime(2026, 3, 7, 22, 55, tzinfo=UTC))
    window = weekly(time(2, 0), timedelta(hours=2))
    state = RunnerState(health={sid: SheetHealth(OK, since=clock.now()) for sid in NAMES})
    memory, said = heard(state, AlertMemory(), clock.now(), [window])
    assert said == {}  # not yet
    clock.advance(5 * 60)
    memory, said = heard(state, memory, clock.now(), [window])
    [text] = said[DEFAULT]
    assert ("🛠 Maintenance until 2026-03-08 01:00 UTC: Store 001, Store 002 (tag #moscow): weekly backup "
            "(silenced until then, still checked)") in text
    clock.advance(5 * 60)
    memory, said = heard(state, memory, clock.now(), [window])
    assert said == {}  # told once
    for sid in ("s1", "s3"):
        state.health[sid] = SheetHealth(FAIL, since=clock.now(), down_since=clock.now())
    memory, said = heard(state, memory, clock.now(), [window],
                         [went_bad("s1", clock.now()), went_bad("s3", clock.now())])
    [text] = said[DEFAULT]
    assert "Store 003 is failing" in text and "Store 001" not in text  # silenced while it lasts
    assert "Failing now: 1 of 3 spreadsheets" in text
    clock.advance(2 * 3600 - 5 * 60 - 1)  # a second before its end (01:00): still silent
    memory, said = heard(state, memory, clock.now(), [window])
    assert said == {}
    clock.advance(1)
    memory, said = heard(state, memory, clock.now(), [window])
    [text] = said[DEFAULT]
    assert "🛠 Maintenance over (weekly backup): 2 spreadsheets (tag #moscow); failing now: Store 001" in text
    assert "s1" in memory.alerted  # told now: reminded from here on, and its recovery will be told
    memory, said = heard(state, memory, clock.now() + timedelta(minutes=5), [window])
    assert said == {}


def test_a_window_that_leaves_the_config_or_is_ended_from_the_chat_is_told_over_at_once():
    begins = datetime(2026, 3, 7, 23, 0, tzinfo=UTC)
    window = weekly(time(2, 0), timedelta(hours=2))
    state = RunnerState(health={sid: SheetHealth(WARN, since=begins) for sid in NAMES})
    memory, _ = heard(state, AlertMemory(), begins, [window])
    memory, said = heard(state, memory, begins + timedelta(minutes=5), [])  # its table was removed
    [text] = said[DEFAULT]
    assert "🛠 Maintenance over (weekly backup): 2 spreadsheets (tag #moscow); warning: Store 001, Store 002" \
        in text
    start_maintenance(state, begins, begins + timedelta(hours=1), "@ivan", "moving servers", ["s3"])
    memory, said = heard(state, memory, begins + timedelta(minutes=10), [])
    assert ("🛠 Maintenance until 2026-03-08 00:00 UTC: Store 003, started by @ivan: moving servers"
            in said[DEFAULT][0])
    end_maintenance(state, begins + timedelta(minutes=15), "@ivan")
    memory, said = heard(state, memory, begins + timedelta(minutes=15), [])
    assert "🛠 Maintenance over (moving servers): 1 spreadsheet; warning: Store 003" in said[DEFAULT][0]


def test_each_chat_hears_of_its_own_spreadsheets_in_a_window_of_every_spreadsheet():
    begins = SUNDAY + timedelta(hours=2)
    window = once(begins, begins + timedelta(hours=1), ids=None)
    state = RunnerState(health={sid: SheetHealth(OK, since=begins) for sid in NAMES})
    moscow = Destination("-1002222222222", 7)
    routing = Routing({"s1": moscow})
    _, said = heard(state, AlertMemory(), begins, [window], routing=routing)
    assert "every spreadsheet (2): moving servers" in said[DEFAULT][0]
    assert "every spreadsheet (1): moving servers" in said[moscow][0]
