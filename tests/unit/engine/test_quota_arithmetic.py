"""The arithmetic of a round per Google Cloud project: rates, round times, credentials to add, reads in
flight and which credentials wait for their first read. Pure functions, checked against figures worked
out by hand."""

from __future__ import annotations

import pytest

from monitor.engine.concurrency import first_reads_out, reads_in_flight, round_time_at_latency
from monitor.engine.inspect import SheetPlan, sheets_requests
from monitor.engine.pacer import Growth, credentials_needed, round_estimate, sustained_rate


def test_the_sustained_rate_is_each_projects_lesser_quota_summed():
    assert sustained_rate(3) == 180  # an int: that many credentials in one project
    assert sustained_rate([10]) == 300  # one project caps ten credentials
    assert sustained_rate([5, 5]) == 600  # two projects do not share a cap
    assert sustained_rate({"east": 7, "west": 1}, 60, 300) == 360
    assert sustained_rate([2, 2], per_credential=100, per_project=150) == 300
    with pytest.raises(ValueError):
        sustained_rate([])
    with pytest.raises(ValueError):
        sustained_rate([2, 0])


def test_round_estimate_arithmetic():
    assert round(round_estimate(700, 1, 60, 300) / 60, 1) == 11.7
    assert round(round_estimate(700, 3, 60, 300) / 60, 1) == 3.9
    # Past five credentials the project quota (300/min) is the limit; a second project lifts it.
    assert round_estimate(700, 10, 60, 300) == round_estimate(700, 5, 60, 300) == 140.0
    assert round_estimate(700, [5, 5], 60, 300) == 70.0
    assert round_estimate(700, {"east": 9, "west": 1}, 60, 300) == 700 * 60 / 360
    with pytest.raises(ValueError):
        round_estimate(700, 0)


def test_credentials_needed_within_one_project():
    assert credentials_needed(700, 300, {"east": 1}) == Growth({"east": 2})  # 140/min: 3 credentials
    assert credentials_needed(60, 300, {"east": 1}) == Growth({})  # fits already
    assert credentials_needed(750, 300, {"east": 3}) == Growth({})  # 150/min of 180: fits
    assert credentials_needed(1500, 300, {"east": 1}) == Growth({"east": 4})  # exactly the project's 300


def test_credentials_needed_beyond_a_full_project_are_new_projects():
    growth = credentials_needed(5000, 300, {"east": 10})  # 1000/min: 700 more than east's 300
    assert growth == Growth({}, (5, 5, 2)) and growth.credentials == 12
    assert credentials_needed(1501, 300, {"east": 5}) == Growth({}, (1,))  # one read over: one more


def test_credentials_needed_fill_every_project_with_room_in_order_first():
    growth = credentials_needed(3600, 300, {"east": 4, "west": 2, "north": 5})
    # 720/min needed, 240 + 120 + 300 = 660 now: east's room (60) first, then west's.
    assert growth == Growth({"east": 1})
    # 840/min: east's 60, then 120 of west's 180.
    assert credentials_needed(4200, 300, {"east": 4, "west": 2, "north": 5}) == Growth({"east": 1, "west": 2})


def test_credentials_needed_with_a_project_quota_that_is_no_multiple():
    # 60 per credential, 100 per project: a project's second credential adds only 40.
    assert credentials_needed(500, 300, {"east": 1}, 60, 100) == Growth({"east": 1})  # 100/min: 60 + 40
    assert credentials_needed(750, 300, {"east": 1}, 60, 100) == Growth({"east": 1}, (1,))  # 150/min
    assert credentials_needed(1000, 300, {"east": 1}, 60, 100) == Growth({"east": 1}, (2,))


def test_credentials_needed_refuses_no_time_at_all():
    with pytest.raises(ValueError):
        credentials_needed(10, 0, {"east": 1})


@pytest.mark.parametrize("per_window, ceiling, expected", [
    (300, 32, 32),  # a window's allowance of 300: the ceiling, whatever the latency
    (60, 16, 16),
    (10, 16, 10),  # more in flight than a window allows at once would only wait for slots
    (300, 1, 1),
    (0, 16, 1),
])
def test_reads_in_flight_are_the_ceiling_or_a_windows_allowance(per_window, ceiling, expected):
    assert reads_in_flight(per_window, ceiling) == expected


def test_the_round_at_a_latency_is_the_quotas_unless_the_reads_in_flight_cannot_keep_up():
    assert round_time_at_latency(300, 300, 0.4, 16) == 60.0  # 300 x 0.4 / 16 = 7.5 s a window
    assert round_time_at_latency(300, 300, 2.5, 2) == 375.0  # 300 x 2.5 / 2
    assert round_time_at_latency(300, 300, 2.5, 16) == 60.0  # 47 s of sending a window: it keeps up
    assert round_time_at_latency(600, 300, 4.0, 16) == 150.0  # 600 x 4 / 16: the reads set the pace


HOLD = 2.0


def test_a_credential_with_nothing_back_is_held_while_its_read_is_out_for_less_than_the_hold():
    out = [("a", 10.0), ("b", 10.0), ("b", 11.5)]
    assert first_reads_out(out, set(), 10.0, HOLD) == {"a": 2.0, "b": 3.5}  # the latest of b's reads
    assert first_reads_out(out, {"b"}, 10.0, HOLD) == {"a": 2.0}  # b had a read back: its token is here


def test_a_first_read_out_for_the_hold_no_longer_holds_its_credential():
    out = [("a", 10.0)]
    assert first_reads_out(out, set(), 11.999, HOLD) == {"a": pytest.approx(0.001)}
    assert first_reads_out(out, set(), 12.0, HOLD) == {}
    assert first_reads_out(out, set(), 12.5, HOLD) == {}
    assert first_reads_out([], set(), 12.5, HOLD) == {}


def test_a_read_takes_a_slot_for_each_sheets_request_it_sends():
    values = SheetPlan(id="s", name="S", checks=(), ranges=("A1:B2", "C1:C9"))
    assert sheets_requests(values) == 1  # every range in one batchGet (or, with the zone, one get)
    drive_only = SheetPlan(id="s", name="S", checks=(), ranges=())
    assert sheets_requests(drive_only) == 0  # the modified time is Drive's quota, not the Sheets read quota


def test_credentials_needed_are_never_added_to_a_group_that_is_no_known_project():
    alone = "(no project: sa-8.json)"
    growth = credentials_needed(3600, 300, {"east": 5, alone: 1}, closed=[alone])
    assert growth == Growth({}, (5, 1))  # 720/min: 360 now, 360 more in new projects
