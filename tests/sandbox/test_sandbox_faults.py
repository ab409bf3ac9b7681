"""Injected faults: validation, order of consumption, Google's bodies, determinism."""

from __future__ import annotations

import json

import pytest
from concurrency_helpers import gathered_from_threads

from sheet_sandbox.faults import FaultPlan


def outcome(plan: FaultPlan, spreadsheet: str | None = "s1"):
    """The status a request would see (200 = answered normally), plus the added delay."""
    delay, response = plan.take(spreadsheet)
    if response is None:
        return 200, delay
    if response.hang:
        return "hang", delay
    if response.reset:
        return "reset", delay
    return response.status, delay


def statuses(plan: FaultPlan, count: int, spreadsheet: str | None = "s1") -> list:
    return [outcome(plan, spreadsheet)[0] for _ in range(count)]


def test_a_status_sequence_is_answered_in_order_then_normal_service_resumes():
    plan = FaultPlan()
    plan.add({"spreadsheet": "s1", "statuses": [503, 503]})
    assert statuses(plan, 3) == [503, 503, 200]
    assert plan.active() == []


def test_faults_touch_only_their_spreadsheet():
    plan = FaultPlan()
    plan.add({"spreadsheet": "s1", "statuses": [500]})
    assert statuses(plan, 1, "s2") == [200]
    assert statuses(plan, 1, "s1") == [500]


def test_repeat_cycles_forever_like_a_removed_permission():
    plan = FaultPlan()
    plan.add({"spreadsheet": "s1", "statuses": [403], "repeat": True})
    assert statuses(plan, 5) == [403] * 5
    plan.add({"spreadsheet": "s2", "statuses": [503, 200], "repeat": True})
    assert statuses(plan, 4, "s2") == [503, 200, 503, 200]


def test_a_spreadsheets_own_fault_wins_over_the_wildcard():
    plan = FaultPlan()
    plan.add({"spreadsheet": "*", "statuses": [500], "repeat": True})
    plan.add({"spreadsheet": "s1", "statuses": [404]})
    assert statuses(plan, 2) == [404, 500]
    assert statuses(plan, 1, "other") == [500]
    assert statuses(plan, 1, None) == [500]  # requests naming no spreadsheet meet only "*"


def test_specs_for_one_target_queue_up():
    plan = FaultPlan()
    plan.add({"spreadsheet": "s1", "statuses": [503]})
    plan.add({"spreadsheet": "s1", "statuses": [500, 500]})
    assert statuses(plan, 4) == [503, 500, 500, 200]


