"""The arithmetic of a round per Google Cloud project: rates, round times, credentials to add, reads in
flight. Pure functions, checked against figures worked out by hand."""

from __future__ import annotations

import pytest

from monitor.engine.concurrency import reads_in_flight, round_time_at_latency
from monitor.engine.quota import Growth, credentials_needed, round_estimate, sustained_rate


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


@pytest.mark.parametrize("rate, seconds, ceiling, expected", [
    (5.0, 0.4, 16, 3),  # 300/min at 0.4 s: 2 waiting on answers, one more so no slot idles
    (5.0, 0.2, 16, 2),
    (1.0, 0.4, 16, 2),
    (25.0, 0.6, 16, 16),  # 16 + 1 wanted, 16 allowed
    (5.0, 0.0, 16, 1),
    (50.0, 3.0, 4, 4),
    (5.0, 0.4, 1, 1),
])
def test_reads_in_flight(rate, seconds, ceiling, expected):
    assert reads_in_flight(rate, seconds, ceiling) == expected


def test_the_round_at_a_latency_is_the_quotas_unless_the_reads_in_flight_cannot_keep_up():
    assert round_time_at_latency(300, 300, 0.4, 16) == 60.0  # 3 in flight: the quota sets the pace
    assert round_time_at_latency(300, 300, 2.5, 2) == 375.0  # 300 x 2.5 / 2
    assert round_time_at_latency(300, 300, 2.5, 16) == 60.0  # 14 in flight keep up


def test_credentials_needed_are_never_added_to_a_group_that_is_no_known_project():
    alone = "(no project: sa-8.json)"
    growth = credentials_needed(3600, 300, {"east": 5, alone: 1}, closed=[alone])
    assert growth == Growth({}, (5, 1))  # 720/min: 360 now, 360 more in new projects