def test_each_status_carries_googles_body():
    plan = FaultPlan()
    plan.add({"spreadsheet": "s1", "statuses": [503, 500, 403, 404, 429, 502]})
    bodies = [plan.take("s1")[1] for _ in range(6)]
    assert json.loads(bodies[0].body)["error"] == {
        "code": 503, "message": "The service is currently unavailable.", "status": "UNAVAILABLE"}
    assert json.loads(bodies[1].body)["error"] == {
        "code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}
    assert json.loads(bodies[2].body)["error"]["status"] == "PERMISSION_DENIED"
    assert json.loads(bodies[3].body)["error"]["status"] == "NOT_FOUND"
    assert json.loads(bodies[4].body)["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert bodies[5].content_type.startswith("text/html")
    assert b"<title>Error 502 (Server Error)!!1</title>" in bodies[5].body


def test_an_html_429_is_the_front_ends_anti_abuse_page():
    # Google's "We're sorry..." page, served with a 429 instead of the API's JSON (docs/sandbox.md,
    # "Quotas", sources); only a 429 has it, the other statuses keep their bodies.
    plan = FaultPlan()
    plan.add({"spreadsheet": "s1", "statuses": [429, 503], "html": True})
    sorry, unavailable = plan.take("s1")[1], plan.take("s1")[1]
    assert sorry.status == 429 and sorry.content_type.startswith("text/html")
    assert b"<title>Sorry...</title>" in sorry.body
    assert b"your computer or network may be sending automated queries" in sorry.body
    assert json.loads(unavailable.body)["error"]["status"] == "UNAVAILABLE"


def test_latency_hang_and_reset():
    plan = FaultPlan()
    plan.add({"spreadsheet": "slow", "latency_ms": 250})
    assert outcome(plan, "slow") == (200, 0.25)
    assert outcome(plan, "slow") == (200, 0.25)  # latency-only faults last until cleared
    plan.add({"spreadsheet": "hung", "hang": True, "times": 1})
    assert statuses(plan, 2, "hung") == ["hang", 200]
    plan.add({"spreadsheet": "cut", "reset": True, "latency_ms": 10})
    assert outcome(plan, "cut") == ("reset", 0.01)
    plan.add({"spreadsheet": "slow-error", "statuses": [503], "latency_ms": 100})
    assert outcome(plan, "slow-error") == (503, 0.1)


def test_probability_is_deterministic_for_a_seed():
    def run(seed: int) -> list:
        plan = FaultPlan(seed=seed)
        plan.add({"spreadsheet": "*", "statuses": [503], "repeat": True, "probability": 0.3})
        return statuses(plan, 200)

    first = run(7)
    assert first == run(7)
    assert first != run(8)
    assert 30 < first.count(503) < 90  # about 30 %


def test_spared_requests_use_nothing_up():
    plan = FaultPlan(seed=1)
    plan.add({"spreadsheet": "s1", "statuses": [503, 500], "probability": 0.5})
    seen = [s for s in statuses(plan, 100) if s != 200]
    assert seen == [503, 500]


def test_clear_all_or_one_target():
    plan = FaultPlan()
    plan.add({"spreadsheet": "s1", "statuses": [403], "repeat": True})
    plan.add({"spreadsheet": "s2", "statuses": [403], "repeat": True})
    plan.clear("s1")
    assert statuses(plan, 1, "s1") == [200]
    assert statuses(plan, 1, "s2") == [403]
    plan.clear()
    assert statuses(plan, 1, "s2") == [200]


@pytest.mark.parametrize("spec, message", [
    ("503", "must be a JSON object"),
    ({"statuses": [503]}, '"spreadsheet" is required'),
    ({"spreadsheet": "s", "statuses": [503], "colour": "red"}, "unknown fault key"),
    ({"spreadsheet": "s", "statuses": "503"}, '"statuses" must be a list'),
    ({"spreadsheet": "s", "statuses": [302]}, '"statuses" must be a list'),
    ({"spreadsheet": "s", "statuses": [True]}, '"statuses" must be a list'),
    ({"spreadsheet": "s", "latency_ms": -1}, '"latency_ms" must be'),
    ({"spreadsheet": "s", "hang": "yes"}, '"hang" must be true or false'),
    ({"spreadsheet": "s", "statuses": [503], "probability": 0}, '"probability" must be'),
    ({"spreadsheet": "s", "statuses": [503], "probability": 1.5}, '"probability" must be'),
    ({"spreadsheet": "s", "statuses": [503], "hang": True}, "one kind of outcome"),
    ({"spreadsheet": "s", "hang": True, "reset": True}, "one kind of outcome"),
    ({"spreadsheet": "s", "repeat": True, "hang": True}, '"repeat" needs'),
    ({"spreadsheet": "s", "hang": True, "times": 0}, '"times" must be'),
    ({"spreadsheet": "s"}, "must do something"),
    ({"spreadsheet": "s", "statuses": [503], "html": True}, '"html" .* needs 429'),
    ({"spreadsheet": "s", "statuses": [429], "html": 1}, '"html" must be true or false'),
])
def test_bad_specs_are_refused_with_a_clear_message(spec, message):
    plan = FaultPlan()
    with pytest.raises(ValueError, match=message):
        plan.add(spec)
    assert plan.active() == []


def test_concurrent_requests_consume_each_fault_exactly_once():
    plan = FaultPlan()
    plan.add({"spreadsheet": "s1", "statuses": [503] * 500})
    seen = gathered_from_threads(lambda: statuses(plan, 100))
    assert seen.count(503) == 500 and seen.count(200) == 300
